"""agentrig's driver of the OpenHands SDK: one headless conversation, its events as JSON lines.

This file is not imported by agentrig: it is copied into the agent's state
directory and run there with the Python of the OpenHands environment
(Python 3.12 or later, ``openhands-sdk`` and ``openhands-tools`` installed), in
the session's runtime, with the workspace as its working directory::

    python driver.py --version       # "openhands-sdk 1.58.2 python 3.12.1": nothing imported
    python driver.py RUN.json < TASK # runs the conversation

``RUN.json`` (no secrets but the MCP servers' values; the file is owner-only)
names the LiteLLM model, the conversation (its id and persistence directory,
so that a later checkpoint continues it), the tools' settings and the custom
prices. The endpoint and the key come from the environment only
(``LLM_BASE_URL``, ``LLM_API_KEY``). Standard output carries only the JSON
lines below (everything else the SDK prints goes to standard error):

- ``{"type": "start", "sdk_version", "python", "conversation_id", "model", "resumed"}``
- ``{"type": "llm_call", "usage": {prompt_tokens, completion_tokens, cache_read_tokens, cache_write_tokens,
  reasoning_tokens}, "cost", "latency", "response_id", "model"}``: one per model call, before what the call asked for
- ``{"type": "action", "tool", "tool_call_id", "arguments", "thought"}`` and
  ``{"type": "observation", "tool", "tool_call_id", "text", "is_error", "exit_code"}``
- ``{"type": "message", "source", "text"}`` and ``{"type": "error", "code", "detail"}``
- ``{"type": "end", "status", "accumulated_cost", "accumulated_usage", "error"}``: OpenHands' own totals of this run

It uses the standard library only besides the SDK, so that it runs on the
interpreter of the OpenHands environment whatever agentrig runs on.
"""

from __future__ import annotations

import json
import os
import re
import sys
import uuid
from typing import Any, TextIO

#: The distributions whose versions ``--version`` reports.
SDK_DISTRIBUTION = "openhands-sdk"
TOOLS_DISTRIBUTION = "openhands-tools"
#: How much of a tool's output one observation line carries.
MAX_TEXT = 20000
#: Terminal control sequences (the shell's bracketed-paste switches) in a tool's output.
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    python = ".".join(str(part) for part in sys.version_info[:3])
    try:
        sdk = version(SDK_DISTRIBUTION)
        version(TOOLS_DISTRIBUTION)
    except PackageNotFoundError as exc:
        return f"missing {exc.name} python {python}"
    return f"{SDK_DISTRIBUTION} {sdk} python {python}"


class _Lines:
    """The JSON-lines channel: the process's original standard output, flushed per line."""

    def __init__(self, handle: TextIO) -> None:
        self.handle = handle

    def emit(self, record: dict[str, Any]) -> None:
        self.handle.write(json.dumps(record, default=str) + "\n")
        self.handle.flush()


def _usage_record(usage: Any) -> dict[str, int]:
    return {
        "prompt_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
        "completion_tokens": int(getattr(usage, "completion_tokens", 0) or 0),
        "cache_read_tokens": int(getattr(usage, "cache_read_tokens", 0) or 0),
        "cache_write_tokens": int(getattr(usage, "cache_write_tokens", 0) or 0),
        "reasoning_tokens": int(getattr(usage, "reasoning_tokens", 0) or 0),
    }


def _text_of(content: Any) -> str:
    """The text of a list of SDK content blocks (or of one)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        content = [content]
    return "".join(str(getattr(block, "text", "") or "") for block in content)


class _CallCounter:
    """Turns the conversation's metrics into one ``llm_call`` line per model call, as they grow."""

    def __init__(self, conversation: Any, lines: _Lines) -> None:
        self.conversation = conversation
        self.lines = lines
        metrics = self._metrics()
        self.seen = len(metrics.token_usages)
        self.latencies = len(metrics.response_latencies)
        self.start_cost = self.cost = float(metrics.accumulated_cost or 0.0)
        self.start_usage = _usage_record(metrics.accumulated_token_usage)  # a resumed conversation's earlier runs

    def _metrics(self) -> Any:
        return self.conversation.conversation_stats.get_combined_metrics()

    def flush(self) -> None:
        metrics = self._metrics()
        usages = metrics.token_usages
        latencies = metrics.response_latencies
        if len(usages) <= self.seen:
            return
        total = float(metrics.accumulated_cost or 0.0)
        for index in range(self.seen, len(usages)):
            usage = usages[index]
            last = index == len(usages) - 1
            latency = latencies[self.latencies].latency if self.latencies < len(latencies) else 0.0
            self.latencies = min(self.latencies + 1, len(latencies))
            self.lines.emit(
                {
                    "type": "llm_call",
                    "usage": _usage_record(usage),
                    # what OpenHands priced the call at (its metrics keep costs per run, not per call)
                    "cost": (total - self.cost) if last else 0.0,
                    "latency": float(latency or 0.0),
                    "response_id": getattr(usage, "response_id", "") or None,
                    "model": getattr(usage, "model", "") or None,
                }
            )
        self.seen = len(usages)
        self.cost = total

    def totals(self) -> dict[str, Any]:
        metrics = self._metrics()
        usage = _usage_record(metrics.accumulated_token_usage)
        return {
            "accumulated_cost": float(metrics.accumulated_cost or 0.0) - self.start_cost,
            "accumulated_usage": {name: count - self.start_usage[name] for name, count in usage.items()},
        }


