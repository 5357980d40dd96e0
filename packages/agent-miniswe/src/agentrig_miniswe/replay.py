"""Reading back the commands of a recorded run, for replay without a model.

A recording is mini-swe-agent's own trajectory file (``*.traj.json``: the
actions of its assistant messages, in order) or agentrig's
``trajectory.jsonl`` (its ``bash`` tool uses); a checkpoint directory of a
run holds both, and the mini-swe-agent file is preferred.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from agentrig import AgentError

TRAJ_SUFFIX = ".traj.json"


class RecordedCommand(BaseModel):
    """One command of a recorded run."""

    model_config = ConfigDict(extra="forbid")

    command: str
    tool_call_id: str | None = None


class Recording(BaseModel):
    """The commands of a recorded run, in the order they ran, and where they came from."""

    model_config = ConfigDict(extra="forbid")

    source: Path
    commands: list[RecordedCommand]
    exit_status: str | None = None
    submission: str | None = None


def find_recording(path: Path, trajectory_name: str = "miniswe.traj.json") -> Path:
    """The file to replay: ``path`` itself, or the best recording inside a checkpoint directory."""
    if path.is_file():
        return path
    if path.is_dir():
        candidates = [path / "agent" / trajectory_name, path / trajectory_name]
        candidates += sorted((path / "agent").glob(f"*{TRAJ_SUFFIX}")) if (path / "agent").is_dir() else []
        candidates += [path / "trajectory.jsonl"]
        for candidate in candidates:
            if candidate.is_file():
                return candidate
        raise AgentError(
            f"nothing to replay in '{path}': expected agent/{trajectory_name} or trajectory.jsonl in it"
        )
    raise AgentError(f"replay path '{path}' does not exist")


def load_recording(path: Path, trajectory_name: str = "miniswe.traj.json") -> Recording:
    """The recorded commands at ``path`` (a file or a checkpoint directory)."""
    source = find_recording(path, trajectory_name)
    if source.name.endswith(".jsonl"):
        return _from_agentrig_trajectory(source)
    return _from_mswea_trajectory(source)


def _from_mswea_trajectory(source: Path) -> Recording:
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AgentError(f"cannot read mini-swe-agent trajectory '{source}': {exc}") from None
    messages = data.get("messages") if isinstance(data, dict) else None
    if not isinstance(messages, list):
        raise AgentError(f"'{source}' is not a mini-swe-agent trajectory: it has no 'messages' list")
    commands: list[RecordedCommand] = []
    for message in messages:
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        for action in (message.get("extra") or {}).get("actions") or []:
            if isinstance(action, dict) and isinstance(action.get("command"), str):
                commands.append(RecordedCommand(command=action["command"], tool_call_id=action.get("tool_call_id")))
    info: dict[str, Any] = data.get("info") or {}
    return Recording(
        source=source,
        commands=commands,
        exit_status=info.get("exit_status") or None,
        submission=info.get("submission"),
    )


def _from_agentrig_trajectory(source: Path) -> Recording:
    from agentrig.trajectory import ToolUseStep, parse_step

    commands: list[RecordedCommand] = []
    try:
        lines = source.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise AgentError(f"cannot read trajectory '{source}': {exc}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            step = parse_step(line)
        except ValueError as exc:
            raise AgentError(f"{source}:{number}: not a trajectory step ({str(exc).splitlines()[0]})") from None
        if isinstance(step, ToolUseStep) and step.tool == "bash" and isinstance(step.arguments, dict):
            command = step.arguments.get("command")
            if isinstance(command, str):
                commands.append(RecordedCommand(command=command, tool_call_id=step.tool_call_id))
    return Recording(source=source, commands=commands)
