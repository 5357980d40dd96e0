"""``create_chat_model``: the client for a catalog model, by provider."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from agentrig.credentials import CredentialError, ProviderCredential, env_vars_for
from agentrig.llm.errors import AuthenticationError, ConfigurationError
from agentrig.llm.interface import ChatModel
from agentrig.llm.options import ChatOptions
from agentrig.model_definition import ModelDefinition

#: Providers served by the Anthropic client; every other one except replay
#: speaks chat completions (OpenAI itself, vLLM, Ollama, llama.cpp, OpenRouter...).
ANTHROPIC_PROVIDERS = frozenset({"anthropic"})
BASE_URL_ENV = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}


def base_url_env_var(provider: str) -> str:
    """The variable overriding ``provider``'s endpoint (``<PROVIDER>_BASE_URL`` beyond the two majors)."""
    return BASE_URL_ENV.get(provider) or env_vars_for(provider)[0].removesuffix("_API_KEY") + "_BASE_URL"


def resolve_base_url(
    model: ModelDefinition, base_url: str | None = None, *, environ: Mapping[str, str] | None = None
) -> str | None:
    """The endpoint: an explicit ``base_url`` (config) beats the provider's
    environment variable, which beats the catalog's ``base_url``; ``None``
    means the SDK's default (the provider's own API)."""
    if base_url:
        return base_url
    env = os.environ if environ is None else environ
    return env.get(base_url_env_var(model.provider)) or model.base_url or None


def parse_options(options: Mapping[str, Any]) -> ChatOptions:
    """Validate client options; an unknown or bad option is one line naming it."""
    try:
        return ChatOptions.model_validate(dict(options))
    except ValidationError as exc:
        first = exc.errors()[0]
        name = ".".join(str(p) for p in first["loc"])
        if first["type"] == "extra_forbidden":
            known = ", ".join(sorted(ChatOptions.model_fields))
            raise ConfigurationError(f"unknown model option '{name}' (known: {known})") from None
        raise ConfigurationError(f"model option '{name}': {first['msg']}") from None


def check_chat_model(
    model: ModelDefinition,
    credential: ProviderCredential | None,
    *,
    base_url: str | None = None,
    environ: Mapping[str, str] | None = None,
    **options: Any,
) -> ChatOptions:
    """Everything :func:`create_chat_model` checks, without making a client or a call.

    Returns the parsed options; raises :class:`ConfigurationError` (invalid
    option, provider without an endpoint) or :class:`AuthenticationError` (no
    credential for a provider's own API), one line naming what to fix.
    """
    parsed = parse_options(options)
    if model.provider == "replay":
        return parsed
    url = resolve_base_url(model, base_url, environ=environ)
    if model.provider in ANTHROPIC_PROVIDERS or model.provider == "openai":
        if credential is None and url is None:
            raise AuthenticationError(_missing(model.provider), provider=model.provider)
    elif url is None:
        raise ConfigurationError(
            f"provider '{model.provider}' needs an endpoint: set {base_url_env_var(model.provider)}, "
            "give base_url in the model's catalog entry, or pass base_url",
            provider=model.provider,
        )
    return parsed


def create_chat_model(
    model: ModelDefinition,
    credential: ProviderCredential | None,
    *,
    base_url: str | None = None,
    environ: Mapping[str, str] | None = None,
    **options: Any,
) -> ChatModel:
    """The client for ``model``: ``AnthropicChat`` for ``anthropic``,
    ``ReplayModel`` for ``replay`` (``model.name`` is the replay file,
    ``model.replay_start`` the first reply to give),
    ``OpenAIChat`` for ``openai`` and any OpenAI-compatible provider.

    ``base_url`` follows :func:`resolve_base_url`; ``options`` are
    :class:`ChatOptions` fields (``stream``, ``timeout``, ``max_tokens``,
    ``thinking``, ``retry``, ``on_retry``, ...). Raises
    :class:`ConfigurationError` / :class:`AuthenticationError` with one line
    naming what to fix.
    """
    parsed = check_chat_model(model, credential, base_url=base_url, environ=environ, **options)
    if model.provider == "replay":
        from agentrig.llm.replay import ReplayModel

        replay = ReplayModel.from_file(model.name, start=model.replay_start)
        replay.model_name = model.name
        return replay
    url = resolve_base_url(model, base_url, environ=environ)
    if model.provider in ANTHROPIC_PROVIDERS:
        from agentrig.llm.anthropic_chat import AnthropicChat

        return AnthropicChat(model, credential, base_url=url, options=parsed)
    from agentrig.llm.openai_chat import OpenAIChat

    return OpenAIChat(model, credential, base_url=url, options=parsed)


def _missing(provider: str) -> str:
    return str(CredentialError(f"no credential for {provider}: set {' or '.join(env_vars_for(provider))}", provider=provider))
