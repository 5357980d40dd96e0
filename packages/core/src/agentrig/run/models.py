"""Resolving ``--model`` into a model definition and its credential."""

from __future__ import annotations

from typing import Any


def _definition(model: str) -> Any:
    from agentrig.model_definition import ModelDefinition

    try:
        from agentrig.catalog import resolve_model  # the catalog knows aliases and pricing
    except ModuleNotFoundError:
        resolve_model = None
    if resolve_model is not None:
        return resolve_model(model)
    provider, sep, name = model.partition("/")
    if not sep or not provider or not name:
        raise ValueError(f"'{model}' is not PROVIDER/MODEL (e.g. openai/gpt-4o-mini, replay/FILE.jsonl)")
    return ModelDefinition(provider=provider, name=name)


def resolve(model: str) -> tuple[Any, Any]:
    """``(ModelDefinition, ProviderCredential | None)`` for ``--model``.

    A missing credential is not an error here: a local OpenAI-compatible server
    may need none, and the model client names the variable to set when one is needed.
    """
    from agentrig.credentials import resolve_credential

    definition = _definition(model)
    if definition.provider == "replay":
        from pathlib import Path

        if not Path(definition.name).is_file():
            raise ValueError(f"replay file '{definition.name}' does not exist")
        return definition, None
    return definition, resolve_credential(definition.provider)