def _event_record(event: Any) -> dict[str, Any] | None:
    """The line of one conversation event (``None``: not one agentrig records)."""
    kind = type(event).__name__
    if kind == "ActionEvent":
        action = getattr(event, "action", None)
        arguments = action.model_dump(mode="json", exclude={"kind"}) if action is not None else {}
        return {
            "type": "action",
            "tool": event.tool_name,
            "tool_call_id": event.tool_call_id,
            "arguments": arguments,
            "thought": _text_of(getattr(event, "thought", None)),
            "reasoning": getattr(event, "reasoning_content", None),
        }
    if kind == "ObservationEvent":
        observation = event.observation
        text = _CONTROL.sub("", _text_of(getattr(observation, "content", None)))
        return {
            "type": "observation",
            "tool": event.tool_name,
            "tool_call_id": event.tool_call_id,
            "text": text[:MAX_TEXT],
            "is_error": bool(getattr(observation, "is_error", False)),
            "exit_code": getattr(observation, "exit_code", None),
        }
    if kind in ("AgentErrorEvent", "UserRejectObservation"):
        return {
            "type": "observation",
            "tool": getattr(event, "tool_name", ""),
            "tool_call_id": getattr(event, "tool_call_id", None),
            "text": str(getattr(event, "error", "") or getattr(event, "rejection_reason", ""))[:MAX_TEXT],
            "is_error": True,
            "exit_code": None,
        }
    if kind == "MessageEvent":
        message = event.llm_message
        return {"type": "message", "source": event.source, "text": _text_of(message.content),
                "reasoning": getattr(message, "reasoning_content", None)}
    if kind == "ConversationErrorEvent":
        return {"type": "error", "code": getattr(event, "code", None), "detail": str(getattr(event, "detail", ""))}
    return None


def run(config: dict[str, Any], task: str, lines: _Lines) -> int:
    """Run the conversation ``config`` describes on ``task``; 0 when it finished, 1 on an error."""
    from openhands.sdk import LLM, Agent, Conversation, Tool
    from openhands.tools.file_editor import FileEditorTool
    from openhands.tools.terminal import TerminalTool

    llm_fields: dict[str, Any] = {
        "model": config["model"],
        "usage_id": "agent",
        "base_url": os.environ.get("LLM_BASE_URL") or None,
        "api_key": os.environ.get("LLM_API_KEY") or None,
    }
    for name in ("num_retries", "retry_min_wait", "retry_max_wait", "timeout", "input_cost_per_token",
                 "output_cost_per_token", "temperature", "max_output_tokens", "reasoning_effort"):
        if config.get(name) is not None:
            llm_fields[name] = config[name]
    llm = LLM(**llm_fields)
    tools = [
        # the subprocess terminal: its shell stays a descendant of this process (a tmux server would
        # outlive a kill at a limit)
        Tool(name=TerminalTool.name, params={"terminal_type": "subprocess"}),
        Tool(name=FileEditorTool.name),
    ]
    agent = Agent(llm=llm, tools=tools, mcp_config=config.get("mcp_config") or {})
    conversation_id = uuid.UUID(config["conversation_id"])
    persistence_dir = config["persistence_dir"]
    resumed = os.path.isdir(os.path.join(persistence_dir, conversation_id.hex))
    holder: dict[str, _CallCounter] = {}

    def on_event(event: Any) -> None:
        counter = holder.get("counter")
        if counter is not None:
            counter.flush()  # the call that produced the event comes first
        record = _event_record(event)
        if record is not None:
            lines.emit(record)

    conversation = Conversation(
        agent=agent,
        workspace=os.getcwd(),
        persistence_dir=persistence_dir,
        conversation_id=conversation_id,
        callbacks=[on_event],
        visualizer=None,
        max_iteration_per_run=int(config.get("max_iterations") or 500),
        stuck_detection=bool(config.get("stuck_detection", True)),
        delete_on_close=False,
    )
    counter = holder["counter"] = _CallCounter(conversation, lines)
    lines.emit({"type": "start", "sdk_version": _version().split(" ")[1], "python": sys.version.split()[0],
                "conversation_id": str(conversation_id), "model": config["model"], "resumed": resumed})
    error: str | None = None
    try:
        conversation.send_message(task)
        conversation.run()
    except Exception as exc:  # the SDK's ConversationRunError and what it wraps: reported, then exit 1
        error = f"{type(exc).__name__}: {exc}"
    counter.flush()
    status = str(getattr(conversation.state.execution_status, "value", conversation.state.execution_status))
    lines.emit({"type": "end", "status": status, **counter.totals(), "error": error})
    try:
        conversation.close()
    except Exception as exc:  # closing must not hide how the run ended
        print(f"closing the conversation failed: {exc}", file=sys.stderr)
    return 1 if error is not None else 0


def main(argv: list[str]) -> int:
    """``--version``, or run the conversation of the JSON file named by the only argument."""
    if argv == ["--version"]:
        print(_version())
        return 0
    if len(argv) != 1:
        print("usage: driver.py --version | driver.py RUN.json < TASK", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as handle:
        config = json.load(handle)
    # the JSON lines keep the original standard output; whatever else writes to it goes to standard error
    lines = _Lines(os.fdopen(os.dup(1), "w", encoding="utf-8"))
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    task = sys.stdin.read()
    return run(config, task, lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
