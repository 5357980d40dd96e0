"""Where a subagent's commands run: confined to its directory, as strongly as the runtime allows.

Three kinds of confinement, strongest first:

``container`` (the ``docker`` runtime)
    Each subagent call gets a container of its own, from the parent's image
    and options, with only its directory mounted (at ``/workspace``). Nothing
    else of the parent's workspace exists in it.
``landlock`` (the ``local`` runtime, Linux >= 5.13 with Landlock enabled)
    Every command runs under a kernel Landlock domain: it may read, write and
    run files only beneath the subagent's directory and a private temporary
    directory (``HOME`` and ``TMPDIR``); it may read and run the system
    directories (``/usr``, ``/bin``, ``/lib*``, ``/etc``, ``/opt``, Python's
    installation); ``/dev`` allows reading and writing existing devices. The
    rest of the filesystem, the parent's workspace included, is refused
    (``Permission denied``) whatever the path: ``..``, absolute, or through a
    symlink. With Landlock ABI >= 6 the commands also cannot signal processes
    outside their domain. Not confined: the network, and reading a system
    directory above that holds the workspace (such a directory is dropped
    from the readable list, so commands there may fail rather than leak).
    No privilege is needed; a process cannot lift its own Landlock domain.
``cwd`` (any other runtime, only with ``confine: best_effort``)
    Commands only *start* in the subagent's directory; they can reach the
    rest of the workspace. ``confine: strict`` (the default) refuses this.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from agentrig.runtime.commands import to_argv
from agentrig.runtime.interface import Command, Runtime, RuntimeProcess

ConfineMode = Literal["strict", "best_effort"]
ConfinementKind = Literal["container", "landlock", "cwd"]

#: Readable (and runnable) system directories for Landlock-confined commands, when they exist.
SYSTEM_DIRECTORIES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")


class ConfinementError(RuntimeError):
    """``confine: strict`` cannot be honoured in this runtime; the message says why and what to do."""


@lru_cache(maxsize=1)
def landlock_abi() -> int:
    """The kernel's Landlock ABI (0: unavailable); asked once per process."""
    from agentrig_react import landlock

    return landlock.abi()


@lru_cache(maxsize=1)
def _launcher_source() -> str:
    return (Path(__file__).with_name("landlock.py")).read_text(encoding="utf-8")


def _base(runtime: Runtime) -> Runtime:
    """The runtime a confined view wraps (views over views confine to the innermost directory)."""
    while isinstance(runtime, (LandlockRuntime, CwdRuntime)):
        runtime = runtime.parent
    return runtime


def _is_docker(base: Runtime) -> bool:
    return base.name == "docker" and hasattr(base, "config") and hasattr(base, "client")


def confinement_kind(runtime: Runtime, mode: ConfineMode) -> ConfinementKind:
    """How commands in ``runtime`` would be confined, checked without starting anything.

    Raises :class:`ConfinementError` (one line: why, and what to do) when
    ``mode`` is ``strict`` and neither a container nor Landlock can confine them.
    """
    base = _base(runtime)
    if _is_docker(base):
        return "container"
    if base.name == "local" and hasattr(base, "workspace"):
        if landlock_abi() >= 1:
            return "landlock"
        why = "this kernel offers no Landlock (it needs Linux >= 5.13 with the 'landlock' LSM enabled)"
    else:
        why = f"the '{base.name}' runtime offers no way to confine commands to a directory"
    if mode == "strict":
        raise ConfinementError(
            f"confine: strict cannot be honoured: {why}; use the docker runtime, or set confine: best_effort "
            "(commands then only start in the subagent's directory)"
        )
    return "cwd"


def confine(runtime: Runtime, host_directory: Path, mode: ConfineMode) -> tuple[Runtime, ConfinementKind]:
    """A runtime whose commands are confined to ``host_directory`` (inside ``runtime``'s workspace).

    Raises :class:`ConfinementError` as :func:`confinement_kind` does.
    """
    host_directory = Path(host_directory).resolve()
    kind = confinement_kind(runtime, mode)
    base = _base(runtime)
    if kind == "container":
        from agentrig.runtime.docker import DockerRuntime

        options = base.config.model_copy(update={"sweep_stale": False})  # type: ignore[attr-defined]
        env = {k: v for k, v in getattr(base, "environment", {}).items() if k != "HOME"}
        return DockerRuntime(host_directory, env=env, config=options, client=base.client), kind  # type: ignore[attr-defined]
    if kind == "landlock":
        return LandlockRuntime(base, host_directory, protected=Path(base.workspace)), kind  # type: ignore[attr-defined]
    return CwdRuntime(runtime, host_directory), kind


