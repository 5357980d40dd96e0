"""``size``: lines of code, comments and files (radon's raw metrics, summed over the snapshot's files)."""

from __future__ import annotations

from typing import Any

from agentrig.metrics.interface import Metric, SnapshotSources
from agentrig.metrics.tools import require_module


class SizeMetric(Metric):
    """Per snapshot: ``files``, ``total_lines`` (radon's ``loc``), ``loc`` (radon's ``sloc``: source
    lines), ``comments``, ``single_comment``, ``multi_comment`` (docstring and string lines) and
    ``blank``: SlopCodeBench's names and radon's counts. Details: the same per file."""

    def check_tools(self) -> None:
        """radon."""
        require_module("radon.raw", "radon")

    def compute(self, sources: SnapshotSources) -> tuple[dict[str, float], dict[str, Any]]:
        """Sum radon's raw counts over every file that parses."""
        raw = require_module("radon.raw", "radon")
        figures = dict.fromkeys(("total_lines", "loc", "comments", "single_comment", "multi_comment", "blank"), 0.0)
        per_file: dict[str, dict[str, int]] = {}
        for source in sources.files:
            counts = raw.analyze(source.text)
            row = {
                "total_lines": counts.loc,
                "loc": counts.sloc,
                "comments": counts.comments,
                "single_comment": counts.single_comments,
                "multi_comment": counts.multi,
                "blank": counts.blank,
            }
            per_file[source.path] = row
            for key, value in row.items():
                figures[key] += value
        figures["files"] = float(len(sources.files))
        return figures, {"files": per_file}
