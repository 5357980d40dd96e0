"""Resolving ``--model`` into a model definition and its credential."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def resolve(model: str, models_dir: Path | None = None) -> tuple[Any, Any]:
    """``(ModelDefinition, ProviderCredential | None)`` for ``--model``.

    A missing credential is not an error here: a local OpenAI-compatible server
    may need none, and the model client names the variable to set when one is needed.
    """
    from agentrig.catalog import resolve_model
    from agentrig.credentials import resolve_credential

    definition = resolve_model(model, models_dir=models_dir)
    if definition.provider == "replay":
        if not Path(definition.name).is_file():
            raise ValueError(f"replay file '{definition.name}' does not exist")
        return definition, None
    return definition, resolve_credential(definition.provider)
