"""The react agent's system prompt and the messages it sends the model between turns."""

from __future__ import annotations

import json
from collections.abc import Sequence

from agentrig.llm.interface import ToolSpec
from agentrig_react.text_calls import TEXT_CALL_FORMAT

SYSTEM_PROMPT = """You are a careful software engineer working in a workspace directory ({workdir}). \
Solve the task you are given using the tools: inspect files before changing them, make focused changes, \
and run commands to check your work. Tool calls run one after another unless you make several at once. \
When the task is done and checked, call the submit tool with a short summary."""


def system_prompt(workdir: str, custom: str | None, tools: Sequence[ToolSpec], *, native_tools: bool) -> str:
    """The system prompt: the configured or built-in one, plus the tool list when calls go in text."""
    base = (custom if custom is not None else SYSTEM_PROMPT).replace("{workdir}", workdir)
    if native_tools:
        return base
    described = "\n\n".join(
        f"### {spec.name}\n{spec.description}\nArguments (JSON schema): {json.dumps(spec.parameters)}" for spec in tools
    )
    return f"{base}\n\n## Tools\n\n{described}\n\n## Calling tools\n\n{TEXT_CALL_FORMAT}"


def format_error(reason: str, *, native_tools: bool) -> str:
    """The message sent back when a reply's tool call cannot be read."""
    how = "Call the tools through tool calling." if native_tools else TEXT_CALL_FORMAT
    return f"Format error: {reason}.\n\n{how}"


def no_tool_calls(*, native_tools: bool) -> str:
    """The reminder sent when a reply called no tool (the ``nudge`` policy)."""
    how = "Call one of your tools now." if native_tools else TEXT_CALL_FORMAT
    return (
        "Your reply called no tool, so nothing happened in the workspace. Keep working on the task with the "
        f"tools, and call submit when it is done and checked.\n\n{how}"
    )


def text_tool_result(name: str, content: str, *, is_error: bool) -> str:
    """A tool's result as a user message, for calls made in text."""
    status = "error" if is_error else "result"
    return f"[{name} {status}]\n{content}"
