"""What an OpenHands run reported besides steps: its conversation, OpenHands' own totals, how it ended.

Token counts, the SDK's (LiteLLM's) way: ``prompt_tokens`` counts cached input,
``completion_tokens`` counts reasoning. agentrig's :class:`TokenUsage` keeps
them apart: ``input = prompt - cache_read - cache_write``, ``output = completion``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agentrig.agents.cli_stream import CliStreamOutcome
from agentrig.usage import TokenUsage


class OpenHandsTokens(BaseModel):
    """Token counts of one model call or of a run, as OpenHands' metrics keep them."""

    model_config = ConfigDict(extra="allow")

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    def tokens(self) -> TokenUsage:
        """agentrig's :class:`TokenUsage` of these counts (see the module docstring)."""
        return TokenUsage(
            input=max(0, self.prompt_tokens - self.cache_read_tokens - self.cache_write_tokens),
            output=self.completion_tokens,
            cache_read=self.cache_read_tokens,
            cache_write=self.cache_write_tokens,
            reasoning=self.reasoning_tokens,
        )


class OpenHandsCall(BaseModel):
    """One model call: its tokens, what OpenHands priced it at and what agentrig's catalog did."""

    response_id: str | None = None
    tokens: TokenUsage
    openhands_cost: float
    catalog_cost: float | None


class OpenHandsOutcome(CliStreamOutcome):
    """How an OpenHands run ended (``openhands_outcome.json``).

    ``openhands_cost`` is what OpenHands itself reported for the run (its LLM
    metrics' accumulated cost, priced by LiteLLM: with the catalog's input and
    output prices handed to it, or LiteLLM's own list), ``catalog_cost`` what
    agentrig's model catalog prices the same tokens at (``None``: the model has
    no price there). The run's cost is the catalog's when it has one, else OpenHands'.
    ``status`` is the conversation's execution status at the end (``finished``,
    ``stuck``, ``error``, ...; ``None``: the driver never reported an end).
    """

    sdk_version: str | None = None
    python: str | None = None
    conversation_id: str | None = None
    resumed: bool = False
    status: str | None = None
    error: str | None = None
    errors: list[str] = Field(default_factory=list)
    openhands_cost: float | None = None
    catalog_cost: float | None = None
    calls: list[OpenHandsCall] = Field(default_factory=list)
