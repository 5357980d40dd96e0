"""What plugins declare: agents, runtimes and stream parsers, by import path.

A spec names its implementation by an import path (``"pkg.module:Name"``)
that is only imported when the thing is used, so listing plugins stays cheap.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

_IMPORT_PATH = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")


def _check_import_path(value: str) -> str:
    if not _IMPORT_PATH.match(value):
        raise ValueError(f"'{value}' is not an import path of the form 'package.module:Name'")
    return value


def import_object(path: str) -> Any:
    """Import ``"package.module:Name"`` and return ``Name``.

    Raises ``ImportError`` naming the path when the module or attribute is missing.
    """
    module_name, _, attr = path.partition(":")
    module = importlib.import_module(module_name)
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ImportError(f"module '{module_name}' has no attribute '{attr}' (import path '{path}')") from None
    return obj


def module_exists(path: str) -> bool:
    """Whether the module of an import path can be found, without importing it.

    Parent packages are imported (they usually are already: the plugin module
    lives in them); the module itself is not.
    """
    module_name = path.partition(":")[0]
    try:
        return importlib.util.find_spec(module_name) is not None
    except (ImportError, ValueError):
        return False


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    description: str = ""


class AgentSpec(_Spec):
    """An agent type a plugin provides.

    ``config`` is the import path of its ``AgentConfigBase`` subclass and
    ``agent`` that of its ``Agent`` subclass; neither is imported to list agents.
    """

    config: str
    agent: str

    _check = field_validator("config", "agent")(_check_import_path)


class RuntimeSpec(_Spec):
    """A runtime (where commands run) a plugin provides: ``runtime`` is the
    import path of a ``Runtime`` factory taking a ``RuntimeConfig``-like
    keyword set (see :mod:`agentrig.runtime`)."""

    runtime: str

    _check = field_validator("runtime")(_check_import_path)


class StreamParserSpec(_Spec):
    """A parser of an agent process's output stream: ``parser`` is the import
    path of a zero-argument factory returning a ``StreamParser``."""

    parser: str

    _check = field_validator("parser")(_check_import_path)
