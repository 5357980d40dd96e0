"""Prices of a model's tokens."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agentrig.usage import TokenUsage

_PER = 1_000_000


class APIPricing(BaseModel):
    """USD per million tokens of each kind.

    ``cache_read`` and ``cache_write`` default to the input price when a
    provider does not price them apart.
    """

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(default=None, ge=0)
    cache_write: float | None = Field(default=None, ge=0)

    def get_cost(self, usage: TokenUsage) -> float:
        """The cost in USD of ``usage``; reasoning tokens are part of output."""
        cache_read = self.input if self.cache_read is None else self.cache_read
        cache_write = self.input if self.cache_write is None else self.cache_write
        return (
            usage.input * self.input
            + usage.output * self.output
            + usage.cache_read * cache_read
            + usage.cache_write * cache_write
        ) / _PER
