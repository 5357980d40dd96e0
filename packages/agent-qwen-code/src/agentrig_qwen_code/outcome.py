"""What a Qwen Code run reports: its usage in agentrig's terms and how it ended (``qwen_outcome.json``).

The CLI speaks OpenAI's chat completions: ``input_tokens`` is the prompt's whole count, its
cached part (``cache_read_input_tokens``) included, and ``output_tokens`` the completion's
(its reasoning included; the stream does not break it out). agentrig's
:class:`~agentrig.usage.TokenUsage` counts the uncached input apart from the cached.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agentrig.agents.cli_stream import CliStreamOutcome
from agentrig.usage import TokenUsage


class QwenUsage(BaseModel):
    """The ``usage`` of an ``assistant`` message (one model call) or of the ``result`` event."""

    model_config = ConfigDict(extra="allow")

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    total_tokens: int = 0

    def tokens(self) -> TokenUsage:
        """agentrig's :class:`TokenUsage` of these counts (the cached input apart from the rest)."""
        cached = max(0, self.cache_read_input_tokens)
        return TokenUsage(input=max(0, self.input_tokens - cached), output=self.output_tokens, cache_read=cached)

    def is_empty(self) -> bool:
        """No token counted: a message that is not the end of a model call (its text before a tool call)."""
        return self.input_tokens == 0 and self.output_tokens == 0 and self.cache_read_input_tokens == 0


class QwenOutcome(CliStreamOutcome):
    """How one CLI run went, as its stream told it (``qwen_outcome.json``); the usage and end fields are
    :class:`~agentrig.agents.cli_stream.CliStreamOutcome`'s.

    ``session_usage`` is the ``result`` event's own figure, which covers the whole CLI session
    (every earlier checkpoint a resumed session continues); ``cli_usage`` is this run's part of
    it (``session_usage`` less what the session had counted before the run). ``live_usage`` and
    ``live_cost`` are what agentrig counted per model call while the CLI ran.
    """

    model_config = ConfigDict(extra="forbid")

    session_id: str | None = None
    model: str | None = None
    cli_version: str | None = None
    subtype: str | None = None
    status: Literal["success", "error"] | None = None
    error: str | None = None
    num_turns: int | None = None
    result: str | None = None
    session_usage: TokenUsage | None = None
    mcp_servers: list[dict[str, object]] = Field(default_factory=list)
