"""What the SDK-backed clients share: options, one SDK client per event loop,
retries, and usage-to-cost."""

from __future__ import annotations

import asyncio
import time
import weakref
from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

from agentrig.credentials import ProviderCredential
from agentrig.llm.classify import classify_exception
from agentrig.llm.errors import LLMError
from agentrig.llm.interface import ChatMessage, ChatModel, ChatResponse, ToolSpec
from agentrig.llm.options import ChatOptions
from agentrig.llm.retry import call_with_retries
from agentrig.model_definition import ModelDefinition, ThinkingPreset
from agentrig.usage import TokenUsage


class SDKChatModel(ChatModel):
    """A :class:`ChatModel` over a provider SDK's async client.

    Subclasses build the SDK client (with ``max_retries=0``: retrying is done
    here, classified and observable) and make one request; this class retries
    it, times it and prices it. The async client is bound to the event loop
    that created it, so one is kept per loop.
    """

    provider: str

    def __init__(
        self,
        model: ModelDefinition,
        credential: ProviderCredential | None,
        *,
        base_url: str | None = None,
        options: ChatOptions | None = None,
    ) -> None:
        self.definition = model
        self.model_name = model.name
        self.provider = model.provider
        self.base_url = base_url
        self.options = options or ChatOptions()
        # Private: the secret must not show in vars(), reprs or pickles of options.
        self.__credential = credential
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.definition.id!r}, base_url={self.base_url!r})"

    @property
    def credential(self) -> ProviderCredential | None:
        """The credential requests are signed with (its value stays secret)."""
        return self.__credential

    def _secrets(self) -> list[str]:
        return [self.__credential.secret()] if self.__credential is not None else []

    @property
    def thinking(self) -> ThinkingPreset:
        """The thinking preset in effect (none for models that cannot think)."""
        if not self.definition.supports_thinking:
            return ThinkingPreset.NONE
        return self.options.thinking or self.definition.default_thinking

    def _client(self) -> Any:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._make_client()
            self._clients[loop] = client
        return client

    @abstractmethod
    def _make_client(self) -> Any:
        """A new async SDK client (imports the SDK)."""

    @abstractmethod
    async def _request(
        self,
        client: Any,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec] | None,
        max_tokens: int | None,
        temperature: float | None,
    ) -> ChatResponse:
        """One request, no retries; cost, latency and attempts are filled in by the caller."""

    def _classify(self, exc: BaseException) -> LLMError | None:
        return classify_exception(exc, provider=self.provider, secrets=self._secrets())

    def cost_of(self, usage: TokenUsage) -> float | None:
        """``usage`` priced by the model's pricing; ``None`` when pricing is unknown."""
        pricing = self.definition.pricing
        return pricing.get_cost(usage) if pricing is not None else None

    async def acomplete(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec] | None = None,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> ChatResponse:
        """Send the conversation; retry transient failures; return the priced reply.

        With a model-call cache (``options.cache``, else the run's :func:`~agentrig.llm.cache.active_cache`),
        a request seen before is answered from it (``cache_hit``, cost 0) and a new reply is stored,
        as its policy says. The run's own paths (:func:`~agentrig.llm.run_paths.active_run_paths`) are
        placeholders in the key and the stored reply, so the same run made again hits.
        """
        from agentrig.llm.cache import active_cache
        from agentrig.llm.run_paths import active_run_paths

        cache = self.options.cache or active_cache()
        started = time.monotonic()
        key = None
        paths = active_run_paths()
        if cache is not None:
            # the run's own paths (its workspace, ...) are placeholders in the key and the stored reply
            request = paths.hide(self.cache_request(messages, tools, max_tokens, temperature))
            key = cache.key(self.provider, self.model_name, request)
            hit = cache.get(key, paths=paths) if cache.reads else None
            if hit is not None:
                answered = hit.model_copy(
                    update={"cost": 0.0, "cache_hit": True, "attempts": 0, "latency": time.monotonic() - started}
                )
                return answered.record_request(messages, tools, self._secrets())
        client = self._client()
        response, attempts = await call_with_retries(
            lambda: self._request(client, messages, tools, max_tokens, temperature),
            self._classify,
            self.options.retry,
            on_retry=self.options.on_retry,
        )
        priced = response.model_copy(
            update={
                "cost": self.cost_of(response.usage),
                "latency": time.monotonic() - started,
                "attempts": attempts,
            }
        )
        if cache is not None and key is not None and cache.writes:
            cache.put(key, self.provider, priced, self._secrets(), paths=paths)
        return priced.record_request(messages, tools, self._secrets())

    def cache_request(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec] | None,
        max_tokens: int | None,
        temperature: float | None,
    ) -> dict[str, Any]:
        """What identifies this request for the model-call cache (never the credential, headers or
        endpoint): the request body the SDK is sent (:meth:`_params`)."""
        return self._params(messages, tools, max_tokens, temperature)

    def _params(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec] | None,
        max_tokens: int | None,
        temperature: float | None,
    ) -> dict[str, Any]:
        """The request body the SDK is sent; the core's clients build their provider's. This default, for
        subclasses that do not, is the conversation, tools and parameters as given."""
        return {
            "messages": [m.model_dump(mode="json") for m in messages],
            "tools": [t.model_dump(mode="json") for t in tools] if tools else None,
            "max_tokens": max_tokens or self.options.max_tokens,
            "temperature": temperature if temperature is not None else self.options.temperature,
            "thinking": self.thinking.value,
            "thinking_budget": self.options.thinking_budget,
            "extra_body": self.options.extra_body,
        }

    async def aclose(self) -> None:
        """Close the SDK client of the running loop."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        client = self._clients.pop(loop, None)
        if client is not None:
            await client.close()
