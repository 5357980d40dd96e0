"""SlopCodeBench's own code-quality figures of a snapshot, beside agentrig's ``slopcode`` metric.

Not a test: it needs the benchmark's source and its analysis packages. Set up once::

    git --git-dir=<slop-code-bench.git> archive HEAD src configs | tar x -C /tmp/scb
    uv venv /tmp/scb/venv && VIRTUAL_ENV=/tmp/scb/venv uv pip install radon tree-sitter \
        tree-sitter-python pydantic structlog rich ruff==0.14.1 ast-grep-cli pyyaml ujson \
        gitpython jinja2 httpx docker tenacity networkx pluggy

then, with ``/tmp/scb/venv/bin`` first on ``PATH`` (the benchmark runs ``sg`` and ``ruff`` from it)::

    PYTHONPATH=/tmp/scb/src:packages/core/src python bench/slopcode_reference.py SNAPSHOT [RULES_DIR]

``SNAPSHOT`` is a checkpoint's ``snapshot/`` directory (the workspace under ``files/``). It prints
every figure the two compute, the benchmark's first, and marks those that differ. The benchmark
loads tree-sitter's Python grammar with ``tree_sitter_language_pack.get_parser``, which downloads
it; offline, a stand-in module built here gives it the grammar of the ``tree-sitter-python`` wheel.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import types
from pathlib import Path
from typing import Any


def _grammar_from_wheel() -> None:
    import tree_sitter
    import tree_sitter_python

    def get_parser(name: str) -> Any:
        assert name == "python", name
        return tree_sitter.Parser(tree_sitter.Language(tree_sitter_python.language()))

    module = types.ModuleType("tree_sitter_language_pack")
    module.get_parser = get_parser  # type: ignore[attr-defined]
    sys.modules["tree_sitter_language_pack"] = module


def benchmark_figures(workspace: Path) -> dict[str, Any]:
    """The benchmark's flat checkpoint figures with its erosion and verbosity."""
    _grammar_from_wheel()
    from slop_code.metrics.checkpoint.extractors import get_quality_metrics
    from slop_code.metrics.driver import measure_snapshot_quality
    from slop_code.metrics.quality_io import save_quality_metrics
    from slop_code.metrics.summary.aggregators import compute_composite_scores

    snapshot, files = measure_snapshot_quality("main.py", workspace)
    with tempfile.TemporaryDirectory() as out:
        save_quality_metrics(Path(out), snapshot, files)
        flat: dict[str, Any] = get_quality_metrics(Path(out))
    scores = compute_composite_scores([flat])
    flat.update(erosion=scores["erosion"].mean, verbosity=scores["verbosity"].mean)
    return flat


def main() -> int:
    """Print both sides; exit 1 when a figure both compute differs."""
    snapshot = Path(sys.argv[1])
    if len(sys.argv) > 2:
        os.environ["AST_GREP_RULES_DIR"] = sys.argv[2]  # the benchmark's variable
        os.environ["AGENTRIG_SLOPCODE_AST_GREP_RULES"] = sys.argv[2]
    # the benchmark runs ruff per file from the current directory: from above the snapshot, its
    # top-level scripts get INP001 as they do in agentrig's run from the snapshot
    os.chdir(snapshot.parent)
    theirs = benchmark_figures(Path(snapshot.name) / "files")

    from agentrig.metrics.slopcode import SlopCodeMetric
    from agentrig.metrics.sources import read_sources

    ours, _ = SlopCodeMetric().compute(read_sources(Path(snapshot.name)))
    differ = 0
    for key in sorted(set(ours) & set(theirs)):
        same = abs(float(theirs[key]) - ours[key]) <= 1e-9 * max(1.0, abs(ours[key]))
        differ += not same
        print(f"{key:32} {theirs[key]!r:24} {ours[key]!r}{'' if same else '  <- differs'}")
    print(json.dumps({"differ": differ, "compared": len(set(ours) & set(theirs))}))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
