"""``complexity``: cyclomatic complexity per function with its A–F rank (radon), maximum nesting depth,
and radon's maintainability index per file."""

from __future__ import annotations

import ast
from typing import Any

from agentrig.metrics.interface import Metric, SnapshotSources, SourceFile
from agentrig.metrics.tools import require_module

#: Control blocks that open a nesting level (an ``elif`` does not: it continues its ``if``).
_BLOCKS = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.Match,
           *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
#: Above this complexity a function counts as complex (radon's rank C and worse start at 11).
HIGH_CC = 10


def _depth(node: ast.AST, depth: int = 0) -> int:
    """The deepest nesting of control blocks under ``node``; nested functions and classes are their own."""
    deepest = depth
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _FUNCTIONS):
            continue
        if isinstance(child, ast.If) and isinstance(node, ast.If) and node.orelse == [child]:
            deepest = max(deepest, _depth(child, depth))  # an elif: the same level as its if
        elif isinstance(child, _BLOCKS):
            deepest = max(deepest, _depth(child, depth + 1))
        else:
            deepest = max(deepest, _depth(child, depth))
    return deepest


def nesting_by_line(tree: ast.Module) -> dict[tuple[int, str], int]:
    """Each function's maximum nesting depth, keyed by (its line, its name)."""
    return {
        (node.lineno, node.name): _depth(node)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }


def _blocks(results: list[Any]) -> list[Any]:
    """radon's functions and methods (closures included), each once, flattened out of its classes.

    ``cc_visit`` lists a top-level class and then its methods; the methods of a class nested in a
    class are listed only in that class's ``inner_classes``, and closures only in their function's
    ``closures``."""
    found: list[Any] = []
    pending = [(block, True) for block in results]
    while pending:
        block, listed = pending.pop()
        if hasattr(block, "methods"):  # a class
            if not listed:
                pending.extend((method, True) for method in block.methods)
            pending.extend((inner, False) for inner in getattr(block, "inner_classes", []))
            continue
        found.append(block)
        pending.extend((closure, True) for closure in getattr(block, "closures", []))
    return found


def _functions(source: SourceFile, radon_cc: Any) -> list[dict[str, Any]]:
    assert source.tree is not None
    nesting = nesting_by_line(source.tree)
    rows = []
    for block in _blocks(radon_cc.cc_visit(source.text)):
        name = f"{block.classname}.{block.name}" if getattr(block, "classname", None) else block.name
        rows.append({
            "file": source.path, "name": name, "line": block.lineno, "cc": block.complexity,
            "rank": radon_cc.cc_rank(block.complexity), "nesting": nesting.get((block.lineno, block.name), 0),
            "lines": block.endline - block.lineno + 1,
        })
    return rows


class ComplexityMetric(Metric):
    """Figures: ``functions``, ``cc_sum``, ``cc_max``, ``cc_mean``, ``rank.A`` … ``rank.F`` (functions per
    radon rank), ``high_cc`` (functions over 10), ``max_nesting``, ``mi_min`` and ``mi_sum`` (radon's
    maintainability index per file, without counting docstrings as comments). Details: every
    function (file, name, line, cc, rank, nesting, lines: its length from ``def`` to its last line), most
    complex first."""

    def check_tools(self) -> None:
        """radon."""
        require_module("radon.complexity", "radon")

    def compute(self, sources: SnapshotSources) -> tuple[dict[str, float], dict[str, Any]]:
        """Run radon's visitors over every file that parses."""
        radon_cc = require_module("radon.complexity", "radon")
        radon_metrics = require_module("radon.metrics", "radon")
        functions: list[dict[str, Any]] = []
        mi: list[float] = []
        for source in sources.files:
            functions.extend(_functions(source, radon_cc))
            mi.append(float(radon_metrics.mi_visit(source.text, multi=False)))
        cc = [row["cc"] for row in functions]
        figures: dict[str, float] = {
            "functions": float(len(cc)), "cc_sum": float(sum(cc)), "cc_max": float(max(cc, default=0)),
            "cc_mean": sum(cc) / len(cc) if cc else 0.0, "high_cc": float(sum(1 for c in cc if c > HIGH_CC)),
            "max_nesting": float(max((row["nesting"] for row in functions), default=0)),
            "mi_min": min(mi, default=0.0), "mi_sum": sum(mi),
        }
        for rank in "ABCDEF":
            figures[f"rank.{rank}"] = float(sum(1 for row in functions if row["rank"] == rank))
        functions.sort(key=lambda row: (-row["cc"], row["file"], row["line"]))
        return figures, {"functions": functions}
