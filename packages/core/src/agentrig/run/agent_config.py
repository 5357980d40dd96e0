"""Building an agent config from ``--agent NAME|config.yaml`` and ``-c key=value`` overrides.

Overrides are checked against the agent's config class before anything runs:
a dotted key must name a field (``cost_limits.step_limit``), and values are
read as YAML scalars (``5``, ``true``, ``[a, b]``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError

from agentrig.agents.interface import AgentConfigBase


class AgentConfigError(ValueError):
    """The agent config or an override is invalid; the message names the file, key or field."""


def _is_config_file(value: str) -> bool:
    return value.endswith((".yaml", ".yml", ".json")) or "/" in value or Path(value).is_file()


def read_config_file(path: Path) -> dict[str, Any]:
    """The mapping in an agent config file; it must name its agent in ``type``."""
    from agentrig.yaml_loader import YamlError, load_yaml

    if not path.is_file():
        raise AgentConfigError(f"--agent {path}: no such config file (or pass an agent type, see `agentrig agents list`)")
    try:
        data = load_yaml(path.read_text(encoding="utf-8"), str(path))
    except YamlError as exc:
        raise AgentConfigError(str(exc)) from None
    if not isinstance(data, dict):
        raise AgentConfigError(f"{path}: expected a mapping with a 'type' field naming the agent")
    agent_type = data.get("type")
    if not isinstance(agent_type, str) or not agent_type:
        raise AgentConfigError(f"{path}: field 'type' is missing: name the agent type (see `agentrig agents list`)")
    return data


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model a field holds (through ``X | None``), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _nested_model(arg)
        if found is not None:
            return found
    return None


def _is_mapping(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin is dict or annotation is dict:
        return True
    return any(_is_mapping(arg) for arg in get_args(annotation))


def check_key(config_cls: type[BaseModel], key: str) -> None:
    """Raise :class:`AgentConfigError` unless the dotted ``key`` names a field of ``config_cls``."""
    model: type[BaseModel] | None = config_cls
    parts = key.split(".")
    for depth, part in enumerate(parts):
        if model is None:
            return  # inside a free-form mapping: any key goes
        fields = model.model_fields
        if part not in fields:
            owner = ".".join(parts[:depth]) or f"the {config_cls.__name__} config"
            expected = ", ".join(sorted(fields))
            raise AgentConfigError(f"-c {key}: unknown field '{part}' of {owner} (expected one of: {expected})")
        annotation = fields[part].annotation
        nested = _nested_model(annotation)
        if depth < len(parts) - 1 and nested is None and not _is_mapping(annotation):
            raise AgentConfigError(f"-c {key}: field '{'.'.join(parts[: depth + 1])}' has no sub-fields")
        model = None if _is_mapping(annotation) else nested  # a mapping's keys are free (mcp_servers.NAME.url)


def parse_override(text: str) -> tuple[str, Any]:
    """``key=value`` → ``(key, value)`` with the value read as YAML (``5`` is an int)."""
    from agentrig.yaml_loader import YamlError, YamlNestingError, load_yaml

    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key or any(not p for p in key.split(".")):
        raise AgentConfigError(f"-c {text}: expected key=value (dotted keys reach nested fields: cost_limits.step_limit=10)")
    try:
        value = load_yaml(raw, f"-c {key}") if raw.strip() else ""
    except YamlNestingError as exc:
        raise AgentConfigError(str(exc)) from None
    except YamlError:
        value = raw  # not YAML: take the text as it is
    return key, value


def apply_override(data: dict[str, Any], key: str, value: Any) -> None:
    """Set the dotted ``key`` in ``data`` (creating intermediate mappings)."""
    parts = key.split(".")
    target = data
    for part in parts[:-1]:
        child = target.get(part)
        if not isinstance(child, dict):
            child = {}
            target[part] = child
        target = child
    target[parts[-1]] = value


def _describe(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "(top level)"
    if first["type"] == "extra_forbidden":
        return f"unknown field '{where}'"
    if first["type"] == "literal_error" and where == "type":
        return f"field 'type': {first['msg']}"
    return f"field '{where}': {first['msg']}"


def build_agent_config(
    agent: str, overrides: list[str], config_cls_for: Any
) -> AgentConfigBase:
    """The validated config of ``--agent`` (a type or a config file) with ``-c`` overrides applied.

    ``config_cls_for(agent_type)`` returns the agent type's config class (it
    raises for an unknown agent).
    """
    source: str
    if _is_config_file(agent):
        path = Path(agent)
        data = read_config_file(path)
        source = str(path)
    else:
        data = {"type": agent}
        source = f"--agent {agent}"
    config_cls: type[AgentConfigBase] = config_cls_for(data["type"])
    for text in overrides:
        key, value = parse_override(text)
        if key == "type":
            raise AgentConfigError(f"-c {text}: the agent type is set by --agent, not -c")
        check_key(config_cls, key)
        apply_override(data, key, value)
    try:
        return config_cls.model_validate(data)
    except ValidationError as exc:
        via = f"{source} with -c overrides" if overrides else source
        raise AgentConfigError(f"agent config ({via}): {_describe(exc)}") from None


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` on top of ``base``, nested mappings merged key by key."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def apply_model_settings(config: AgentConfigBase, model: Any) -> AgentConfigBase:
    """``config`` with the model catalog's ``agent_specific`` settings for its agent type filled in.

    The catalog's settings are defaults: a field the config file or a ``-c``
    override set explicitly wins. A setting that is not a field of the agent's
    config is an error naming the catalog entry.
    """
    settings = model.settings_for(config.type) if hasattr(model, "settings_for") else {}
    if not settings:
        return config
    explicit = config.model_dump(mode="json", exclude_unset=True)
    try:
        return type(config).model_validate(_merge(settings, explicit))
    except ValidationError as exc:
        raise AgentConfigError(
            f"model catalog entry {model.id}: agent_specific.{config.type}: {_describe(exc)}"
        ) from None
