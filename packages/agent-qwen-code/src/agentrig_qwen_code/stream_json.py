"""The ``qwen-stream-json`` parser: Qwen Code's ``--output-format stream-json`` as trajectory steps.

Facts this parser is built on (measured on CLI 0.24.4, see ``tests/streams/``):

* one JSON event per line, in the shape of Claude Code's stream JSON: ``system``
  (``subtype: init``: ``session_id``, ``model``, ``qwen_code_version``, ``mcp_servers``),
  ``assistant`` (``message.content`` blocks ``text``, ``thinking``, ``tool_use`` with
  ``id``, ``name``, ``input``; ``message.usage``), ``user`` (``tool_result`` blocks:
  ``tool_use_id``, ``is_error``, ``content``), ``stream_event`` (progress: goal state,
  partial messages) and last ``result`` (``subtype`` ``success`` or
  ``error_during_execution``, ``is_error``, ``error.message``, ``num_turns``, ``usage``);
* a model call may arrive as several ``assistant`` messages (its text, then its tool
  calls), each with its own ``id``: only the last carries the call's usage, the others
  count zero. A message with a non-zero ``usage`` ends one model call (one
  :class:`~agentrig.trajectory.LLMCall`, counted in the live tracker at once). It arrives
  before the tools it asks for run, so a limit can end the run while a tool works;
* a failed model request is an ``assistant`` text ``[API Error: ...]`` with zero usage,
  followed by a ``result`` with ``is_error`` and ``error.message``;
* ``result.usage`` covers the whole CLI session: a resumed session's count includes the
  earlier runs'. The agent passes what the session had counted before this run
  (``session_usage_before``); this run's figure is the difference, and the tracker is
  brought to it at the end, so recorded usage and cost equal what the CLI reports;
* ``--max-session-turns`` reached ends the CLI with status 53 and no ``result``.

Unknown events and fields are kept, never fatal: the CLI's format grows.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from agentrig.agents.cli_stream import JsonLinesParser, token_difference
from agentrig.trajectory import AgentTextStep, ErrorStep, LLMCall, ThinkingStep, ToolUseStep
from agentrig.usage import TokenUsage, UsageTracker
from agentrig_qwen_code.outcome import QwenOutcome, QwenUsage

if TYPE_CHECKING:
    from agentrig.pricing import APIPricing

PARSER_NAME = "qwen-stream-json"
#: How a failed model request's text starts.
API_ERROR_PREFIX = "[API Error"


def _result_text(content: Any) -> str:
    """A tool result's content as text (a string, or a list of ``text`` blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text") or "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return "" if content is None else json.dumps(content)


