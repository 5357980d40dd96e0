"""What a tool call may touch: the runtime, a confined directory, time and output budgets."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentrig.runtime.interface import Runtime


class ToolError(Exception):
    """A tool could not do what was asked; the message goes back to the model as the tool result."""


@dataclass
class ToolContext:
    """Everything a tool function needs beyond its arguments.

    ``root`` is the directory the tools are confined to, on the host (the
    workspace, or a subagent's subdirectory of it); ``workdir`` is the same
    directory as commands in ``runtime`` see it (``/workspace/...`` in a
    container). ``deadline`` is a ``time.monotonic()`` instant after which
    commands are cut short (the agent's wall-clock limit).
    """

    root: Path
    workdir: str
    runtime: Runtime | None = None
    command_timeout: float = 120.0
    max_output_chars: int = 20_000
    deadline: float | None = None
    env: dict[str, str] = field(default_factory=dict)

    def resolve(self, path: str) -> Path:
        """The host path of ``path`` (relative to the root, or absolute as host or runtime see it).

        Raises :class:`ToolError` when the path, after following symlinks,
        leaves the root: tools never touch files outside their directory.
        """
        if not path or not path.strip():
            raise ToolError("path is empty: give a path relative to the workspace")
        text = path.strip()
        root = self.root.resolve()
        candidate = Path(text)
        if candidate.is_absolute():
            # A path as commands see it (/workspace/x in a container) maps back onto the host root.
            workdir = PurePosixPath(self.workdir)
            posix = PurePosixPath(text)
            if posix == workdir or workdir in posix.parents:
                candidate = root.joinpath(*posix.relative_to(workdir).parts)
        else:
            candidate = root / candidate
        resolved = candidate.resolve()
        if resolved != root and root not in resolved.parents:
            raise ToolError(f"path '{path}' is outside the workspace ({self.workdir}); use a path inside it")
        return resolved

    def display(self, path: Path) -> str:
        """``path`` relative to the root, as the model should refer to it."""
        try:
            rel = path.resolve().relative_to(self.root.resolve())
        except ValueError:
            return str(path)
        return rel.as_posix() or "."

    def time_left(self) -> float | None:
        """Seconds before the deadline (never negative), or ``None`` without one."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - time.monotonic())

    def command_budget(self, requested: float | None = None) -> float:
        """The timeout for one command: the requested or default one, cut to the time left."""
        budget = self.command_timeout if requested is None else min(requested, self.command_timeout)
        left = self.time_left()
        return budget if left is None else max(0.001, min(budget, left))
