"""The paths of the run a model call belongs to, as the model-call cache sees them.

An agent's requests hold its run's own paths: react's system prompt names its workspace
(``<run>/.workspaces/agentrig-<problem>-<random>/workspace``), tool results name files in it. Each run
has other ones, so a key over the request as sent would never hit again. The cache keys a request with
each of these paths replaced by a placeholder (``<agentrig:workspace>``, ...), stores the reply the same
way, and gives a hit back with the placeholders replaced by the *current* run's paths: a cached reply
that names a file of the workspace names the same file of this run's workspace.

The problem run (and :func:`agentrig.run_task`) says which run is current with :func:`use_run_paths`,
in the process that runs it, as it says which cache is (:func:`agentrig.llm.cache.use_cache`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path, PurePath
from typing import Any

#: The names a run's paths are known by, most specific first: a hit is given back with the path of the
#: first name that has one.
NAMES = ("workspace", "home", "session", "run", "published")
#: The names of paths on this machine, whose resolved form (symbolic links followed) is the same path; the
#: runtime's working directory and ``HOME`` are as its commands see them (a container's are not this machine's).
HOST_NAMES = ("session", "run", "published")


def placeholder(name: str) -> str:
    """What stands for the run's path ``name`` in a cache key and a stored reply."""
    return f"<agentrig:{name}>"


class RunPaths:
    """A run's own paths by name (:data:`NAMES`); :meth:`hide` and :meth:`show` map them to placeholders and back.

    A path is replaced wherever it occurs in a string (longest first, so the workspace inside the session
    inside the run directory each get their own); a path of this machine (:data:`HOST_NAMES`) in its
    resolved form (symbolic links followed) too. ``/`` and empty paths are never replaced.
    """

    def __init__(self, paths: Mapping[str, str | PurePath | None]) -> None:
        """``paths``: name → path (``None``: the run has none of that name)."""
        self.shown: dict[str, str] = {}
        hidden: dict[str, str] = {}
        for name, path in paths.items():
            if name not in NAMES:
                raise ValueError(f"not a run path name: {name!r} (one of {', '.join(NAMES)})")
            if path is None or str(path).rstrip("/") == "":
                continue
            given = str(path).rstrip("/")
            self.shown.setdefault(name, given)
            for form in (given, os.path.realpath(given)) if name in HOST_NAMES else (given,):
                hidden.setdefault(form, placeholder(name))
        #: Longest first: a path inside another is replaced before it.
        self._hidden = sorted(hidden.items(), key=lambda item: len(item[0]), reverse=True)

    def __bool__(self) -> bool:
        return bool(self._hidden)

    def hide(self, value: Any) -> Any:
        """``value`` (JSON-like: dicts, lists, strings) with every run path in its strings replaced by its placeholder."""
        return _map_strings(value, self._hide_text)

    def show(self, value: Any) -> Any:
        """``value`` with every placeholder in its strings replaced by this run's path of that name."""
        return _map_strings(value, self._show_text)

    def _hide_text(self, text: str) -> str:
        for path, mark in self._hidden:
            if path in text:
                text = text.replace(path, mark)
        return text

    def _show_text(self, text: str) -> str:
        if "<agentrig:" not in text:
            return text
        for name, path in self.shown.items():
            text = text.replace(placeholder(name), path)
        return text


def _map_strings(value: Any, change: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {key: _map_strings(item, change) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_map_strings(item, change) for item in value]
    return value


def session_paths(session: Any, run_dir: Path | None = None, published: Path | None = None) -> RunPaths:
    """The paths of ``session`` (an :class:`agentrig.agents.session.Session`: its runtime's working directory,
    its ``HOME``, its directory) and of the run directory it lives in (``run_dir``; ``published``: where the
    run's files end up when the session's run directory is a worker's own)."""
    runtime = getattr(session, "runtime", None)
    home = getattr(runtime, "home", None) or getattr(session, "home", None)
    return RunPaths({
        "workspace": getattr(runtime, "workdir", None),
        "home": home,
        "session": getattr(session, "directory", None),
        "run": run_dir,
        "published": published if published != run_dir else None,
    })


NO_PATHS = RunPaths({})
_current: Callable[[], RunPaths] | None = None


def active_run_paths() -> RunPaths:
    """The current run's paths (set by :func:`use_run_paths`); none outside a run."""
    return _current() if _current is not None else NO_PATHS


@contextmanager
def use_run_paths(paths: RunPaths | Callable[[], RunPaths]) -> Iterator[None]:
    """Within the block, the model-call cache of this process sees ``paths`` as the run's own: a
    :class:`RunPaths`, or a function asked at each call (a run whose session changes, after a retry)."""
    global _current
    previous = _current
    if isinstance(paths, RunPaths):
        fixed = paths
        _current = lambda: fixed  # noqa: E731
    else:
        _current = paths
    try:
        yield
    finally:
        _current = previous


__all__ = ["HOST_NAMES", "NAMES", "NO_PATHS", "RunPaths", "active_run_paths", "placeholder", "session_paths", "use_run_paths"]