class QwenStreamParser(JsonLinesParser[QwenOutcome]):
    """Incremental parser of Qwen Code's stream JSON; see the module docstring."""

    def __init__(
        self,
        *,
        pricing: APIPricing | None = None,
        model: str = "",
        usage: UsageTracker | None = None,
        clock: Callable[[], float] = time.monotonic,
        session_usage_before: TokenUsage | None = None,
    ) -> None:
        """A parser for one run; ``session_usage_before``: what the resumed CLI session had counted before it."""
        super().__init__(QwenOutcome(), pricing=pricing, model=model, usage=usage, clock=clock)
        self._before = session_usage_before or TokenUsage()
        self._tools: dict[str, tuple[str, Any, float]] = {}

    def _close(self) -> None:
        """Tool calls left without a result (the CLI was killed while they ran)."""
        for tool_id in list(self._tools):
            self._steps.append(self._tool_step(tool_id, None, interrupted=True))

    # -- events -------------------------------------------------------------------------

    def _event(self, event: dict[str, Any]) -> None:
        kind = str(event.get("type"))
        if kind == "stream_event":
            return  # progress (goal state, partial messages): the complete messages follow
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, event)
        else:
            self._keep_unknown(event)

    def _system(self, event: dict[str, Any]) -> None:
        if event.get("subtype") != "init":
            self._keep_unknown(event)
            return
        self.outcome.session_id = str(event.get("session_id") or "") or self.outcome.session_id
        self.outcome.model = str(event.get("model") or "") or self.outcome.model
        self.outcome.cli_version = str(event.get("qwen_code_version") or "") or None
        servers = event.get("mcp_servers")
        if isinstance(servers, list):
            self.outcome.mcp_servers = [s for s in servers if isinstance(s, dict)]

    def _assistant(self, event: dict[str, Any]) -> None:
        message = event.get("message")
        if not isinstance(message, dict):
            self._keep_unknown(event)
            return
        content = message.get("content")
        blocks: list[Any] = content if isinstance(content, list) else []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and block.get("text"):
                text = str(block["text"])
                if text.startswith(API_ERROR_PREFIX):
                    self._steps.append(ErrorStep(message=text, error_type="api_error"))
                else:
                    self._steps.append(AgentTextStep(content=text))
            elif kind == "thinking" and block.get("thinking"):
                self._steps.append(ThinkingStep(content=str(block["thinking"])))
        try:
            usage = QwenUsage.model_validate(message.get("usage") or {})
        except ValidationError:
            usage = QwenUsage()
        if not usage.is_empty():
            self._model_call(usage, str(message.get("model") or self.model), str(message.get("id") or "") or None)
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                self._tools[str(block.get("id") or "")] = (str(block.get("name") or ""), block.get("input"), self._clock())

    def _model_call(self, usage: QwenUsage, model: str, message_id: str | None) -> None:
        tokens = usage.tokens()
        self._count(tokens, count_step=True)
        now = self._clock()
        self._steps.append(
            LLMCall(
                model=model,
                usage=tokens,
                cost=self._cost(tokens),
                latency=max(0.0, now - self._call_started),
                request_id=message_id,  # the stream's message id: the API's response id is not in the stream
            )
        )
        self._call_started = now

    def _user(self, event: dict[str, Any]) -> None:
        message = event.get("message")
        blocks = message.get("content") if isinstance(message, dict) else None
        for block in blocks if isinstance(blocks, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                self._steps.append(self._tool_step(str(block.get("tool_use_id") or ""), block))

    def _result(self, event: dict[str, Any]) -> None:
        self.outcome.subtype = str(event.get("subtype") or "") or None
        failed = bool(event.get("is_error")) or self.outcome.subtype != "success"
        self.outcome.status = "error" if failed else "success"
        error = event.get("error")
        if isinstance(error, dict) and error.get("message"):
            self.outcome.error = str(error["message"])
        elif failed:
            self.outcome.error = str(event.get("result") or self.outcome.subtype or "error")
        if isinstance(event.get("num_turns"), int):
            self.outcome.num_turns = event["num_turns"]
        if isinstance(event.get("result"), str):
            self.outcome.result = event["result"]
        try:
            session = QwenUsage.model_validate(event.get("usage") or {}).tokens()
        except ValidationError:
            return
        self.outcome.session_usage = session
        run = token_difference(session, self._before)
        self.outcome.cli_usage = run if min(run.input, run.output, run.cache_read) >= 0 else session

    def _tool_step(self, tool_id: str, result: dict[str, Any] | None, *, interrupted: bool = False) -> ToolUseStep:
        name, arguments, started = self._tools.pop(tool_id, ("", None, None))
        is_error = interrupted or (result is not None and bool(result.get("is_error")))
        return ToolUseStep(
            tool=name or "unknown",
            arguments=arguments if isinstance(arguments, (dict, str)) else json.dumps(arguments),
            tool_call_id=tool_id or None,
            result=_result_text(result.get("content")) if result is not None else None,
            is_error=is_error,
            elapsed=max(0.0, self._clock() - started) if started is not None else None,
            metadata={"status": "interrupted"} if interrupted else None,
        )


_HANDLERS: dict[str, Callable[[QwenStreamParser, dict[str, Any]], None]] = {
    "system": QwenStreamParser._system,
    "assistant": QwenStreamParser._assistant,
    "user": QwenStreamParser._user,
    "result": QwenStreamParser._result,
}


def create_parser(**options: Any) -> QwenStreamParser:
    """The ``qwen-stream-json`` stream parser factory (``agentrig_stream_parsers``)."""
    return QwenStreamParser(**options)
