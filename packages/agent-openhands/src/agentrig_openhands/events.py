"""The ``openhands-jsonl`` stream parser: agentrig's OpenHands driver's JSON lines as trajectory steps.

The driver (:mod:`agentrig_openhands.driver`) writes one line per model call
(``llm_call``, with its usage and OpenHands' cost, before what the call asked
for), per tool call and its observation, per message and error, and an
``end`` line with OpenHands' own totals. Each model call is an ``LLMCall`` step
counted into the live usage at once (a limit can then end the run while the tool
it asked for runs); a tool call is a ``ToolUseStep`` completed by its observation.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from agentrig.agents.cli_stream import JsonLinesParser
from agentrig.trajectory import AgentTextStep, ErrorStep, LLMCall, ThinkingStep, ToolUseStep
from agentrig_openhands.outcome import OpenHandsCall, OpenHandsOutcome, OpenHandsTokens

#: How much of a tool's output a step keeps.
MAX_RESULT = 10000


class OpenHandsStreamParser(JsonLinesParser[OpenHandsOutcome]):
    """Steps, live usage and the outcome of one driver run; see the module docstring."""

    def __init__(self, **options: Any) -> None:
        """A parser for one run (``pricing``, ``model``, ``usage``, ``clock`` as :class:`JsonLinesParser`)."""
        super().__init__(OpenHandsOutcome(), **options)
        self._pending: dict[str, ToolUseStep] = {}

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "llm_call":
            self._llm_call(event)
        elif kind == "action":
            self._action(event)
        elif kind == "observation":
            self._observation(event)
        elif kind == "message":
            if event.get("source") == "agent":
                if event.get("reasoning"):
                    self._steps.append(ThinkingStep(content=str(event["reasoning"])))
                self._steps.append(AgentTextStep(content=str(event.get("text") or "")))
        elif kind == "error":
            detail = str(event.get("detail") or "")
            self.outcome.errors.append(detail)
            self._steps.append(ErrorStep(message=detail, error_type=str(event.get("code") or "conversation_error")))
        elif kind == "start":
            self.outcome.sdk_version = event.get("sdk_version")
            self.outcome.python = event.get("python")
            self.outcome.conversation_id = event.get("conversation_id")
            self.outcome.resumed = bool(event.get("resumed"))
        elif kind == "end":
            self._end(event)
        else:
            self._keep_unknown(event)

    def _llm_call(self, event: dict[str, Any]) -> None:
        try:
            tokens = OpenHandsTokens.model_validate(event.get("usage") or {}).tokens()
        except ValidationError:
            self._keep_unknown(event)
            return
        reported = float(event.get("cost") or 0.0)
        catalog = self._cost(tokens)
        cost = catalog if catalog is not None else reported
        self._usage.step(tokens, cost)
        self.outcome.live_usage = self.outcome.live_usage + tokens
        self.outcome.live_cost += cost
        self.outcome.model_calls += 1
        self.outcome.calls.append(
            OpenHandsCall(response_id=event.get("response_id"), tokens=tokens, openhands_cost=reported, catalog_cost=catalog)
        )
        self._steps.append(
            LLMCall(
                model=self.model or str(event.get("model") or ""),
                usage=tokens,
                cost=cost,
                latency=float(event.get("latency") or 0.0),
                request_id=event.get("response_id"),
            )
        )

    def _action(self, event: dict[str, Any]) -> None:
        thought = str(event.get("thought") or "")
        if event.get("reasoning"):
            self._steps.append(ThinkingStep(content=str(event["reasoning"])))
        if thought:
            self._steps.append(AgentTextStep(content=thought))
        arguments = event.get("arguments")
        step = ToolUseStep(
            tool=str(event.get("tool") or ""),
            arguments={k: v for k, v in arguments.items() if v is not None} if isinstance(arguments, dict) else str(arguments),
            tool_call_id=event.get("tool_call_id"),
        )
        if step.tool_call_id:
            self._pending[step.tool_call_id] = step
        else:
            self._steps.append(step)

    def _observation(self, event: dict[str, Any]) -> None:
        step = self._pending.pop(str(event.get("tool_call_id")), None)
        if step is None:
            step = ToolUseStep(tool=str(event.get("tool") or ""), tool_call_id=event.get("tool_call_id"))
        exit_code = event.get("exit_code")
        self._steps.append(
            step.model_copy(
                update={
                    "result": str(event.get("text") or "")[:MAX_RESULT],
                    "is_error": bool(event.get("is_error")),
                    "exit_code": exit_code if isinstance(exit_code, int) and exit_code >= 0 else None,
                }
            )
        )

    def _end(self, event: dict[str, Any]) -> None:
        self.outcome.status = str(event.get("status") or "") or None
        self.outcome.error = event.get("error")
        self.outcome.openhands_cost = float(event.get("accumulated_cost") or 0.0)
        try:
            self.outcome.cli_usage = OpenHandsTokens.model_validate(event.get("accumulated_usage") or {}).tokens()
        except ValidationError:
            self.outcome.cli_usage = None
        if self.pricing is not None:
            self.outcome.catalog_cost = self.pricing.get_cost(self.outcome.cli_usage or self.outcome.live_usage)

    def _close(self) -> None:
        """Tool calls whose observation never came (the run was killed while they ran)."""
        self._steps.extend(self._pending.values())
        self._pending.clear()

    def _settle(self) -> None:
        super()._settle()
        if self.pricing is None and self.outcome.openhands_cost is not None:
            # no catalog price: the run costs what OpenHands reported
            missing = self.outcome.openhands_cost - self.outcome.live_cost
            if abs(missing) > 1e-12:
                self._usage.cost += missing
                self.outcome.live_cost += missing


def create_parser(**options: Any) -> OpenHandsStreamParser:
    """The ``openhands-jsonl`` stream parser factory (``agentrig_stream_parsers``)."""
    return OpenHandsStreamParser(**options)
