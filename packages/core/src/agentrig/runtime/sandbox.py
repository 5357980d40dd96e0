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
- the listed writable directories bound read-write at their own paths;
- no network (only the sandbox's own loopback: the host's ``127.0.0.1`` and
  its abstract Unix sockets are out of reach) unless ``network`` is set.

The environment passes through unchanged: callers give ``bwrap`` the
minimal environment the command should see.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

#: What to install when ``bwrap`` is missing (Debian and Ubuntu; other distributions call the package the same).
INSTALL_HINT = "apt-get install bubblewrap"

#: Directories hidden under an empty tmpfs when the host root is bound read-only: they hold the sockets
#: of the machine's services (the Docker engine's among them) and the users' runtime directories.
HIDDEN_DIRECTORIES = ("/run", "/var/run")


@dataclass(frozen=True)
class BwrapSpec:
    """What a sandbox shows of the host.

    ``writable`` directories are bound read-write at their own paths (they
    must exist). ``readable`` ``None`` binds the whole host root read-only
    (with :data:`HIDDEN_DIRECTORIES` and the Docker socket hidden); a tuple
    binds only those paths read-only (a top-level symlink such as ``/bin ->
    usr/bin`` is recreated as a symlink). ``network`` keeps the host's network
    namespace. ``chdir`` is where the command starts.
    """

    writable: tuple[str, ...]
    readable: tuple[str, ...] | None = None
    network: bool = False
    chdir: str | None = None
    hidden: tuple[str, ...] = field(default=HIDDEN_DIRECTORIES)


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
    for path in spec.writable:
        argv += ["--bind", path, path]
    if spec.chdir is not None:
        argv += ["--chdir", spec.chdir]
    return [*argv, "--", *command]
