"""What a Gemini CLI run reported besides steps: its session, its totals, its errors.

The CLI's event and field sets grow between versions, so the models of what it
writes keep fields they do not name (``extra="allow"``) instead of failing on them.

Token counts, the CLI's way: ``input_tokens`` (a session log's ``input``) is the
prompt and counts ``cached`` input; ``output_tokens`` (``output``) is the reply's
candidates without thinking; ``total_tokens`` (``total``) adds thinking and tool-use
prompt tokens. The stream gives no thinking count of its own, so agentrig counts
what ``total`` has beyond prompt and candidates as reasoning output, from the
stream and the session log alike: ``input = prompt - cached``, ``cache_read = cached``,
``output = total - prompt``, ``reasoning = total - prompt - candidates``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agentrig.agents.cli_stream import CliStreamOutcome
from agentrig.usage import TokenUsage


def gemini_tokens(*, prompt: int, candidates: int, cached: int, total: int) -> TokenUsage:
    """agentrig's :class:`TokenUsage` of the CLI's four counts (see the module docstring)."""
    beyond = max(0, total - prompt - candidates)
    return TokenUsage(
        input=max(0, prompt - cached),
        output=candidates + beyond,
        cache_read=cached,
        cache_write=0,
        reasoning=beyond,
    )


class GeminiModelStats(BaseModel):
    """One model's counts in the ``result`` event's ``stats.models``."""

    model_config = ConfigDict(extra="allow")

    total_tokens: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached: int = 0
    input: int = 0

    def tokens(self) -> TokenUsage:
        """agentrig's :class:`TokenUsage` of these counts."""
        return gemini_tokens(prompt=self.input_tokens, candidates=self.output_tokens, cached=self.cached, total=self.total_tokens)


class GeminiStats(GeminiModelStats):
    """The ``result`` event's ``stats``: the run's totals over every model the CLI called."""

    duration_ms: int = 0
    tool_calls: int = 0
    models: dict[str, GeminiModelStats] = Field(default_factory=dict)


class GeminiLogTokens(BaseModel):
    """The ``tokens`` of one model call in the CLI's session log (a ``gemini`` record)."""

    model_config = ConfigDict(extra="allow")

    input: int = 0
    output: int = 0
    cached: int = 0
    thoughts: int = 0
    tool: int = 0
    total: int = 0

    def tokens(self) -> TokenUsage:
        """agentrig's :class:`TokenUsage` of this call, mapped as the run's total is."""
        return gemini_tokens(prompt=self.input, candidates=self.output, cached=self.cached, total=self.total)


class GeminiError(BaseModel):
    """An error the ``result`` event reports."""

    model_config = ConfigDict(extra="allow")

    type: str = ""
    message: str = ""


class GeminiOutcome(CliStreamOutcome):
    """How one CLI run went, as its stream told it (``gemini_outcome.json``); the usage and end fields are
    :class:`~agentrig.agents.cli_stream.CliStreamOutcome`'s.

    ``cli_usage`` is the CLI's own figure (the ``result`` event's ``stats``, counted by the
    process for this run alone, a resumed session too). ``live_usage`` and ``live_cost`` are
    what agentrig counted per model call from the session log while it ran; the parser adds
    any difference (calls the CLI makes outside the session, e.g. a utility model's) so the
    tracker ends equal to the CLI's figure.
    """

    model_config = ConfigDict(extra="forbid")

    session_id: str | None = None
    model: str | None = None
    status: Literal["success", "error"] | None = None
    error: GeminiError | None = None
    errors: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    stats: GeminiStats | None = None
