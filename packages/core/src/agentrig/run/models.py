"""Resolving ``--model`` into a model definition and its credential."""

from __future__ import annotations

from typing import Any


class ModelResolutionError(ValueError):
    """``--model`` names no known model, or its credential is missing; the message says what to set."""


def resolve(model: str) -> tuple[Any, Any]:
    """``(ModelDefinition, ProviderCredential | None)`` for ``--model``."""
    from agentrig.catalog import resolve_model
    from agentrig.credentials import resolve_credential

    definition = resolve_model(model)
    return definition, resolve_credential(definition)
