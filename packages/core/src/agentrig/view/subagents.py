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

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentrig.boundary import is_safe_name

if TYPE_CHECKING:
    from agentrig.report.raw_trajectory import RawTrajectory

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


def _started(raw: RawTrajectory) -> list[dict[str, Any]]:
    """The metadata of every tool call line of ``raw`` that may have started a subagent (looked at as JSON only:
    the page's script reads the step and nests a subagent under a tool call it reads as one)."""
    if '"subagent"' not in raw.text:  # what nearly every trajectory has: none
        return []
    found = []
    for line in raw.text.split("\n"):
        if '"subagent"' not in line:
            continue
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(data, dict) and data.get("kind") == "tool_use" and isinstance(data.get("metadata"), dict):
            found.append(data["metadata"])
    return found


def subagent_trajectories(agent_dir: Path, raw: RawTrajectory, root: Path, key: str = "",
                          depth: int = 0) -> dict[str, dict[str, Any]]:
    """The trajectories of the subagents the tool calls of ``raw`` started (recorded under ``agent_dir``), and of
    theirs, as the page embeds them: by key (``001-helper``, ``001-helper/002-checker``), each with the lines
    read (``text``, ``bad``), its file's ``path`` and ``notices``; past :data:`SUBAGENT_DEPTH` levels only a notice
    (``deep``). Every file is read through :func:`~agentrig.boundary.read_inside` of the run directory ``root``."""
    from agentrig.boundary import read_inside
    from agentrig.report.raw_trajectory import read_raw_trajectory

    out: dict[str, dict[str, Any]] = {}
    for metadata in _started(raw):
        place = subagent_place(agent_dir, metadata)
        if place is None:
            continue
        inner = f"{key}/{place.label}" if key else place.label
        if inner in out:
            continue
        if depth + 1 > SUBAGENT_DEPTH:
            out[inner] = {"deep": True, "notices": [f"subagents deeper than {SUBAGENT_DEPTH} levels are not shown"]}
            continue
        path = place.directory / "trajectory.jsonl"
        if not os.path.lexists(path):
            out[inner] = {"text": "", "path": str(path), "notices": [f"subagent {place.label}: no trajectory recorded"]}
            continue
        read = read_raw_trajectory(path, lambda p: read_inside(root, p))
        out[inner] = {"text": read.text, "bad": read.bad, "path": str(path), "notices": read.notices}
        out.update(subagent_trajectories(place.directory, read, root, inner, depth + 1))
    return out
