"""The model catalog: ``ModelDefinition`` records in YAML, and ``--model`` resolution.

Layers, later ones overriding earlier ones model by model (``provider/name``):

1. the catalog shipped with agentrig (``agentrig/catalog/data/*.yaml``);
2. the user's directory, ``$XDG_CONFIG_HOME/agentrig/models/`` (default
   ``~/.config/agentrig/models/``), when it exists;
3. a ``--models-dir`` given on the command line.

Each file is YAML with a ``models:`` list of ``ModelDefinition`` fields::

    models:
      - provider: vllm
        name: Qwen/Qwen3-Coder-30B
        aliases: [qwen-coder]
        base_url: http://127.0.0.1:8000/v1
        pricing: {input: 0.0, output: 0.0}

``--model`` takes ``PROVIDER/NAME``, an alias, a bare model name, or
``replay/PATH`` (a replay JSONL file). A ``PROVIDER/NAME`` the catalog does
not know still resolves, with pricing ``None`` and an
:class:`UnknownModelWarning` saying its cost is unknown (never zero).
"""

from __future__ import annotations

import difflib
import os
import warnings
from collections.abc import Iterator, Mapping
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from agentrig.model_definition import ModelDefinition

__all__ = [
    "CatalogError",
    "CatalogFile",
    "ModelCatalog",
    "ModelResolutionError",
    "UnknownModelWarning",
    "load_catalog",
    "resolve_model",
    "user_models_dir",
]

REPLAY_PROVIDER = "replay"
#: The largest model catalog file read, in bytes.
CATALOG_FILE_MAX = 4 << 20


class CatalogError(ValueError):
    """A catalog file cannot be read; the message names the file and field."""


class ModelResolutionError(ValueError):
    """``--model`` names nothing resolvable; the message says what to write instead."""


class UnknownModelWarning(UserWarning):
    """The model is not in the catalog: it runs, but its cost is unknown."""


class CatalogFile(BaseModel):
    """The schema of one catalog YAML file."""

    model_config = ConfigDict(extra="forbid")

    models: list[ModelDefinition] = []


def user_models_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/agentrig/models`` (default ``~/.config/agentrig/models``)."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(base) / "agentrig" / "models"


def _parse_file(text: str, source: str) -> list[ModelDefinition]:
    from agentrig.yaml_loader import YamlError, load_yaml

    try:
        data = load_yaml(text, source)
    except YamlError as exc:
        raise CatalogError(str(exc)) from None
    if data is None:
        return []
    if not isinstance(data, dict):
        raise CatalogError(f"{source}: expected a mapping with a 'models' list")
    try:
        return CatalogFile.model_validate(data).models
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise CatalogError(f"{source}: {field}: {first['msg']}") from None


def _line_of(data: bytes, offset: int) -> int:
    """The line (from 1) of byte ``offset`` in ``data``."""
    return data.count(b"\n", 0, offset) + 1


