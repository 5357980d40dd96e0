"""The ``opencode-run-json`` parser: ``opencode run --format json`` events as trajectory steps.

Facts this parser is built on (measured on CLI 1.18.33, see ``tests/streams/``):

* standard output carries one JSON object per line, ``{type, timestamp,
  sessionID, ...}``: ``step_start`` (a model call begins), ``reasoning``
  (with ``--thinking``) and ``text`` when a part is complete, ``tool_use``
  when a tool call has finished (``part.tool``, ``part.callID``,
  ``part.state`` with ``status`` ``completed`` or ``error``, ``input``,
  ``output`` or ``error``, ``metadata.exit`` for bash, ``time.start`` /
  ``time.end`` in ms; a call of a tool it does not offer comes as the tool
  ``invalid``, with the name in ``input.tool``), ``step_finish`` (the model call's ``reason``,
  ``tokens`` and ``cost``) and ``error`` (``error.name``, ``error.data.message``);
* a ``step_finish`` is OpenCode's own figure for one model call: its tokens
  (``input`` without cache reads, ``output`` without ``reasoning``) and its
  cost at the prices the config declares. It comes once the tools that call
  asked for have finished (the AI SDK holds a step's end until its tool
  results are in), so a model call's usage is known then, not while its tools run;
* the process exits 0 when the session is idle again, 1 after an error.

Each ``step_finish`` becomes one :class:`~agentrig.trajectory.LLMCall`,
counted in the live tracker at once. Unknown events and fields are kept,
never fatal: the CLI's format grows.
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
from agentrig_opencode.outcome import OpenCodeOutcome, OpenCodeTokens

if TYPE_CHECKING:
    from agentrig.pricing import APIPricing

PARSER_NAME = "opencode-run-json"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _seconds(timing: dict[str, Any]) -> float | None:
    start, end = timing.get("start"), timing.get("end")
    if isinstance(start, (int, float)) and isinstance(end, (int, float)):
        return max(0.0, (end - start) / 1000)
    return None


def error_message(error: Any) -> str:
    """The message of an ``error`` event's error (``data.message``, else its name)."""
    error = _dict(error)
    data = _dict(error.get("data"))
    return str(data.get("message") or error.get("name") or "error")


class OpenCodeRunParser(JsonLinesParser[OpenCodeOutcome]):
    """Incremental parser of ``opencode run --format json``; see the module docstring.

    ``usage`` is the live tracker it counts into (a fresh one when none is given).
    """

    def __init__(
        self,
        *,
        pricing: APIPricing | None = None,
        model: str = "",
        usage: UsageTracker | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """A parser for one CLI run (its outcome a fresh :class:`OpenCodeOutcome`)."""
        super().__init__(OpenCodeOutcome(), pricing=pricing, model=model, usage=usage, clock=clock)

    # -- events -------------------------------------------------------------------------

    def _event(self, event: dict[str, Any]) -> None:
        if isinstance(event.get("sessionID"), str):
            self.outcome.session_id = event["sessionID"]
        kind = event.get("type")
        part = _dict(event.get("part"))
        if kind == "step_start":
            self._call_started = self._clock()
        elif kind == "text":
            self._steps.append(AgentTextStep(content=str(part.get("text") or "")))
        elif kind == "reasoning":
            self._steps.append(ThinkingStep(content=str(part.get("text") or "")))
        elif kind == "tool_use":
            self._steps.append(self._tool_step(part))
        elif kind == "step_finish":
            self._step_finish(event, part)
        elif kind == "error":
            message = error_message(event.get("error"))
            self.outcome.errors.append(message)
            self._steps.append(ErrorStep(message=message, error_type=str(_dict(event.get("error")).get("name") or "error")))
        else:
            self._keep_unknown(event)

    @staticmethod
    def _tool_step(part: dict[str, Any]) -> ToolUseStep:
        state = _dict(part.get("state"))
        metadata = _dict(state.get("metadata"))
        failed = state.get("status") != "completed"
        arguments = state.get("input")
        exit_code = metadata.get("exit")
        tool = str(part.get("tool") or "")
        if tool == "invalid":  # a call of a tool OpenCode does not offer, answered with an error for the model
            tool, failed = str(_dict(arguments).get("tool") or tool), True
            state = {**state, "error": state.get("output") or _dict(arguments).get("error")}
        return ToolUseStep(
            tool=tool,
            arguments=arguments if isinstance(arguments, (dict, str)) else json.dumps(arguments),
            tool_call_id=str(part["callID"]) if part.get("callID") else None,
            result=str(state.get("error") if failed else state.get("output") or ""),
            is_error=failed or (isinstance(exit_code, int) and exit_code != 0),
            exit_code=exit_code if isinstance(exit_code, int) else None,
            elapsed=_seconds(_dict(state.get("time"))),
            metadata={"status": state.get("status"), "title": state.get("title")},
        )

    def _step_finish(self, event: dict[str, Any], part: dict[str, Any]) -> None:
        try:
            tokens = OpenCodeTokens.model_validate(_dict(part.get("tokens"))).tokens()
        except ValidationError:
            self._keep_unknown(event)
            return
        reported = part.get("cost")
        cost = self._cost(tokens)
        self._count(tokens, count_step=True)  # the tracker, live_usage, live_cost and model_calls
        outcome = self.outcome
        outcome.cli_usage = outcome.cli_usage + tokens
        outcome.cli_cost += float(reported) if isinstance(reported, (int, float)) else 0.0
        outcome.last_finish_reason = str(part.get("reason")) if part.get("reason") is not None else None
        now = self._clock()
        self._steps.append(
            LLMCall(
                model=self.model,
                usage=tokens,
                cost=cost,
                latency=max(0.0, now - self._call_started),
                request_id=str(part["messageID"]) if part.get("messageID") else None,
            )
        )


def create_parser(**options: Any) -> OpenCodeRunParser:
    """The ``opencode-run-json`` stream parser factory (``agentrig_stream_parsers``)."""
    return OpenCodeRunParser(**options)
