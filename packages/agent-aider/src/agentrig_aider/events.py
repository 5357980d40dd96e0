"""The ``aider-events`` stream parser: the launcher's JSON events as trajectory steps, with usage per model call.

The launcher (:mod:`agentrig_aider.launcher`, run inside aider's Python) writes one event a line:
``start``, ``model_call`` (the endpoint's ``usage`` object as LiteLLM returns it), ``model_error``,
``edits``, ``reflection``, ``tool_error`` and ``exit``. Each ``model_call`` becomes an
:class:`~agentrig.trajectory.LLMCall` priced by agentrig (aider's own price list is not used) and
the reply's text an ``agent_text`` step; the files an answer edited become an ``edit`` tool step;
a message aider sends back to the model by itself (a failed edit, lint or test errors, files it
added to the chat) a ``user`` step; failures ``error`` steps.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentrig.agents.cli_stream import CliStreamOutcome, JsonLinesParser
from agentrig.trajectory import AgentTextStep, ErrorStep, LLMCall, ToolUseStep, UserStep
from agentrig.usage import TokenUsage


class AiderUsage(BaseModel):
    """An OpenAI-style ``usage`` object as LiteLLM hands it to aider (``prompt_tokens`` counts the cached ones)."""

    model_config = ConfigDict(extra="allow")

    prompt_tokens: int | None = 0
    completion_tokens: int | None = 0
    prompt_tokens_details: dict[str, Any] | None = None
    completion_tokens_details: dict[str, Any] | None = None
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None

    def tokens(self) -> TokenUsage:
        """agentrig's :class:`TokenUsage` (``input`` without cache reads and writes)."""
        details = self.prompt_tokens_details or {}
        cached = int(details.get("cached_tokens") or self.cache_read_input_tokens or 0)
        written = int(details.get("cache_write_tokens") or self.cache_creation_input_tokens or 0)
        reasoning = int((self.completion_tokens_details or {}).get("reasoning_tokens") or 0)
        prompt = int(self.prompt_tokens or 0)
        return TokenUsage(
            input=max(0, prompt - cached - written),
            output=int(self.completion_tokens or 0),
            cache_read=cached,
            cache_write=written,
            reasoning=reasoning,
        )


class AiderOutcome(CliStreamOutcome):
    """How one aider run went (``aider_outcome.json``); usage and end fields as :class:`CliStreamOutcome`.

    ``cli_usage`` is the sum of the usage objects the endpoint returned for aider's calls (there is no
    other total: aider's own printout is rounded); ``live_usage`` equals it.
    """

    model_config = ConfigDict(extra="forbid")

    aider_version: str | None = None
    started: bool = False
    exit_event: int | None = None
    edited_files: list[str] = Field(default_factory=list)
    reflections: int = 0
    model_errors: list[str] = Field(default_factory=list)
    calls_without_usage: int = 0
    last_call_failed: bool = False
    tool_errors: list[str] = Field(default_factory=list)


class AiderEventsParser(JsonLinesParser[AiderOutcome]):
    """Turns the launcher's events into steps and live usage; see the module docstring."""

    def __init__(self, **options: Any) -> None:
        super().__init__(AiderOutcome(), **options)

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "start":
            self.outcome.started = True
            self.outcome.aider_version = event.get("aider_version")
        elif kind == "model_call":
            self._model_call(event)
        elif kind == "model_error":
            message = f"{event.get('error')}: {event.get('message')}"
            self.outcome.model_errors.append(message[:2000])
            self.outcome.last_call_failed = True
            self._steps.append(ErrorStep(message=message[:2000], error_type=str(event.get("error") or "model_error")))
            self._call_started = self._clock()
        elif kind == "edits":
            files = [str(f) for f in event.get("files") or []]
            for name in files:
                if name not in self.outcome.edited_files:
                    self.outcome.edited_files.append(name)
            error = event.get("error")
            self._steps.append(
                ToolUseStep(
                    tool="edit", arguments={"files": files}, result=str(error) if error else "applied", is_error=bool(error)
                )
            )
        elif kind == "reflection":
            self.outcome.reflections += 1
            self._steps.append(UserStep(content=str(event.get("message") or "")))
        elif kind == "tool_error":
            message = str(event.get("message") or "")
            if len(self.outcome.tool_errors) < 50:
                self.outcome.tool_errors.append(message[:2000])
            self._steps.append(ErrorStep(message=message[:2000], error_type="aider"))
        elif kind == "exit":
            self.outcome.exit_event = int(event.get("code") or 0)
        else:
            self._keep_unknown(event)

    def _model_call(self, event: dict[str, Any]) -> None:
        raw = event.get("usage")
        if isinstance(raw, dict):
            tokens = AiderUsage.model_validate(raw).tokens()
        else:
            tokens = TokenUsage()
            self.outcome.calls_without_usage += 1
        self.outcome.cli_usage = (self.outcome.cli_usage or TokenUsage()) + tokens
        self.outcome.last_call_failed = False
        self._count(tokens, count_step=True)
        now = self._clock()
        self._steps.append(
            LLMCall(
                tag=str(event.get("tag") or "act"),
                model=self.model or str(event.get("model") or ""),
                usage=tokens,
                cost=self._cost(tokens),
                latency=max(0.0, now - self._call_started),
                request_id=str(event["id"]) if event.get("id") else None,
                stop_reason=str(event["finish_reason"]) if event.get("finish_reason") else None,
            )
        )
        self._call_started = now
        content = str(event.get("content") or "")
        if content.strip():
            self._steps.append(AgentTextStep(content=content))


def create_parser(**options: Any) -> AiderEventsParser:
    """The ``aider-events`` stream parser factory (``agentrig_stream_parsers``)."""
    return AiderEventsParser(**options)