class ModelCatalog:
    """Models by ``provider/name`` and by alias, with the file each came from."""

    def __init__(self) -> None:
        self.models: dict[str, ModelDefinition] = {}
        self.sources: dict[str, str] = {}
        self._aliases: dict[str, str] = {}

    def add(self, model: ModelDefinition, source: str) -> None:
        """Add ``model``, replacing one with the same ``provider/name`` (a later layer wins)."""
        old = self.models.get(model.id)
        if old is not None:
            for alias in old.aliases:
                self._aliases.pop(alias.lower(), None)
        self.models[model.id] = model
        self.sources[model.id] = source
        for alias in model.aliases:
            self._aliases[alias.lower()] = model.id

    def add_file(self, path: Path) -> None:
        """Add every model of one YAML file."""
        from agentrig.boundary import BoundaryError, read_capped

        try:
            text = read_capped(path, CATALOG_FILE_MAX, "model catalog file").decode("utf-8")
        except BoundaryError as exc:
            raise CatalogError(str(exc)) from None
        except OSError as exc:
            raise CatalogError(f"cannot read model catalog file {path}: {exc.strerror}") from None
        except UnicodeDecodeError as exc:
            line = _line_of(exc.object, exc.start)
            raise CatalogError(f"{path}: line {line} is not UTF-8 text") from None
        for model in _parse_file(text, str(path)):
            self.add(model, str(path))

    def add_dir(self, directory: Path) -> None:
        """Add every ``*.yaml`` / ``*.yml`` file of ``directory`` in name order."""
        for path in sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file()):
            self.add_file(path)

    def __iter__(self) -> Iterator[ModelDefinition]:
        return iter(self.models.values())

    def __len__(self) -> int:
        return len(self.models)

    @property
    def aliases(self) -> dict[str, str]:
        """Alias (lower case) -> ``provider/name``."""
        return dict(self._aliases)

    def get(self, spec: str) -> ModelDefinition | None:
        """The catalog entry ``spec`` names (id, alias or unique bare name), or ``None``.

        ``PROVIDER/ALIAS`` (a dated snapshot, say) keeps the name as written,
        so the API gets exactly the model asked for, priced as its entry.
        """
        if spec in self.models:
            return self.models[spec]
        target = self._aliases.get(spec.lower())
        if target is not None:
            return self.models[target]
        provider, _, name = spec.partition("/")
        if name:
            target = self._aliases.get(name.lower())
            if target is not None and self.models[target].provider == provider:
                return self.models[target].model_copy(update={"name": name})
            return None
        named = [m for m in self.models.values() if m.name == spec]
        return named[0] if len(named) == 1 else None

    def resolve(self, spec: str) -> ModelDefinition:
        """:func:`resolve_model` against this catalog."""
        spec = spec.strip()
        if not spec:
            raise ModelResolutionError("empty model name: give --model PROVIDER/NAME, e.g. anthropic/claude-sonnet-4-5")
        provider, _, name = spec.partition("/")
        if provider == REPLAY_PROVIDER:
            return _replay_model(name)
        if spec.startswith(f"{REPLAY_PROVIDER}:"):  # replay:/abs/path.jsonl, as `show` spells a replay model
            return _replay_model(spec.removeprefix(f"{REPLAY_PROVIDER}:"))
        found = self.get(spec)
        if found is not None:
            return found
        if provider and name:
            warnings.warn(
                f"model '{spec}' is not in the model catalog: its cost is unknown and will be reported as such"
                f" (add it to {user_models_dir()} to price it)",
                UnknownModelWarning,
                stacklevel=3,
            )
            return ModelDefinition(provider=provider, name=name, pricing=None)
        choices = sorted({*self.models, *self._aliases})
        close = difflib.get_close_matches(spec.lower(), choices, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise ModelResolutionError(
            f"unknown model '{spec}': give PROVIDER/NAME (e.g. anthropic/claude-sonnet-4-5, openai/gpt-5,"
            f" replay/path/to/replay.jsonl) or a catalog alias{hint}"
        )


def _replay_model(path: str) -> ModelDefinition:
    if not path:
        raise ModelResolutionError("replay needs a file: --model replay/PATH/TO/replay.jsonl")
    if not Path(path).expanduser().is_file():
        raise ModelResolutionError(f"replay file not found: {path}")
    return ModelDefinition(provider=REPLAY_PROVIDER, name=str(Path(path).expanduser()), pricing=None)


def load_catalog(
    models_dir: str | Path | None = None,
    *,
    user_dir: str | Path | None = None,
    include_builtin: bool = True,
) -> ModelCatalog:
    """The built-in catalog, then ``user_dir`` (default :func:`user_models_dir`,
    skipped when absent), then ``models_dir`` (which must exist)."""
    catalog = ModelCatalog()
    if include_builtin:
        data = resources.files("agentrig.catalog") / "data"
        for entry in sorted(data.iterdir(), key=lambda e: e.name):
            if entry.name.endswith((".yaml", ".yml")):
                for model in _parse_file(entry.read_text(encoding="utf-8"), f"agentrig/catalog/data/{entry.name}"):
                    catalog.add(model, f"builtin:{entry.name}")
    user = Path(user_dir).expanduser() if user_dir is not None else user_models_dir()
    if user.is_dir():
        catalog.add_dir(user)
    if models_dir is not None:
        directory = Path(models_dir).expanduser()
        if not directory.is_dir():
            raise CatalogError(f"--models-dir {directory} is not a directory")
        catalog.add_dir(directory)
    return catalog


def resolve_model(spec: str, models_dir: str | Path | None = None, *, user_dir: str | Path | None = None) -> ModelDefinition:
    """The :class:`ModelDefinition` for ``--model spec``.

    Raises :class:`ModelResolutionError` or :class:`CatalogError` (one line
    each); warns :class:`UnknownModelWarning` for a ``PROVIDER/NAME`` not in
    the catalog, whose ``pricing`` is then ``None``.
    """
    return load_catalog(models_dir, user_dir=user_dir).resolve(spec)
