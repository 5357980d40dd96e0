"""Options every chat client takes (``create_chat_model(..., **options)``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentrig.boundary import Seconds
from agentrig.llm.cache import ModelCallCache
from agentrig.llm.retry import RetryEvent, RetryPolicy
from agentrig.model_definition import ThinkingPreset


class ChatOptions(BaseModel):
    """How a client calls its model. Unknown names are rejected, so a typo in
    a config surfaces as an error instead of being ignored."""

    model_config = ConfigDict(extra="forbid")

    stream: bool | None = Field(
        default=None,
        description="Stream the reply (SSE). Default: off, except for Anthropic calls with large max_tokens,"
        " which the API only serves streamed.",
    )
    timeout: Seconds = Field(default=600.0, description="Seconds for one request (a stream: between events).")
    max_tokens: int | None = Field(default=None, gt=0, description="Output cap; per-call max_tokens wins.")
    temperature: float | None = Field(default=None, ge=0)
    thinking: ThinkingPreset | None = Field(
        default=None, description="Extended thinking / reasoning effort; default: the model's default_thinking."
    )
    thinking_budget: int | None = Field(default=None, ge=1024, description="Anthropic thinking budget in tokens.")
    prompt_caching: bool = Field(default=True, description="Mark Anthropic cache breakpoints (system, last message).")
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] | None = Field(
        default=None,
        description="OpenAI's name for the output cap: max_completion_tokens for openai, max_tokens for compatible servers.",
    )
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    extra_body: dict[str, Any] = Field(default_factory=dict, description="Extra JSON fields sent with every request.")
    headers: dict[str, str] = Field(default_factory=dict, description="Extra HTTP headers sent with every request.")
    on_retry: Callable[[RetryEvent], None] | None = Field(default=None, exclude=True)
    cache: ModelCallCache | None = Field(
        default=None, exclude=True,
        description="The model-call cache (agentrig.llm.cache); default: the run's --cache, if any.",
    )
