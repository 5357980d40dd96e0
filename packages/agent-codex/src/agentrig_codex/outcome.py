"""What a ``codex exec --json`` run reported besides steps: its thread, its totals, its errors.

The CLI's event and field sets grow between versions, so the models keep
fields they do not name (``extra="allow"``) instead of failing on them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agentrig.agents.cli_stream import CliStreamOutcome
from agentrig.usage import TokenUsage


class CodexUsage(BaseModel):
    """A Codex usage record (``turn.completed.usage``, the session log's ``token_count``).

    OpenAI's convention: ``input_tokens`` counts cached and cache-written input,
    ``output_tokens`` counts reasoning.
    """

    model_config = ConfigDict(extra="allow")

    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_output_tokens: int = 0

    def tokens(self) -> TokenUsage:
        """agentrig's :class:`TokenUsage` (``input`` without the cache reads and writes)."""
        return TokenUsage(
            input=max(0, self.input_tokens - self.cached_input_tokens - self.cache_write_input_tokens),
            output=self.output_tokens,
            cache_read=self.cached_input_tokens,
            cache_write=self.cache_write_input_tokens,
            reasoning=self.reasoning_output_tokens,
        )


class CodexOutcome(CliStreamOutcome):
    """How one CLI run went, as its stream told it (``codex_outcome.json``); the usage and end fields are
    :class:`~agentrig.agents.cli_stream.CliStreamOutcome`'s.

    ``cli_usage`` is the CLI's own figure: ``turn.completed.usage`` (the thread's
    total; for a resumed thread, minus the total it had before). ``live_usage``
    and ``live_cost`` are what agentrig counted per model call while it ran; the
    parser adds any difference so the tracker ends equal to the CLI's figure.
    """

    model_config = ConfigDict(extra="forbid")

    thread_id: str | None = None
    turn_completed: bool = False
    turn_failed: str | None = None
    errors: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
