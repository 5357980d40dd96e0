"""Delegation context: what a parent agent passes to a subagent beside the task input.

Four parts, each optional, shown to the subagent in its first message after
the task (see :meth:`DelegationContext.render`):

- **recent events**: the parent's last ``recent_steps`` trajectory steps, one
  line each (model calls and thinking left out; long text cut);
- **workspace pointers**: workspace paths the subagent should look at, copied
  into its directory under ``shared/`` before it starts (it is confined to
  that directory and could not reach them otherwise);
- **safety flags**: how the subagent is confined, which tools it has, and the
  statements of the config's ``safety_flags``;
- **preview**: the parent's latest text (what it wrote when it delegated).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agentrig.boundary import copy_under
from agentrig.trajectory import AgentTextStep, ErrorStep, ToolUseStep, UserStep

if TYPE_CHECKING:
    from agentrig.boundary import copy_under
from agentrig.trajectory import TrajectoryStep

#: Where workspace pointers are copied, inside the subagent's directory.
SHARED_DIRECTORY = "shared"


class DelegationConfig(BaseModel):
    """What a subagent tool passes beside its input (the ``context`` of a subagent's config)."""

    model_config = ConfigDict(extra="forbid")

    recent_steps: int = Field(default=5, ge=0, description="Parent steps passed, one line each (0: none).")
    paths: list[str] = Field(
        default_factory=list,
        description="Workspace paths (relative to the parent's workspace) copied into the subagent's shared/ directory.",
    )
    safety_flags: list[str] = Field(default_factory=list, description="Rules stated to the subagent, one per line.")
    preview: bool = Field(default=True, description="Pass the parent's latest text as a preview.")
    max_event_chars: int = Field(default=200, ge=40, description="Characters kept of each recent event.")


class DelegationContext(BaseModel):
    """The delegation context of one subagent call, as recorded and as the subagent sees it."""

    model_config = ConfigDict(extra="forbid")

    recent_events: list[str] = Field(default_factory=list)
    workspace_pointers: list[str] = Field(default_factory=list)
    safety_flags: list[str] = Field(default_factory=list)
    preview: str | None = None

    def render(self, task: str) -> str:
        """The subagent's first message: the task, then each non-empty part of the context."""
        parts = [task.rstrip()]
        if self.recent_events:
            parts.append("Recent events of the delegating agent (oldest first):\n" + _bullets(self.recent_events))
        if self.workspace_pointers:
            parts.append(
                "Files to look at (copied from the delegating agent's workspace into your directory):\n"
                + _bullets(self.workspace_pointers)
            )
        if self.safety_flags:
            parts.append("Safety flags:\n" + _bullets(self.safety_flags))
        if self.preview:
            parts.append(f"Preview from the delegating agent:\n{self.preview}")
        if len(parts) == 1:
            return parts[0]
        return parts[0] + "\n\n## Delegation context\n\n" + "\n\n".join(parts[1:])


def _bullets(lines: Iterable[str]) -> str:
    return "\n".join(f"- {line}" for line in lines)


def _cut(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def compress_step(step: TrajectoryStep, limit: int = 200) -> str | None:
    """One line saying what ``step`` was, or ``None`` for steps not worth passing on (model calls, thinking)."""
    if isinstance(step, UserStep):
        return "task: " + _cut(step.content, limit)
    if isinstance(step, AgentTextStep):
        return "wrote: " + _cut(step.content, limit)
    if isinstance(step, ErrorStep):
        return f"error ({step.error_type or 'error'}): " + _cut(step.message, limit)
    if isinstance(step, ToolUseStep):
        arguments: Any = step.arguments
        args = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        outcome = "failed" if step.is_error else "ok"
        if step.exit_code is not None:
            outcome = f"exit {step.exit_code}"
        result = _cut(step.result or "", max(20, limit // 2))
        return _cut(f"called {step.tool} {args} -> {outcome}: {result}", limit)
    return None


def recent_events(steps: list[TrajectoryStep], count: int, limit: int = 200) -> list[str]:
    """The last ``count`` informative steps of ``steps``, compressed to one line each."""
    if count <= 0:
        return []
    lines = [line for line in (compress_step(step, limit) for step in steps) if line is not None]
    return lines[-count:]


def latest_text(steps: list[TrajectoryStep], limit: int = 1000) -> str | None:
    """The most recent text the agent wrote, cut to ``limit`` characters."""
    for step in reversed(steps):
        if isinstance(step, AgentTextStep) and step.content.strip():
            text = step.content.strip()
            return text if len(text) <= limit else text[: limit - 3] + "..."
    return None


def share_paths(parent_root: Path, paths: Iterable[str], directory: Path) -> list[str]:
    """Copy ``paths`` (relative to ``parent_root``) into ``directory/shared/``; the pointers as the subagent sees them.

    A path that leaves ``parent_root`` (after symlinks), or a symbolic link on the way to its copy in
    ``directory`` (:func:`agentrig.boundary.copy_under`), raises ``ValueError``; a missing one is listed as missing.
    """
    root = parent_root.resolve()
    pointers: list[str] = []
    for raw in dict.fromkeys(paths):
        source = (root / raw.strip()).resolve()
        if source != root and root not in source.parents:
            raise ValueError(f"shared path '{raw}' is outside the workspace")
        relative = source.relative_to(root).as_posix()
        if relative == ".":
            raise ValueError("the whole workspace cannot be shared: name files or subdirectories")
        if not source.exists():
            pointers.append(f"{SHARED_DIRECTORY}/{relative} (missing in the workspace: not copied)")
            continue
        # links stay links (copying what they point at could bring in files from outside the workspace), and
        # none the agent left in the subagent's directory is followed: its copy could land anywhere
        copy_under(directory, f"{SHARED_DIRECTORY}/{relative}", source, f"shared path '{raw}'")
        pointers.append(f"{SHARED_DIRECTORY}/{relative}" + ("/" if source.is_dir() else ""))
    return pointers
