"""Where a subagent's commands run: confined to its directory, as strongly as the runtime allows.

Four kinds of confinement, strongest first; the first this machine offers is used:

``container`` (the ``docker`` runtime)
    Each subagent call gets a container of its own, from the parent's image
    and options, with only its directory mounted (at ``/workspace``). Nothing
    else of the parent's workspace exists in it.
``bwrap`` (the ``local`` runtime, where bubblewrap works: ``apt-get install bubblewrap``)
    Every command runs in a bubblewrap sandbox of its own: new mount, PID,
    network, IPC and user namespaces, every capability dropped. It sees its
    directory and a private ``HOME``/``TMPDIR`` (read-write), the system
    directories (``/usr``, ``/bin``, ``/lib*``, ``/etc``, ``/opt``, Python's
    installation; read-only), what the command's program needs to start
    wherever it lives (read-only: :func:`agentrig.runtime.sandbox.with_startup`;
    a program needing a path in or holding the parent's workspace or ``HOME`` is
    refused, exit 126), a private ``/tmp``, ``/proc`` (its own processes
    only) and a minimal ``/dev``. Nothing else exists: not the parent's
    workspace, not ``/run`` nor ``/var/run`` (the Docker socket), not the
    user's home. It has no network: only a loopback of its own, so the host's
    ``127.0.0.1`` and abstract Unix sockets are out of reach, and it cannot
    signal a process outside its sandbox.
``landlock`` (the ``local`` runtime without bubblewrap, Linux >= 5.13; ``confine: best_effort`` only)
    Every command runs under a kernel Landlock domain: it may read, write and
    run files only beneath the subagent's directory and a private temporary
    directory (``HOME`` and ``TMPDIR``); it may read and run the system
    directories; ``/dev`` allows reading and writing existing devices. The
    rest of the filesystem, the parent's workspace included, is refused
    (``Permission denied``) whatever the path: ``..``, absolute, or through a
    symlink. With Landlock ABI >= 4 it can neither bind nor connect TCP; with
    ABI >= 6 it can neither reach abstract Unix sockets nor signal processes
    outside its domain. **Not held:** ``connect()`` to a pathname Unix socket
    such as ``/var/run/docker.sock`` (Landlock does not check it in any ABI
    used here: a command could start a container mounting any host path),
    UDP, and reading a system directory above that holds the workspace (such a
    directory is dropped from the readable list). This is why ``confine:
    strict`` never settles for Landlock.
``cwd`` (any other runtime, only with ``confine: best_effort``)
    Commands only *start* in the subagent's directory; they can reach the
    rest of the workspace.

``confine: strict`` (the default) accepts ``container`` and ``bwrap`` only and
otherwise refuses in one line naming what to install.
"""

from __future__ import annotations

import os
import sys
import threading
from abc import abstractmethod
from dataclasses import replace
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal

from agentrig.runtime.commands import to_argv
from agentrig.runtime.interface import Invocation, Runtime, RuntimeProcess
from agentrig.scratch import temp_dir

if TYPE_CHECKING:
    from agentrig.runtime.local import LocalRuntime

ConfineMode = Literal["strict", "best_effort"]
ConfinementKind = Literal["container", "bwrap", "landlock", "cwd"]

#: The kinds that hold files, the Docker socket and the network: the only ones ``confine: strict`` accepts.
STRICT_KINDS: tuple[ConfinementKind, ...] = ("container", "bwrap")

#: Readable (and runnable) system directories for confined commands, when they exist.
SYSTEM_DIRECTORIES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")


class ConfinementError(RuntimeError):
    """``confine: strict`` cannot be honoured in this runtime; the message says why and what to do."""


@lru_cache(maxsize=1)
def landlock_abi() -> int:
    """The kernel's Landlock ABI (0: unavailable); asked once per process."""
    from agentrig_react import landlock

    return landlock.abi()


def bwrap_problem() -> str | None:
    """Why bubblewrap cannot sandbox commands here (one line), or ``None`` when it can; checked once per process."""
    from agentrig.runtime.sandbox import bwrap_problem as problem

    return problem()


@lru_cache(maxsize=1)
def _launcher_source() -> str:
    return (Path(__file__).with_name("landlock.py")).read_text(encoding="utf-8")


def _base(runtime: Runtime) -> Runtime:
    """The runtime a confined view wraps (views over views confine to the innermost directory)."""
    while isinstance(runtime, _View):
        runtime = runtime.parent
    return runtime