class _View(Runtime):
    """A runtime that runs commands through another and ends only what it started."""

    def __init__(self, parent: Runtime) -> None:
        self.parent = parent
        self._processes: list[RuntimeProcess] = []
        self._lock = threading.Lock()

    def _track(self, process: RuntimeProcess) -> RuntimeProcess:
        with self._lock:
            self._processes.append(process)
        return process

    def kill(self) -> None:
        """Kill the processes started through this view."""
        with self._lock:
            processes, self._processes = self._processes, []
        for process in processes:
            if process.poll() is None:
                process.kill()

    def cleanup(self) -> None:
        """Kill what this view started; the parent runtime keeps running."""
        self.kill()

    def __getattr__(self, name: str) -> Any:
        # Runtime-specific extras (image, options) come from the parent.
        if name == "parent":
            raise AttributeError(name)
        return getattr(self.parent, name)


class CwdRuntime(_View):
    """Commands run in the parent runtime, starting in a directory (``confine: best_effort`` only)."""

    def __init__(self, parent: Runtime, host_directory: Path) -> None:
        """Wrap ``parent``; ``host_directory`` lies inside its workspace."""
        super().__init__(parent)
        base_root = Path(getattr(_base(parent), "workspace", host_directory)).resolve()
        try:
            relative = host_directory.resolve().relative_to(base_root).as_posix()
        except ValueError:
            relative = "."
        self._workdir = str(PurePosixPath(_base(parent).workdir) / relative)
        self.name = f"{parent.name}:cwd"

    @property
    def workdir(self) -> str:
        """The directory as commands see it."""
        return self._workdir

    def start(
        self,
        command: Command,
        *,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        idle_timeout: float | None = None,
        stdin: str | bytes | None = None,
        cwd: str | None = None,
    ) -> RuntimeProcess:
        """Start ``command`` in the parent runtime, in the directory unless ``cwd`` says otherwise."""
        directory = self._workdir if cwd is None else str(PurePosixPath(self._workdir) / cwd)
        return self._track(
            self.parent.start(command, env=env, timeout=timeout, idle_timeout=idle_timeout, stdin=stdin, cwd=directory)
        )


class LandlockRuntime(_View):
    """Commands of the local runtime confined by Landlock to one directory (see the module's docstring)."""

    def __init__(self, parent: Runtime, host_directory: Path, *, protected: Path) -> None:
        """Confine commands to ``host_directory``; no readable directory may hold ``protected`` (the workspace)."""
        super().__init__(parent)
        self.directory = Path(host_directory).resolve()
        self.private = Path(tempfile.mkdtemp(prefix="agentrig-subagent-"))
        self.name = f"{parent.name}:landlock"
        protected = protected.resolve()
        readable: list[str] = []
        python = [sys.prefix, sys.base_prefix, str(Path(sys.executable).resolve().parent.parent)]
        for candidate in (*SYSTEM_DIRECTORIES, *python):
            path = Path(candidate)
            if not path.exists():
                continue
            real = path.resolve()
            if real == protected or real in protected.parents or protected in real.parents:
                continue  # reading it would reach the workspace
            if str(real) not in readable:
                readable.append(str(real))
        self.readable = readable
        self._spec: list[str] = ["--rw", str(self.directory), "--rw", str(self.private), "--dev", "/dev"]
        for path in readable:
            self._spec += ["--ro", path]

    @property
    def workdir(self) -> str:
        """The directory, as a host path."""
        return str(self.directory)

    def start(
        self,
        command: Command,
        *,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        idle_timeout: float | None = None,
        stdin: str | bytes | None = None,
        cwd: str | None = None,
    ) -> RuntimeProcess:
        """Start ``command`` under the Landlock launcher, in the directory unless ``cwd`` says otherwise."""
        argv = [sys.executable, "-I", "-S", "-c", _launcher_source(), *self._spec, "--", *to_argv(command)]
        environment = {"HOME": str(self.private), "TMPDIR": str(self.private), **(env or {})}
        directory = self.workdir if cwd is None else os.path.join(self.workdir, cwd)
        return self._track(
            self.parent.start(
                argv, env=environment, timeout=timeout, idle_timeout=idle_timeout, stdin=stdin, cwd=directory
            )
        )

    def cleanup(self) -> None:
        """Kill what this view started and remove its private directory."""
        super().cleanup()
        import shutil

        shutil.rmtree(self.private, ignore_errors=True)
