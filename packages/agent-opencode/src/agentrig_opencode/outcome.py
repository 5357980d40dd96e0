"""What an ``opencode run --format json`` run reported besides steps: its session, its totals, its errors.

The CLI's event and field sets grow between versions, so the models keep
fields they do not name (``extra="allow"``) instead of failing on them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agentrig.agents.cli_stream import CliStreamOutcome
from agentrig.usage import TokenUsage


class OpenCodeCache(BaseModel):
    """The cache part of a step's tokens."""

    model_config = ConfigDict(extra="allow")

    read: int = 0
    write: int = 0


class OpenCodeTokens(BaseModel):
    """A ``step_finish`` part's ``tokens``: one model call as OpenCode counts it.

    ``input`` excludes cache reads, ``output`` excludes ``reasoning`` (OpenCode
    prices reasoning at the output rate on top of ``output``).
    """

    model_config = ConfigDict(extra="allow")

    input: int = 0
    output: int = 0
    reasoning: int = 0
    cache: OpenCodeCache = Field(default_factory=OpenCodeCache)

    def tokens(self) -> TokenUsage:
        """agentrig's :class:`TokenUsage` (``output`` counts reasoning, as OpenAI's and agentrig's do)."""
        return TokenUsage(
            input=self.input,
            output=self.output + self.reasoning,
            cache_read=self.cache.read,
            cache_write=self.cache.write,
            reasoning=self.reasoning,
        )


class OpenCodeOutcome(CliStreamOutcome):
    """How one CLI run went, as its stream told it (``opencode_outcome.json``); the usage and end fields are
    :class:`~agentrig.agents.cli_stream.CliStreamOutcome`'s.

    ``cli_usage`` and ``cli_cost`` are the CLI's own figures: the sum of its
    ``step_finish`` parts (one per model call), counted live as they came, so
    ``live_usage`` equals ``cli_usage`` (zero, not ``None``, before the first call).
    ``live_cost`` is what agentrig made of those tokens at its own prices; with
    the prices agentrig declares in the CLI's config it equals ``cli_cost``.
    """

    model_config = ConfigDict(extra="forbid")

    cli_usage: TokenUsage = Field(default_factory=TokenUsage)
    session_id: str | None = None
    errors: list[str] = Field(default_factory=list)
    cli_cost: float = 0.0
    last_finish_reason: str | None = None

    @property
    def completed(self) -> bool:
        """The CLI exited 0, reported no error and made at least one model call."""
        return self.exit_code == 0 and not self.errors and self.model_calls > 0
