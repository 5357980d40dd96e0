"""What a metric plugin implements: :class:`Metric`, fed the Python sources of one snapshot."""

from __future__ import annotations

import ast
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any


class MetricError(Exception):
    """A metric could not be computed; its message (one line) is recorded in ``quality.json``."""


class ToolMissingError(MetricError):
    """The tool a metric runs is not installed; the message names the package to install."""

    def __init__(self, tool: str, package: str) -> None:
        super().__init__(
            f"{tool} is not installed: pip install '{package}' (or pip install 'agentrig[metrics]' for every built-in metric)"
        )
        self.tool, self.package = tool, package


@dataclass
class SourceFile:
    """One source file of a snapshot: its path relative to the snapshot (POSIX) and its text."""

    path: str
    absolute: Path
    text: str

    @cached_property
    def tree(self) -> ast.Module | None:
        """The parsed module, or ``None`` when the file is not valid Python."""
        try:
            return ast.parse(self.text, filename=self.path)
        except (SyntaxError, ValueError):
            return None


@dataclass
class SnapshotSources:
    """The source files of one checkpoint's snapshot a metric reads.

    ``files`` are the files that parse, sorted by path; ``unparsable`` the paths of those that do
    not (left out of every figure, as SlopCodeBench leaves them out); ``skipped`` the paths not read
    (over the size cap). ``previous`` is the previous checkpoint's sources (``None`` for the first).
    """

    root: Path
    files: list[SourceFile]
    unparsable: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    previous: SnapshotSources | None = None


class Metric(ABC):
    """A code-quality metric: named figures computed from a snapshot's sources.

    Implementations are built with no argument (the :class:`agentrig.MetricSpec`'s ``metric``
    import path names the class) and must not write anywhere. :meth:`compute` returns flat
    figures (name -> number, compared with the previous checkpoint's into the delta) and details
    (anything JSON can hold: per-function lists, per-rule counts). Raise :class:`ToolMissingError`
    when a tool is missing and :class:`MetricError` for any other failure that has a clear cause.
    """

    @abstractmethod
    def compute(self, sources: SnapshotSources) -> tuple[dict[str, float], dict[str, Any]]:
        """The figures and details of ``sources``."""

    def check_tools(self) -> None:
        """Raise :class:`ToolMissingError` (or :class:`MetricError`) when a tool :meth:`compute` needs is
        not installed: called before a run or a re-measure, so that a metric asked for never fails for want
        of its tool unannounced. Must be cheap. Default: nothing to check (a metric of the standard library)."""
