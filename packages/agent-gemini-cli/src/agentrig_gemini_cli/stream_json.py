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
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from agentrig.trajectory import AgentTextStep, ErrorStep, LLMCall, ThinkingStep, ToolUseStep
from agentrig.usage import TokenUsage, UsageTracker
from agentrig_gemini_cli.outcome import GeminiError, GeminiLogTokens, GeminiOutcome, GeminiStats

if TYPE_CHECKING:
    from agentrig.pricing import APIPricing
    from agentrig.runtime.interface import RuntimeEvent
    from agentrig.trajectory import TrajectoryStep

PARSER_NAME = "gemini-stream-json"
_KEEP_UNKNOWN = 50


def _minus(a: TokenUsage, b: TokenUsage) -> TokenUsage:
    return TokenUsage(
        input=a.input - b.input,
        output=a.output - b.output,
        cache_read=a.cache_read - b.cache_read,
        cache_write=a.cache_write - b.cache_write,
        reasoning=a.reasoning - b.reasoning,
    )


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


class GeminiStreamParser:
    """Incremental parser of the Gemini CLI's stream JSON; see the module docstring."""

    def __init__(
        self,
        *,
        pricing: APIPricing | None = None,
        model: str = "",
        usage: UsageTracker | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.pricing = pricing
        self.model = model
        self._usage = usage if usage is not None else UsageTracker()
        self._clock = clock
        self.outcome = GeminiOutcome()
        self._buffer = ""
        self._text = ""
        self._steps: list[TrajectoryStep] = []
        self._tools: dict[str, tuple[str, Any, float]] = {}
        self._replies: set[str] = set()
        self._call_started = clock()
        self._finished = False

    @property
    def usage(self) -> UsageTracker:
        """The live usage: every model call so far (the tracker given, updated in place)."""
        return self._usage

    # -- input --------------------------------------------------------------------------

    def consume(self, event: RuntimeEvent) -> None:
        """Take a runtime event: stdout text (any size of piece) or the process's end."""
        if event.kind == "stdout":
            self._buffer += event.text
            *lines, self._buffer = self._buffer.split("\n")
            for line in lines:
                self._line(line)
        elif event.kind == "finished" and event.result is not None:
            self.outcome.exit_code = event.result.exit_code
            self.outcome.timeout_kind = event.result.timeout_kind

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

    def drain_steps(self) -> Iterable[TrajectoryStep]:
        """The steps completed since the last call."""
        steps, self._steps = self._steps, []
        return steps

    def finish(self) -> Iterable[TrajectoryStep]:
        """Flush a last unterminated line, the text and tool calls left open; settle usage on the CLI's total."""
        if not self._finished:
            self._finished = True
            if self._buffer.strip():
                self._line(self._buffer)
            self._buffer = ""
            self._flush_text()
            for tool_id in list(self._tools):
                self._steps.append(self._tool_step(tool_id, None, interrupted=True))
            self._settle()
        return self.drain_steps()

    # -- events -------------------------------------------------------------------------

    def _line(self, line: str) -> None:
        line = line.strip()
        if not line:
            return
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            if len(self.outcome.invalid_lines) < _KEEP_UNKNOWN:
                self.outcome.invalid_lines.append(line[:500])
            return
        if not isinstance(event, dict):
            return
        handler = _HANDLERS.get(str(event.get("type")))
        if handler is not None:
            handler(self, event)
        elif len(self.outcome.unknown_events) < _KEEP_UNKNOWN:
            self.outcome.unknown_events.append(event)

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

    # -- usage --------------------------------------------------------------------------

    def _cost(self, tokens: TokenUsage) -> float | None:
        return self.pricing.get_cost(tokens) if self.pricing is not None else None

    def _count(self, tokens: TokenUsage, *, count_step: bool) -> None:
        cost = self._cost(tokens) or 0.0
        current = self._usage.current_tokens
        self._usage.step(tokens, cost, count_step=count_step)
        if not count_step:
            self._usage.current_tokens = current  # a correction is no model call of its own
        self.outcome.live_usage = self.outcome.live_usage + tokens
        self.outcome.live_cost += cost
        if count_step:
            self.outcome.model_calls += 1

    def _settle(self) -> None:
        """Make the tracker equal the CLI's own total (add only what the session log missed)."""
        reported = self.outcome.cli_usage
        if reported is None:
            return
        missing = _minus(reported, self.outcome.live_usage)
        if missing != TokenUsage():
            self._count(missing, count_step=False)


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
