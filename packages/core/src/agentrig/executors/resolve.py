"""Finding an executor by name through the ``agentrig_executors`` hook and building it."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agentrig.executors.interface import Executor, ExecutorError

if TYPE_CHECKING:
    from agentrig.plugins import PluginRegistry

#: The executor ``agentrig run`` uses without ``--executor``.
DEFAULT_EXECUTOR = "local"


class UnknownExecutorError(ExecutorError):
    """No installed plugin declares the requested executor."""

    def __init__(self, name: str, available: list[str]) -> None:
        """Name the executor, the installed ones and the closest match."""
        close = difflib.get_close_matches(name, available, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        installs = " (pip install agentrig-ray)" if name == "ray" else ""
        super().__init__(f"--executor {name}: unknown executor (installed: {', '.join(available) or 'none'}){hint}{installs}")
        self.name = name
        self.available = available


def available_executors(registry: PluginRegistry | None = None) -> list[str]:
    """Names of the installed executors, sorted."""
    from agentrig.plugins import get_registry

    return sorted((registry or get_registry()).executor_specs())


def create_executor(
    name: str, options: Mapping[str, Any] | None = None, *, jobs: int = 1, registry: PluginRegistry | None = None
) -> Executor:
    """Build executor ``name`` with its ``-c executor.*`` options and ``--jobs``; connects to nothing.

    Raises :class:`UnknownExecutorError`, or :class:`ExecutorError` naming a bad option.
    """
    from agentrig.plugins import get_registry
    from agentrig.specs import import_object

    specs = (registry or get_registry()).executor_specs()
    spec = specs.get(name)
    if spec is None:
        raise UnknownExecutorError(name, sorted(specs))
    try:
        factory = import_object(spec.executor)
    except ImportError as exc:
        raise ExecutorError(f"--executor {name}: cannot import {spec.executor} ({exc})") from None
    executor = factory(dict(options or {}), jobs=jobs)
    if not isinstance(executor, Executor):
        raise ExecutorError(f"--executor {name}: {spec.executor} built {type(executor).__name__}, not an agentrig Executor")
    executor.name = name
    return executor
