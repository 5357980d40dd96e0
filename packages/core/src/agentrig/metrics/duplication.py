"""``duplication``: duplicated code, as syntax trees equal once names and constants are set aside
(type-2 clones) of functions and compound statements at least :data:`MIN_LINES` long."""

from __future__ import annotations

import ast
import hashlib
from collections import defaultdict
from typing import Any

from agentrig.metrics.interface import Metric, SnapshotSources

#: A block shorter than this (lines) is never counted as a clone.
MIN_LINES = 6
_UNITS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.If, ast.For, ast.AsyncFor, ast.While, ast.With,
          ast.AsyncWith, ast.Try, ast.Match)
_SKIP = {"lineno", "col_offset", "end_lineno", "end_col_offset", "ctx", "type_comment"}


def shape(node: ast.AST) -> str:
    """``node``'s structure with identifiers and constant values left out (``x + 1`` and ``y + 2`` agree)."""
    if isinstance(node, ast.Name):
        return "N"
    if isinstance(node, ast.arg):
        return "A"
    if isinstance(node, ast.Constant):
        return f"C{type(node.value).__name__}"
    parts = [type(node).__name__]
    for name, value in ast.iter_fields(node):
        if name in _SKIP or name in ("name", "id", "arg", "attr", "asname", "module"):
            continue
        if isinstance(value, list):
            parts.append("[" + ",".join(shape(v) if isinstance(v, ast.AST) else repr(v) for v in value) + "]")
        elif isinstance(value, ast.AST):
            parts.append(shape(value))
    return "(" + " ".join(parts) + ")"


def _units(sources: SnapshotSources) -> dict[str, list[tuple[str, int, int]]]:
    """Every long enough unit by the digest of its shape: (file, first line, last line)."""
    found: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    for source in sources.files:
        assert source.tree is not None
        for node in ast.walk(source.tree):
            if isinstance(node, _UNITS) and (node.end_lineno or node.lineno) - node.lineno + 1 >= MIN_LINES:
                digest = hashlib.sha1(shape(node).encode()).hexdigest()
                found[digest].append((source.path, node.lineno, node.end_lineno or node.lineno))
    return found


class DuplicationMetric(Metric):
    """Figures: ``clone_groups`` (shapes found more than once), ``cloned_blocks`` (their copies),
    ``cloned_lines``
    (lines inside any instance, each line counted once) and ``clone_ratio`` (of all lines of the
    snapshot's files). Blocks inside a larger clone are not counted again. Details: the largest groups."""

    def compute(self, sources: SnapshotSources) -> tuple[dict[str, float], dict[str, Any]]:
        """Group units by shape; keep groups of two or more, outermost first."""
        groups = [places for places in _units(sources).values() if len(places) > 1]
        groups.sort(key=lambda places: -(places[0][2] - places[0][1]))
        covered: dict[str, set[int]] = defaultdict(set)
        kept: list[list[tuple[str, int, int]]] = []
        for places in groups:
            fresh = [p for p in places if p[1] not in covered[p[0]]]
            if len(fresh) < 2:
                continue
            kept.append(fresh)
            for path, first, last in fresh:
                covered[path].update(range(first, last + 1))
        total = sum(source.text.count("\n") + (not source.text.endswith("\n") and bool(source.text)) for source in sources.files)
        cloned = sum(len(lines) for lines in covered.values())
        figures = {"clone_groups": float(len(kept)), "cloned_blocks": float(sum(len(g) for g in kept)),
                   "cloned_lines": float(cloned), "clone_ratio": cloned / total if total else 0.0}
        details = {"groups": [{"lines": g[0][2] - g[0][1] + 1, "instances": [f"{p}:{a}-{b}" for p, a, b in g]} for g in kept[:20]]}
        return figures, details
