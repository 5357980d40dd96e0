"""Token usage, cost and limits of an agent."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agentrig.boundary import TIMEOUT_MAX_SECONDS


class TokenUsage(BaseModel):
    """Token counts of one model call, or a sum of them.

    ``reasoning`` tokens are a part of ``output`` (as the providers bill them);
    they are recorded separately for reporting, not priced twice.
    """

    model_config = ConfigDict(extra="forbid")

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            input=self.input + other.input,
            output=self.output + other.output,
            cache_read=self.cache_read + other.cache_read,
            cache_write=self.cache_write + other.cache_write,
            reasoning=self.reasoning + other.reasoning,
        )

    @property
    def total(self) -> int:
        """Every token sent or received: input, cache reads and writes, output."""
        return self.input + self.cache_read + self.cache_write + self.output

    @property
    def context(self) -> int:
        """Tokens that made up the prompt of the call (the context size)."""
        return self.input + self.cache_read + self.cache_write


class UsageTracker(BaseModel):
    """What an agent spent during the current checkpoint.

    ``net_tokens`` sums every call; ``current_tokens`` is the usage of the
    latest call (its ``context`` is the size of the conversation now).
    """

    model_config = ConfigDict(extra="forbid")

    cost: float = 0.0
    steps: int = 0
    net_tokens: TokenUsage = Field(default_factory=TokenUsage)
    current_tokens: TokenUsage = Field(default_factory=TokenUsage)

    def step(self, tokens: TokenUsage, cost: float, *, count_step: bool = True) -> None:
        """Record one model call: its tokens and its cost (in USD)."""
        self.cost += cost
        if count_step:
            self.steps += 1
        self.net_tokens = self.net_tokens + tokens
        self.current_tokens = tokens

    def add(self, other: UsageTracker) -> None:
        """Add another tracker's totals (a subagent's usage, say) to this one."""
        self.cost += other.cost
        self.steps += other.steps
        self.net_tokens = self.net_tokens + other.net_tokens


class AgentCostLimits(BaseModel):
    """Limits on an agent's spending. ``0`` means no limit.

    ``cost_limit``, ``step_limit``, ``token_limit`` and ``time_limit`` apply to
    one checkpoint; ``net_cost_limit`` to the whole problem (every checkpoint
    together). ``time_limit`` and ``token_limit`` are also enforced by the
    runner for agents that do not check their limits themselves (see
    :mod:`agentrig.agents.limits`).
    """

    model_config = ConfigDict(extra="forbid")

    cost_limit: float = Field(default=0.0, ge=0, description="Dollars per checkpoint; 0: no limit.")
    net_cost_limit: float = Field(default=0.0, ge=0, description="Dollars for the whole problem (every checkpoint); 0: no limit.")
    step_limit: int = Field(default=0, ge=0, description="Agent steps per checkpoint; 0: no limit.")
    time_limit: float = Field(
        default=0.0, ge=0, le=TIMEOUT_MAX_SECONDS, allow_inf_nan=False,
        description="Wall-clock seconds per checkpoint; 0: no limit.",
    )
    token_limit: int = Field(
        default=0, ge=0, description="Tokens per checkpoint: every token sent or received (TokenUsage.total); 0: no limit."
    )

    def exceeded(self, usage: UsageTracker, prior_cost: float = 0.0) -> str | None:
        """Name the limit that ``usage`` has reached, or ``None``.

        Returns ``"step_limit"``, ``"cost_limit"``, ``"token_limit"`` or
        ``"net_cost_limit"`` (``time_limit`` needs a clock: see
        :meth:`agentrig.Agent.limit_reached`).
        """
        if self.step_limit and usage.steps >= self.step_limit:
            return "step_limit"
        if self.cost_limit and usage.cost >= self.cost_limit:
            return "cost_limit"
        if self.token_limit and usage.net_tokens.total >= self.token_limit:
            return "token_limit"
        if self.net_cost_limit and usage.cost + prior_cost >= self.net_cost_limit:
            return "net_cost_limit"
        return None
