"""The ``codex-exec-json`` parser: ``codex exec --json`` events as trajectory steps.

Facts this parser is built on (measured on CLI 0.169.0, see ``tests/streams/``):

* standard output carries one JSON event per line: ``thread.started``
  (``thread_id``), ``turn.started``, ``item.started`` / ``item.updated`` /
  ``item.completed`` with a typed ``item`` (``agent_message``, ``reasoning``,
  ``command_execution`` with ``command``, ``aggregated_output``,
  ``exit_code``, ``status``; ``file_change``; ``mcp_tool_call``;
  ``web_search``; ``todo_list``; ``error``), then ``turn.completed`` with the
  thread's ``usage`` or ``turn.failed`` / ``error`` with a message;
* that stream has no usage per model call: the CLI's session log
  (``$CODEX_HOME/sessions/.../rollout-*.jsonl``) has it, one
  ``token_usage_record`` per model response (``response_id``, ``usage``)
  written when the response completes, while a tool it asked for may already
  run. The agent hands the log's new lines to
  :meth:`CodexExecParser.consume_session_line` as it grows; each record is one
  :class:`~agentrig.trajectory.LLMCall` (after the items its response streamed),
  counted in the live tracker at once;
* ``turn.completed.usage`` is the CLI's own total. At the end the tracker is
  brought to it (only the difference is added), so recorded usage and cost
  equal what the CLI reports even if a session-log line was missed.

Unknown events and fields are kept, never fatal: the CLI's format grows.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from agentrig.agents.cli_stream import KEEP_UNKNOWN, JsonLinesParser, token_difference
from agentrig.trajectory import AgentTextStep, ErrorStep, LLMCall, PlanStep, ThinkingStep, ToolUseStep
from agentrig.usage import TokenUsage, UsageTracker
from agentrig_codex.outcome import CodexOutcome, CodexUsage

if TYPE_CHECKING:
    from agentrig.pricing import APIPricing
    from agentrig.trajectory import TrajectoryStep

PARSER_NAME = "codex-exec-json"


class CodexExecParser(JsonLinesParser[CodexOutcome]):
    """Incremental parser of ``codex exec --json``; see the module docstring.

    ``prior_thread_usage`` is the thread's total before this run (a resumed
    thread's ``turn.completed`` counts every earlier run too).
    """

    def __init__(
        self,
        *,
        pricing: APIPricing | None = None,
        model: str = "",
        usage: UsageTracker | None = None,
        prior_thread_usage: TokenUsage | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(CodexOutcome(), pricing=pricing, model=model, usage=usage, clock=clock)
        self._prior = prior_thread_usage or TokenUsage()
        self._started: dict[str, float] = {}
        self._responses: set[Any] = set()

    # -- input --------------------------------------------------------------------------

    def consume_session_line(self, line: str) -> None:
        """Take one line of the CLI's session log; a ``token_usage_record`` is one model call."""
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            return  # the log tail hands over whole lines only; anything else is not the CLI's
        if not isinstance(record, dict) or record.get("type") != "token_usage_record":
            return
        payload = record.get("payload")
        if not isinstance(payload, dict) or not isinstance(payload.get("usage"), dict):
            return
        response_id = payload.get("response_id")
        if response_id is not None and response_id in self._responses:
            return
        self._responses.add(response_id)
        tokens = CodexUsage.model_validate(payload["usage"]).tokens()
        self._count(tokens, count_step=True)
        now = self._clock()
        self._steps.append(
            LLMCall(
                model=self.model,
                usage=tokens,
                cost=self._cost(tokens),
                latency=max(0.0, now - self._call_started),
                request_id=str(response_id) if response_id else None,
            )
        )
        self._call_started = now

    # -- events -------------------------------------------------------------------------

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "thread.started":
            self.outcome.thread_id = event.get("thread_id") or self.outcome.thread_id
        elif kind == "turn.started":
            self._call_started = self._clock()
        elif kind in ("item.started", "item.updated", "item.completed") and isinstance(event.get("item"), dict):
            self._item(kind, event["item"])
        elif kind == "turn.completed":
            self._turn_completed(event)
        elif kind == "turn.failed":
            error = event.get("error")
            error = error if isinstance(error, dict) else {}
            self.outcome.turn_failed = str(error.get("message") or "turn failed")
            self._steps.append(ErrorStep(message=self.outcome.turn_failed, error_type="turn_failed"))
        elif kind == "error":
            message = str(event.get("message") or "error")
            self.outcome.errors.append(message)
            self._steps.append(ErrorStep(message=message, error_type="stream_error"))
        else:
            self._keep_unknown(event)

    def _turn_completed(self, event: dict[str, Any]) -> None:
        self.outcome.turn_completed = True
        try:
            total = CodexUsage.model_validate(event.get("usage") or {}).tokens()
        except ValidationError:
            return
        self.outcome.cli_usage = token_difference(total, self._prior)

    def _item(self, kind: str, item: dict[str, Any]) -> None:
        item_id = str(item.get("id") or "")
        item_type = item.get("type")
        if kind == "item.started":
            self._started[item_id] = self._clock()
            return
        if kind != "item.completed":
            return
        step = self._item_step(item_type, item)
        if step is None:
            if len(self.outcome.unknown_events) < KEEP_UNKNOWN:
                self.outcome.unknown_events.append({"type": kind, "item": item})
            return
        if isinstance(step, ToolUseStep):
            started = self._started.pop(item_id, None)
            step.tool_call_id = item_id or None
            step.elapsed = max(0.0, self._clock() - started) if started is not None else None
        self._steps.append(step)

    def _item_step(self, item_type: Any, item: dict[str, Any]) -> TrajectoryStep | None:
        if item_type == "agent_message":
            return AgentTextStep(content=str(item.get("text") or ""))
        if item_type == "reasoning":
            return ThinkingStep(content=str(item.get("text") or ""))
        if item_type == "command_execution":
            status = item.get("status")
            return ToolUseStep(
                tool="exec_command",
                arguments={"command": str(item.get("command") or "")},
                result=str(item.get("aggregated_output") or ""),
                exit_code=item.get("exit_code"),
                is_error=status != "completed",
                metadata={"status": status},
            )
        if item_type == "file_change":
            return ToolUseStep(
                tool="apply_patch",
                arguments={"changes": item.get("changes") or []},
                result=str(item.get("status") or ""),
                is_error=item.get("status") != "completed",
            )
        if item_type == "mcp_tool_call":
            return self._mcp_step(item)
        if item_type == "web_search":
            return ToolUseStep(tool="web_search", arguments={"query": str(item.get("query") or "")})
        if item_type == "todo_list":
            return PlanStep(state="todo", plan=[dict(entry) for entry in item.get("items") or [] if isinstance(entry, dict)])
        if item_type == "error":
            message = str(item.get("message") or "")
            self.outcome.warnings.append(message)
            return ErrorStep(message=message, error_type="codex_warning")
        return None

    @staticmethod
    def _mcp_step(item: dict[str, Any]) -> ToolUseStep:
        arguments = item.get("arguments")
        error = item.get("error") if isinstance(item.get("error"), dict) else None
        result = item.get("result")
        result = result if isinstance(result, dict) else {}
        text = "\n".join(str(c.get("text", "")) for c in result.get("content") or [] if isinstance(c, dict))
        return ToolUseStep(
            tool=f"{item.get('server')}.{item.get('tool')}",
            arguments=arguments if isinstance(arguments, (dict, str)) else json.dumps(arguments),
            result=str(error.get("message")) if error else text,
            is_error=error is not None or item.get("status") == "failed",
        )


def create_parser(**options: Any) -> CodexExecParser:
    """The ``codex-exec-json`` stream parser factory (``agentrig_stream_parsers``)."""
    return CodexExecParser(**options)
