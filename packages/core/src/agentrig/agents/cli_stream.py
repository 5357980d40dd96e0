"""The shared half of the parsers of a CLI agent's JSON-lines stream (Codex, Gemini CLI, OpenCode, ...).

Such a CLI writes one JSON event per line on standard output. :class:`JsonLinesParser`
holds what does not depend on the CLI: cutting the stream into lines as it arrives
in pieces of any size, keeping lines that are not JSON and events nobody handles (a
few, never fatal: the CLI's format grows), taking the process's end, handing out the
steps, and the live usage (:meth:`JsonLinesParser._count`) brought at the end to the
CLI's own total (:meth:`JsonLinesParser._settle`). A subclass handles its CLI's events
in :meth:`JsonLinesParser._event` and its outcome subclasses :class:`CliStreamOutcome`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, Field

from agentrig.usage import TokenUsage, UsageTracker

if TYPE_CHECKING:
    from agentrig.pricing import APIPricing
    from agentrig.runtime.interface import RuntimeEvent
    from agentrig.trajectory import TrajectoryStep

#: How many lines that are not JSON, and events nobody handles, an outcome keeps.
KEEP_UNKNOWN = 50


def token_difference(a: TokenUsage, b: TokenUsage) -> TokenUsage:
    """``a`` minus ``b``, kind by kind (a kind may come out negative)."""
    return TokenUsage(
        input=a.input - b.input,
        output=a.output - b.output,
        cache_read=a.cache_read - b.cache_read,
        cache_write=a.cache_write - b.cache_write,
        reasoning=a.reasoning - b.reasoning,
    )


class CliStreamOutcome(BaseModel):
    """What every JSON-lines CLI run reports besides steps: the usage counted, how the process ended.

    ``cli_usage`` is the CLI's own total for the run (``None``: it reported none); ``live_usage``
    and ``live_cost`` are what agentrig counted per model call while it ran, ``model_calls`` how
    many. Subclasses add their CLI's own fields.
    """

    cli_usage: TokenUsage | None = None
    live_usage: TokenUsage = Field(default_factory=TokenUsage)
    live_cost: float = 0.0
    model_calls: int = 0
    exit_code: int | None = None
    timeout_kind: Literal["wall", "idle"] | None = None
    unknown_events: list[dict[str, Any]] = Field(default_factory=list)
    invalid_lines: list[str] = Field(default_factory=list)


OutcomeT = TypeVar("OutcomeT", bound=CliStreamOutcome)


class JsonLinesParser(Generic[OutcomeT]):
    """An incremental parser of a CLI's JSON-lines stream into steps and usage; see the module docstring.

    ``pricing`` prices the tokens of ``model`` (``None``: cost unknown); ``usage`` is the live
    tracker the agent's limits read, updated in place.
    """

    def __init__(
        self,
        outcome: OutcomeT,
        *,
        pricing: APIPricing | None = None,
        model: str = "",
        usage: UsageTracker | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """A parser for one CLI run, reporting into ``outcome``."""
        self.pricing = pricing
        self.model = model
        self._usage = usage if usage is not None else UsageTracker()
        self._clock = clock
        self.outcome = outcome
        self._buffer = ""
        self._steps: list[TrajectoryStep] = []
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

    def drain_steps(self) -> Iterable[TrajectoryStep]:
        """The steps completed since the last call."""
        steps, self._steps = self._steps, []
        return steps

    def finish(self) -> Iterable[TrajectoryStep]:
        """Flush a last unterminated line and what :meth:`_close` leaves open; settle usage on the CLI's total."""
        if not self._finished:
            self._finished = True
            if self._buffer.strip():
                self._line(self._buffer)
            self._buffer = ""
            self._close()
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
            if len(self.outcome.invalid_lines) < KEEP_UNKNOWN:
                self.outcome.invalid_lines.append(line[:500])
            return
        if isinstance(event, dict):
            self._event(event)

    def _event(self, event: dict[str, Any]) -> None:
        """Handle one JSON event of the stream; by default keep it as unknown."""
        self._keep_unknown(event)

    def _keep_unknown(self, event: dict[str, Any]) -> None:
        """Keep an event no handler knows (the first :data:`KEEP_UNKNOWN`)."""
        if len(self.outcome.unknown_events) < KEEP_UNKNOWN:
            self.outcome.unknown_events.append(event)

    def _close(self) -> None:
        """At the end of the stream: turn what is still open (text, tool calls) into steps; by default nothing."""

    # -- usage --------------------------------------------------------------------------

    def _cost(self, tokens: TokenUsage) -> float | None:
        return self.pricing.get_cost(tokens) if self.pricing is not None else None

    def _count(self, tokens: TokenUsage, *, count_step: bool) -> None:
        """Add ``tokens`` to the live usage: a model call (``count_step``) or a correction of the total."""
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
        """Make the tracker equal the CLI's own total (add only what the live count missed)."""
        reported = self.outcome.cli_usage
        if reported is None:
            return
        missing = token_difference(reported, self.outcome.live_usage)
        if missing != TokenUsage():
            self._count(missing, count_step=False)
