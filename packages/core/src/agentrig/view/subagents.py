"""Subagent trajectories recorded beside a checkpoint, found from the tool call that started them.

The react agent runs a subagent as a tool: the parent's ``tool_use`` step
carries ``metadata`` ``{"subagent": NAME, "call": N, ...}``, and the subagent's
own artifacts, its ``trajectory.jsonl`` among them, are saved under the
checkpoint's ``agent/subagents/<NNN>-<NAME>/`` (a subagent's own subagents one
level further down, ``.../<NNN>-<NAME>/subagents/...``). Names read back are
untrusted: a label that is not a safe name is not looked up, and every file is
read through :func:`agentrig.boundary.read_inside` of the run directory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentrig.boundary import is_safe_name

#: How deeply subagents of subagents are shown.
SUBAGENT_DEPTH = 3


@dataclass
class SubagentPlace:
    """Where one subagent call's artifacts are, and its label (``NNN-NAME``)."""

    label: str
    directory: Path


def subagent_place(agent_dir: Path | None, metadata: dict[str, Any] | None) -> SubagentPlace | None:
    """The artifacts directory of the subagent call a ``tool_use`` step's ``metadata`` names, ``None`` when the
    step started no subagent or names one unsafely (the directory may not exist: nothing recorded)."""
    if agent_dir is None or not isinstance(metadata, dict):
        return None
    name, call = metadata.get("subagent"), metadata.get("call")
    if not isinstance(name, str) or not isinstance(call, int) or isinstance(call, bool) or not 0 <= call < 10**6:
        return None
    label = f"{call:03d}-{name}"
    if not is_safe_name(label):
        return None
    return SubagentPlace(label=label, directory=agent_dir / "subagents" / label)


def read_subagent_steps(place: SubagentPlace, root: Path) -> tuple[list[Any], list[str]]:
    """The subagent's recorded steps (empty with a notice when it recorded no trajectory)."""
    from agentrig.report.reader import read_steps

    path = place.directory / "trajectory.jsonl"
    if not os.path.lexists(path):
        return [], [f"subagent {place.label}: no trajectory recorded"]
    return read_steps(path, root=root)
