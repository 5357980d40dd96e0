"""The ``gemini-stream-json`` parser: the Gemini CLI's stream JSON and session log as trajectory steps.

Facts this parser is built on (measured on CLI 0.61.0, see ``tests/streams/``):

* ``--output-format stream-json`` writes one JSON event per line: ``init``
  (``session_id``, ``model``), ``message`` (``role`` ``user`` with the prompt, or
  ``assistant`` with a text piece and ``delta: true``), ``tool_use`` (``tool_name``,
  ``tool_id``, ``parameters``), ``tool_result`` (``tool_id``, ``status``
  ``success``/``error``, ``output``, ``error`` with ``type`` and ``message``),
  ``error`` (``severity`` ``warning``/``error``, ``message``: a loop detected, an
  empty reply, ...), and last ``result`` (``status``, ``error``, ``stats``: the run's
  token totals, per model too). A failed run also ends with a ``result``
  (``status: "error"``) before a non-zero exit;
* that stream has no usage per model call and no thinking: the CLI's session log
  (``$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-*.jsonl``) has them, one
  ``gemini`` record per model reply (``id``, ``model``, ``tokens``, ``thoughts``), written
  when the reply is complete, while a tool it asked for may already run, and written
  again (same ``id``) once its tool calls are done. The agent hands the log's new lines
  to :meth:`GeminiStreamParser.consume_session_line` as it grows; each record's first
  appearance is one :class:`~agentrig.trajectory.LLMCall` (its ``request_id`` the
  record's ``id``; its thoughts as thinking steps before it), counted in the live
  tracker at once;
* ``result.stats`` is the CLI's own total for this run. At the end the tracker is brought
  to it (only the difference is added), so recorded usage and cost equal what the CLI
  reports, calls outside the session log (a utility model's) included.

Unknown events and fields are kept, never fatal: the CLI's format grows.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from agentrig.agents.cli_stream import JsonLinesParser
from agentrig.trajectory import AgentTextStep, ErrorStep, LLMCall, ThinkingStep, ToolUseStep
from agentrig.usage import UsageTracker
from agentrig_gemini_cli.outcome import GeminiError, GeminiLogTokens, GeminiOutcome, GeminiStats

if TYPE_CHECKING:
    from agentrig.pricing import APIPricing

PARSER_NAME = "gemini-stream-json"


def _thoughts_text(thoughts: Any) -> str:
    """A reply's thoughts in the session log as one text. The CLI logs one per streamed piece
    (``{subject, description}``): pieces run on, a piece with a subject starts a new thought."""
    text = ""
    for thought in thoughts if isinstance(thoughts, list) else []:
        if not isinstance(thought, dict):
            continue
        subject = str(thought.get("subject") or "")
        if subject:
            text += f"\n\n**{subject}**\n"
        text += str(thought.get("description") or "")
    return text.strip()


class GeminiStreamParser(JsonLinesParser[GeminiOutcome]):
    """Incremental parser of the Gemini CLI's stream JSON; see the module docstring."""

    def __init__(
        self,
        *,
        pricing: APIPricing | None = None,
        model: str = "",
        usage: UsageTracker | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(GeminiOutcome(), pricing=pricing, model=model, usage=usage, clock=clock)
        self._text = ""
        self._tools: dict[str, tuple[str, Any, float]] = {}
        self._replies: set[str] = set()

    # -- input --------------------------------------------------------------------------

    def consume_session_line(self, line: str) -> None:
        """Take one line of the CLI's session log; a ``gemini`` record seen first is one model call."""
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            return  # the log tail hands over whole lines only; anything else is not the CLI's
        if not isinstance(record, dict) or record.get("type") != "gemini" or not isinstance(record.get("tokens"), dict):
            return
        reply_id = str(record.get("id") or "")
        if reply_id in self._replies:
            return  # the same reply written again with its tool calls
        self._replies.add(reply_id)
        try:
            tokens = GeminiLogTokens.model_validate(record["tokens"]).tokens()
        except ValidationError:
            return
        thinking = _thoughts_text(record.get("thoughts"))
        if thinking:
            self._steps.append(ThinkingStep(content=thinking))
        self._count(tokens, count_step=True)
        now = self._clock()
        self._steps.append(
            LLMCall(
                model=str(record.get("model") or self.model),
                usage=tokens,
                cost=self._cost(tokens),
                latency=max(0.0, now - self._call_started),
                request_id=reply_id or None,  # the session log's message id: the API's responseId is not logged
            )
        )
        self._call_started = now

    def _close(self) -> None:
        """The text and tool calls left open."""
        self._flush_text()
        for tool_id in list(self._tools):
            self._steps.append(self._tool_step(tool_id, None, interrupted=True))

    # -- events -------------------------------------------------------------------------

    def _event(self, event: dict[str, Any]) -> None:
        handler = _HANDLERS.get(str(event.get("type")))
        if handler is not None:
            handler(self, event)
        else:
            self._keep_unknown(event)

    def _init(self, event: dict[str, Any]) -> None:
        self.outcome.session_id = str(event.get("session_id") or "") or self.outcome.session_id
        self.outcome.model = str(event.get("model") or "") or self.outcome.model

    def _message(self, event: dict[str, Any]) -> None:
        if event.get("role") == "assistant":
            self._text += str(event.get("content") or "")

    def _tool_use(self, event: dict[str, Any]) -> None:
        self._flush_text()
        tool_id = str(event.get("tool_id") or "")
        self._tools[tool_id] = (str(event.get("tool_name") or ""), event.get("parameters"), self._clock())

    def _tool_result(self, event: dict[str, Any]) -> None:
        self._flush_text()
        self._steps.append(self._tool_step(str(event.get("tool_id") or ""), event))

    def _error(self, event: dict[str, Any]) -> None:
        self._flush_text()
        message = str(event.get("message") or "error")
        if event.get("severity") == "warning":
            self.outcome.warnings.append(message)
            self._steps.append(ErrorStep(message=message, error_type="gemini_warning"))
        else:
            self.outcome.errors.append(message)
            self._steps.append(ErrorStep(message=message, error_type="gemini_error"))

    def _result(self, event: dict[str, Any]) -> None:
        self._flush_text()
        status = event.get("status")
        self.outcome.status = status if status in ("success", "error") else "error"
        if isinstance(event.get("error"), dict):
            self.outcome.error = GeminiError.model_validate(event["error"])
            self._steps.append(ErrorStep(message=self.outcome.error.message, error_type=self.outcome.error.type or "result"))
        try:
            self.outcome.stats = GeminiStats.model_validate(event.get("stats") or {})
        except ValidationError:
            return
        self.outcome.cli_usage = self.outcome.stats.tokens()

    def _flush_text(self) -> None:
        if self._text:
            self._steps.append(AgentTextStep(content=self._text))
            self._text = ""

    def _tool_step(self, tool_id: str, result: dict[str, Any] | None, *, interrupted: bool = False) -> ToolUseStep:
        name, parameters, started = self._tools.pop(tool_id, ("", None, None))
        error = result.get("error") if result is not None and isinstance(result.get("error"), dict) else None
        output = result.get("output") if result is not None else None
        metadata: dict[str, Any] | None = None
        if interrupted:
            metadata = {"status": "interrupted"}
        elif error is not None:
            metadata = {"error_type": error.get("type")}
        return ToolUseStep(
            tool=name or "unknown",
            arguments=parameters if isinstance(parameters, (dict, str)) else json.dumps(parameters),
            tool_call_id=tool_id or None,
            result=str(error.get("message") or "") if error is not None else (str(output) if output is not None else None),
            is_error=interrupted or error is not None or (result is not None and result.get("status") == "error"),
            elapsed=max(0.0, self._clock() - started) if started is not None else None,
            metadata=metadata,
        )


_HANDLERS: dict[str, Callable[[GeminiStreamParser, dict[str, Any]], None]] = {
    "init": GeminiStreamParser._init,
    "message": GeminiStreamParser._message,
    "tool_use": GeminiStreamParser._tool_use,
    "tool_result": GeminiStreamParser._tool_result,
    "error": GeminiStreamParser._error,
    "result": GeminiStreamParser._result,
}


def create_parser(**options: Any) -> GeminiStreamParser:
    """The ``gemini-stream-json`` stream parser factory (``agentrig_stream_parsers``)."""
    return GeminiStreamParser(**options)
