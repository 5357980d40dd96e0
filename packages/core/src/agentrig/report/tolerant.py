"""Loading run records written by older or newer agentrig versions.

The record models forbid unknown keys (a run writes exactly its model), but a
reader meets runs from other versions: newer ones carry fields this version
does not know, older ones lack fields added since. :func:`load_record` drops
the unknown keys (reporting them) and lets the models' defaults fill in what
is missing; a missing field without default is a :class:`RecordError` naming it.
"""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path
from typing import Any, TypeVar, Union

from pydantic import BaseModel, ValidationError

from agentrig.boundary import BoundaryError, read_capped, read_inside, record_limit, shorten

M = TypeVar("M", bound=BaseModel)


class RecordError(ValueError):
    """A record file that cannot be read; the message names the file and what is wrong."""


def _models_in(annotation: Any) -> list[tuple[str, type[BaseModel]]]:
    """The record models an annotation holds: ``("one"|"list"|"dict", Model)``."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [("one", annotation)]
    if origin in (Union, types.UnionType):
        return [found for arg in args for found in _models_in(arg)]
    if origin is list and args and isinstance(args[0], type) and issubclass(args[0], BaseModel):
        return [("list", args[0])]
    if origin is dict and len(args) == 2 and isinstance(args[1], type) and issubclass(args[1], BaseModel):
        return [("dict", args[1])]
    return []


_NESTED: dict[type[BaseModel], dict[str, list[tuple[str, type[BaseModel]]]]] = {}


def _nested(model: type[BaseModel]) -> dict[str, list[tuple[str, type[BaseModel]]]]:
    """Per field of ``model``, the record models it holds (computed once per model)."""
    found = _NESTED.get(model)
    if found is None:
        found = _NESTED[model] = {name: _models_in(f.annotation) for name, f in model.model_fields.items()}
    return found


def prune(model: type[BaseModel], data: Any, dropped: list[str], where: str = "") -> Any:
    """``data`` without the keys ``model`` (and the models nested in it) does not know."""
    if not isinstance(data, dict):
        return data
    fields = _nested(model)
    out: dict[str, Any] = {}
    for key, value in data.items():
        inners = fields.get(key)
        if inners is None:
            dropped.append(f"{where}{key}")
            continue
        for shape, inner in inners:
            if shape == "one" and isinstance(value, dict):
                value = prune(inner, value, dropped, f"{where}{key}.")
            elif shape == "list" and isinstance(value, list):
                value = [prune(inner, v, dropped, f"{where}{key}[].") for v in value]
            elif shape == "dict" and isinstance(value, dict):
                value = {k: prune(inner, v, dropped, f"{where}{key}.{k}.") for k, v in value.items()}
        out[key] = value
    return out


def describe(exc: ValidationError) -> str:
    """The first problem of a validation error, as ``field: message``."""
    error = exc.errors()[0]
    where = shorten(".".join(str(p) for p in error.get("loc", ())))
    if error.get("type") == "missing":
        return f"field '{where}' is missing (written by an older agentrig?)"
    return f"field '{where}': {error.get('msg')}"


def load_record(model: type[M], data: Any, source: str, dropped: list[str] | None = None) -> M:
    """``model`` from decoded JSON ``data``; unknown keys are dropped and listed in ``dropped``."""
    sink: list[str] = [] if dropped is None else dropped
    try:
        return model.model_validate(prune(model, data, sink))
    except ValidationError as exc:
        raise RecordError(f"{source}: {describe(exc)}") from None
    except RecursionError:
        raise RecordError(f"{source}: nested too deeply to be a record") from None


def load_record_json(model: type[M], text: str | bytes, source: str, dropped: list[str] | None = None) -> M:
    """``model`` from JSON text: validated directly when it is this version's record (the common,
    fast case), else decoded and loaded tolerantly as :func:`load_record` does."""
    try:
        return model.model_validate_json(text)
    except ValidationError:
        pass
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RecordError(f"{source}: not UTF-8 text (byte {exc.start}); not a record") from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise RecordError(f"{source}: nested too deeply to be a record") from None
    except ValueError as exc:
        raise RecordError(f"{source}: not valid JSON ({shorten(str(exc))})") from None
    return load_record(model, data, source, dropped)


def read_record(model: type[M], path: Path, dropped: list[str] | None = None, *, root: Path | None = None) -> M:
    """``model`` from the JSON file ``path``; :class:`RecordError` (naming the file) when unreadable.

    ``root``: the directory read back that ``path`` belongs to; a symbolic link leaving it is not
    followed (:func:`~agentrig.boundary.read_inside`)."""
    try:
        text = read_inside(root, path) if root is not None else read_capped(path, record_limit())
    except FileNotFoundError:
        raise RecordError(f"{path}: not found") from None
    except BoundaryError as exc:
        raise RecordError(str(exc)) from None
    except OSError as exc:
        raise RecordError(f"{path}: {exc.strerror or exc}") from None
    return load_record_json(model, text, str(path), dropped)