def _is_docker(base: Runtime) -> bool:
    from agentrig.runtime.docker import DockerRuntime

    return isinstance(base, DockerRuntime)


def _is_local(base: Runtime) -> bool:
    from agentrig.runtime.local import LocalRuntime

    return isinstance(base, LocalRuntime)


def confinement_kind(runtime: Runtime, mode: ConfineMode) -> ConfinementKind:
    """How commands in ``runtime`` would be confined, checked without starting anything.

    Container, then bubblewrap, then (``best_effort`` only) Landlock, then
    (``best_effort`` only) the starting directory. Raises
    :class:`ConfinementError` (one line: why, and what to do) when ``mode`` is
    ``strict`` and neither a container nor bubblewrap can confine them.
    """
    base = _base(runtime)
    if _is_docker(base):
        return "container"
    if _is_local(base):
        problem = bwrap_problem()
        if problem is None:
            return "bwrap"
        if mode == "best_effort":
            return "landlock" if landlock_abi() >= 1 else "cwd"
        abi = landlock_abi()
        landlock = (
            f"Landlock (ABI {abi}) cannot keep commands from the Docker socket"
            if abi >= 1
            else "this kernel offers no Landlock either"
        )
        raise ConfinementError(
            f"confine: strict cannot be honoured: {problem}; {landlock}. Install it (apt-get install bubblewrap), "
            "use the docker runtime, or set confine: best_effort"
        )
    if mode == "strict":
        raise ConfinementError(
            f"confine: strict cannot be honoured: the '{base.name}' runtime offers no way to confine commands to "
            "a directory; use the docker runtime, or set confine: best_effort "
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
    from agentrig.runtime.docker import DockerRuntime
    from agentrig.runtime.local import LocalRuntime

    if kind == "container" and isinstance(base, DockerRuntime):
        options = base.config.model_copy(update={"sweep_stale": False})
        env = {k: v for k, v in getattr(base, "environment", {}).items() if k != "HOME"}
        return DockerRuntime(host_directory, env=env, config=options, client=base.client), kind
    if kind == "bwrap" and isinstance(base, LocalRuntime):
        if base.config.sandbox != "none":
            # a command of a sandboxed runtime cannot make a sandbox of its own: the subagent's start outside it
            return BwrapRuntime(_unsandboxed(base), host_directory, protected=Path(base.workspace), owns_parent=True), kind
        return BwrapRuntime(base, host_directory, protected=Path(base.workspace)), kind
    if kind == "landlock" and isinstance(base, LocalRuntime):
        return LandlockRuntime(base, host_directory, protected=Path(base.workspace)), kind
    return CwdRuntime(runtime, host_directory), kind


def _unsandboxed(base: LocalRuntime) -> Runtime:
    """A local runtime like ``base`` (workspace, ``HOME``, environment, options) without its sandbox."""
    from agentrig.runtime.local import LocalRuntime

    home = getattr(base, "home", None)
    options = base.config.model_copy(update={"sandbox": "none", "network": None})
    return LocalRuntime(
        Path(base.workspace),
        home=Path(home) if home else None,
        env=getattr(base, "environment", {}),
        config=options,
    )


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

    def launch(self, invocation: Invocation) -> RuntimeProcess:
        """Start ``invocation`` in the parent runtime, in the directory unless its ``cwd`` says otherwise."""
        cwd = self._workdir if invocation.cwd is None else str(PurePosixPath(self._workdir) / invocation.cwd)
        return self._track(self.parent.start(replace(invocation, cwd=cwd)))


def readable_system_directories(protected: Path) -> list[str]:
    """The system directories (and Python's installation) a confined command may read and run, resolved.

    A directory that holds ``protected`` (the workspace), or lies inside it, is left out.
    """
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
    return readable


class _ConfinedView(_View):
    """A view of the local runtime whose commands see one directory and a private ``HOME``/``TMPDIR``."""

    kind: ConfinementKind

    def __init__(self, parent: Runtime, host_directory: Path, *, protected: Path) -> None:
        """Confine commands to ``host_directory``; no readable directory may hold ``protected`` (the workspace)."""
        super().__init__(parent)
        self.directory = Path(host_directory).resolve()
        self.protected = protected.resolve()
        self.private = temp_dir("agentrig-subagent-")  # named after this process: swept once it is gone
        self.name = f"{parent.name}:{self.kind}"
        self.readable = readable_system_directories(protected)

    @property
    def workdir(self) -> str:
        """The directory, as a host path."""
        return str(self.directory)

    @abstractmethod
    def _wrap(self, argv: list[str], directory: str, env: dict[str, str]) -> list[str]:
        """``argv`` as the command line that runs it confined, starting in ``directory`` with ``env`` added to the
        parent's environment; :class:`~agentrig.runtime.sandbox.SandboxStartError` when it cannot start there."""

    def launch(self, invocation: Invocation) -> RuntimeProcess:
        """Start ``invocation`` confined, in the directory unless its ``cwd`` says otherwise."""
        from agentrig.runtime.process import FinishedProcess
        from agentrig.runtime.sandbox import SandboxStartError

        environment = {"HOME": str(self.private), "TMPDIR": str(self.private), **(invocation.env or {})}
        directory = self.workdir if invocation.cwd is None else os.path.join(self.workdir, invocation.cwd)
        try:
            argv = self._wrap(to_argv(invocation.command), directory, environment)
        except SandboxStartError as exc:
            return self._track(FinishedProcess(126, f"agentrig: {exc}\n"))
        return self._track(self.parent.start(replace(invocation, command=argv, env=environment, cwd=directory)))

    def cleanup(self) -> None:
        """Kill what this view started and remove its private directory."""
        super().cleanup()
        import shutil

        shutil.rmtree(self.private, ignore_errors=True)


#: Run inside the sandbox before the command: a missing program is reported as a shell would (127).
_BWRAP_EXEC = 'command -v "$1" >/dev/null 2>&1 || { echo "agentrig: command not found: $1" >&2; exit 127; }; exec "$@"'


class BwrapRuntime(_ConfinedView):
    """Commands of the local runtime, each in a bubblewrap sandbox holding one directory (see the module's docstring)."""

    kind: ConfinementKind = "bwrap"

    def __init__(self, parent: Runtime, host_directory: Path, *, protected: Path, owns_parent: bool = False) -> None:
        """Confine commands to ``host_directory``; no readable directory may hold ``protected`` (the workspace).

        ``owns_parent``: ``parent`` was made for this view alone, and is cleaned up with it.
        """
        super().__init__(parent, host_directory, protected=protected)
        self._owns_parent = owns_parent
        # the sandbox's root is empty: system directories that are symlinks (/bin -> usr/bin) are made again
        links = [d for d in SYSTEM_DIRECTORIES if os.path.islink(d) and str(Path(d).resolve()) in self.readable]
        self._visible = (*links, *self.readable)

    def _wrap(self, argv: list[str], directory: str, env: dict[str, str]) -> list[str]:
        from agentrig.runtime.sandbox import BwrapSpec, bwrap_argv, with_startup

        spec = BwrapSpec(writable=(str(self.directory), str(self.private)), readable=self._visible, chdir=directory)
        # what the command needs to start beside the system directories (a virtual environment, a CLI's package)
        search_path = env.get("PATH") or getattr(self.parent, "environment", {}).get("PATH") or os.defpath
        # never from the parent's workspace or HOME
        protected = (str(self.protected), *([home] if (home := getattr(self.parent, "home", None)) else []))
        spec = with_startup(spec, argv, search_path=search_path, cwd=directory, protected=protected)
        return bwrap_argv(spec, ["/bin/sh", "-c", _BWRAP_EXEC, "sh", *argv])

    def cleanup(self) -> None:
        """Kill what this view started, remove its private directory, and end a parent made for it alone."""
        super().cleanup()
        if self._owns_parent:
            self.parent.cleanup()


class LandlockRuntime(_ConfinedView):
    """Commands of the local runtime confined by Landlock to one directory (see the module's docstring)."""

    kind: ConfinementKind = "landlock"

    def __init__(self, parent: Runtime, host_directory: Path, *, protected: Path) -> None:
        """Confine commands to ``host_directory``; no readable directory may hold ``protected`` (the workspace)."""
        super().__init__(parent, host_directory, protected=protected)
        self._spec: list[str] = ["--rw", str(self.directory), "--rw", str(self.private), "--dev", "/dev"]
        for path in self.readable:
            self._spec += ["--ro", path]

    def _wrap(self, argv: list[str], directory: str, env: dict[str, str]) -> list[str]:
        return [sys.executable, "-I", "-S", "-c", _launcher_source(), *self._spec, "--", *argv]
