"""Bubblewrap (``bwrap``) sandboxes: a command in new mount, PID and network namespaces.

:func:`bwrap_argv` wraps a command so that it runs in a sandbox of its own
(one per command, as the Claude Code and Codex CLIs do on Linux):

- new user, mount, PID, network, IPC, UTS and cgroup namespaces
  (``--unshare-all``), every capability dropped, a new session (no ``TIOCSTI``
  into the caller's terminal), killed with its parent (``--die-with-parent``);
  killing ``bwrap`` kills its namespace's init and with it every process of
  the command, background ones included;
- a private ``/proc`` (only the sandbox's processes: not agentrig's
  ``/proc/<pid>/environ``), a minimal ``/dev``, a private ``/tmp``;
- the filesystem either the whole host root read-only (the local runtime's
  sandbox) with ``/run`` and ``/var/run`` hidden under empty tmpfs (a
  read-only bind does not stop ``connect()`` to a Unix socket such as
  ``/var/run/docker.sock``), or only the listed directories read-only (a
  subagent's sandbox: nothing else exists);
- what the command needs to start (:func:`with_startup`: its program, the
  interpreter of a ``#!`` script, a Python's environment and import path),
  bound read-only at its own path where the sandbox would not show it (under
  ``/tmp`` most often: a ``HOME``, a virtual environment, a CI runner's tool
  cache); the rest of ``/tmp`` stays private;
- the listed writable directories bound read-write at their own paths;
- no network (only the sandbox's own loopback: the host's ``127.0.0.1`` and
  its abstract Unix sockets are out of reach) unless ``network`` is set.

:func:`with_startup` fills a spec's ``startup`` paths in for a command, or
refuses it (:class:`SandboxStartError`, one line) when what it needs cannot
be shown without showing what must stay out.

The environment passes through unchanged: callers give ``bwrap`` the
minimal environment the command should see.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

#: What to install when ``bwrap`` is missing (Debian and Ubuntu; other distributions call the package the same).
INSTALL_HINT = "apt-get install bubblewrap"

#: Directories hidden under an empty tmpfs when the host root is bound read-only: they hold the sockets
#: of the machine's services (the Docker engine's among them) and the users' runtime directories.
HIDDEN_DIRECTORIES = ("/run", "/var/run")

#: What the host-root sandbox mounts afresh: nothing of the host's shows there unless bound on top.
PRIVATE_DIRECTORIES = ("/tmp", "/dev", "/proc")

#: Never bound whole for a command to start: everything beneath them would show.
TOO_WIDE = ("/", "/tmp")


class SandboxStartError(Exception):
    """A command cannot start in its sandbox: a path it needs cannot be shown safely (the message: one line)."""


@dataclass(frozen=True)
class BwrapSpec:
    """What a sandbox shows of the host.

    ``writable`` directories are bound read-write at their own paths (they
    must exist). ``readable`` ``None`` binds the whole host root read-only
    (with :data:`HIDDEN_DIRECTORIES` and the Docker socket hidden); a tuple
    binds only those paths read-only (a top-level symlink such as ``/bin ->
    usr/bin`` is recreated as a symlink). ``startup`` paths are bound
    read-only on top (what the command needs to start: :func:`with_startup`
    fills them in). ``network`` keeps the host's network namespace. ``chdir``
    is where the command starts.
    """

    writable: tuple[str, ...]
    readable: tuple[str, ...] | None = None
    network: bool = False
    chdir: str | None = None
    hidden: tuple[str, ...] = field(default=HIDDEN_DIRECTORIES)
    startup: tuple[str, ...] = ()


def bwrap_path() -> str | None:
    """The ``bwrap`` executable on ``PATH``, or ``None``."""
    return shutil.which("bwrap")


@lru_cache(maxsize=1)
def bwrap_problem() -> str | None:
    """Why ``bwrap`` cannot sandbox commands here (one line naming what to do), or ``None`` when it can.

    Checked once per process by starting a real sandbox with every namespace
    (some kernels forbid unprivileged user namespaces).
    """
    program = bwrap_path()
    if program is None:
        return f"bubblewrap (bwrap) is not installed: {INSTALL_HINT}"
    probe = [program, *_isolation(network=False), "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap ({program}) cannot start: {exc}"
    if done.returncode != 0:
        reason = " ".join(done.stderr.split())[:200] or f"exit status {done.returncode}"
        return f"bwrap ({program}) cannot create a sandbox here: {reason}"
    return None


@lru_cache(maxsize=1)
def bwrap_version() -> str | None:
    """``bwrap --version`` (e.g. ``bubblewrap 0.8.0``), or ``None`` when it is missing."""
    program = bwrap_path()
    if program is None:
        return None
    try:
        return subprocess.run([program, "--version"], capture_output=True, text=True, timeout=10).stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        return None


def _isolation(*, network: bool) -> list[str]:
    argv = ["--die-with-parent", "--new-session", "--unshare-all"]
    if network:
        argv.append("--share-net")
    if os.geteuid() == 0:
        argv += ["--cap-drop", "ALL"]  # root keeps its capabilities in the sandbox unless told otherwise
    return argv


def _docker_socket() -> str | None:
    """The Unix socket ``DOCKER_HOST`` names, when it names one that exists (hidden wherever it lies)."""
    host = os.environ.get("DOCKER_HOST", "")
    if host.startswith("unix://"):
        path = host[len("unix://") :]
        if os.path.exists(path):
            return path
    return None


def bwrap_argv(spec: BwrapSpec, command: Sequence[str], *, program: str | None = None) -> list[str]:
    """The argv running ``command`` in the sandbox ``spec`` describes (see the module's docstring).

    ``program`` is the ``bwrap`` executable (default: the one on ``PATH``);
    raises ``FileNotFoundError`` when there is none.
    """
    program = program or bwrap_path()
    if program is None:
        raise FileNotFoundError(f"bubblewrap (bwrap) is not installed: {INSTALL_HINT}")
    argv = [program, *_isolation(network=spec.network)]
    if spec.readable is None:
        argv += ["--ro-bind", "/", "/"]
    # the private /tmp first: a directory bound below comes on top of it
    argv += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    if spec.readable is None:
        hidden: list[str] = []
        for directory in spec.hidden:
            real = os.path.realpath(directory)
            if os.path.isdir(real) and real not in hidden:
                hidden.append(real)
        for directory in hidden:
            argv += ["--tmpfs", directory]
        socket = _docker_socket()
        if socket is not None and not any(Path(socket).resolve().is_relative_to(d) for d in hidden):
            argv += ["--ro-bind", "/dev/null", socket]
    else:
        for path in spec.readable:
            if os.path.islink(path) and os.path.dirname(path.rstrip("/")) == "/":
                argv += ["--symlink", os.readlink(path), path]
            else:
                argv += ["--ro-bind", path, path]
    for path in spec.startup:
        argv += ["--ro-bind", path, path]
    for path in spec.writable:
        argv += ["--bind", path, path]
    if spec.chdir is not None:
        argv += ["--chdir", spec.chdir]
    return [*argv, "--", *command]


def with_startup(
    spec: BwrapSpec, command: Sequence[str], *, search_path: str, cwd: str, protected: Sequence[str] = ()
) -> BwrapSpec:
    """``spec`` showing, read-only, what ``command`` needs to start where ``spec`` alone would not show it.

    Needed: what its program (``command[0]``, found as ``execvp`` finds it on ``search_path``, the
    ``PATH`` the command gets) needs, as :func:`agentrig.runtime.startup.program_needs` follows it; a path
    that cannot be shown safely raises :class:`SandboxStartError` naming it and what to do. With the
    host root (``readable`` ``None``), also what agentrig's own interpreter needs (a ``sh -c`` script
    often runs it) and the environments of ``search_path``'s entries (what a shell finds there), where
    they can be shown safely. A path can be when it lies under no hidden directory, is not ``/`` nor
    ``/tmp``, holds none of the writable and hidden directories, agentrig's temporary directory and
    the Docker socket, and neither holds nor lies in a ``protected`` directory. Only those paths are
    bound: the rest of the private ``/tmp`` stays private.
    """
    from agentrig.runtime import startup

    program = startup.find_program(command[0], search_path=search_path, cwd=cwd) if command else None
    needed = startup.program_needs(program, search_path=search_path) if program is not None else []
    wanted: list[startup.Need] = []
    if spec.readable is None:
        wanted = startup.interpreter_needs()
        for entry in search_path.split(os.pathsep):
            if os.path.isabs(entry) and os.path.isdir(entry):
                wanted += startup.directory_needs(os.path.normpath(entry))
    socket = _docker_socket()
    guarded = [*spec.writable, tempfile.gettempdir(), *([socket] if socket is not None else [])]
    hidden = _hidden(spec)
    binds: list[str] = []
    for need in [*needed, *wanted]:
        if need.path in binds or _shown(need.path, spec, hidden):
            continue
        problem = _unsafe(need.path, hidden, guarded, protected)
        if problem is None:
            binds.append(need.path)
        elif need in needed:
            raise SandboxStartError(
                f"{need.program} cannot start in the bubblewrap sandbox: it needs {need.path}, which {problem}"
            )
    # a path inside another one bound is shown with it
    startup_paths = sorted(p for p in binds if not any(p != other and _within(p, other) for other in binds))
    return replace(spec, startup=tuple(startup_paths))


def _within(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _hidden(spec: BwrapSpec) -> list[str]:
    named = [*HIDDEN_DIRECTORIES, *spec.hidden]
    return list(dict.fromkeys([*named, *(os.path.realpath(d) for d in named)]))


def _shown(path: str, spec: BwrapSpec, hidden: Sequence[str]) -> bool:
    """Whether the sandbox ``spec`` (hiding ``hidden``) shows the host's ``path`` at that path without binding it."""
    if any(_within(path, directory) for directory in spec.writable):
        return True
    if spec.readable is None:
        return not any(_within(path, d) for d in (*PRIVATE_DIRECTORIES, *hidden))
    return any(_within(path, directory) for directory in spec.readable)


def _unsafe(path: str, hidden: Sequence[str], guarded: Sequence[str], protected: Sequence[str]) -> str | None:
    """Why showing ``path`` whole in the sandbox would show what must stay out of it (and what to do), or ``None``."""
    real = os.path.realpath(path)
    for directory in hidden:
        if _within(path, directory) or _within(real, directory):
            return f"lies under {directory}, which the sandbox hides (service sockets, credentials): install it elsewhere"
    if path in TOO_WIDE or real in TOO_WIDE:
        return "is too wide to show whole: install what it holds in a directory of its own"
    for directory in protected:
        if _within(path, directory) or _within(real, os.path.realpath(directory)):
            return f"lies in {directory}, which this sandbox must not show: run it from elsewhere"
    for private in [*guarded, *protected, *hidden]:
        if _within(private, path) or _within(os.path.realpath(private), real):
            return (f"holds {private}, which must stay out of the sandbox: move the environment, or the workspace "
                    "(the run's --output), elsewhere")
    return None
