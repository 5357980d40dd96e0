"""The ``local`` runtime: subprocesses on this machine, in the workspace directory.

Each command runs in its own session (process group), with standard input
closed unless given, in a minimal environment: a few variables inherited
from the host (``PATH``, locale, ...), the session's isolated ``HOME`` and
what the session and the call add. Nothing else of the host's environment
(API keys included) reaches the command.

Without a sandbox (``sandbox: none``, the default) a command runs as the
user running agentrig, with everything that user can do: it can read the
user's files and agentrig's own ``/proc/<pid>/environ`` (the API keys), write
outside the workspace, signal agentrig, and use the network and every local
socket (the Docker engine's included). ``sandbox: bwrap`` runs each command
in a bubblewrap sandbox (:mod:`agentrig.runtime.sandbox`): the workspace, the
session's ``HOME`` (and a workspace copy being tested) read-write, the rest of
the system read-only, ``/run`` and agentrig's credential directory hidden, a
private ``/tmp``, ``/proc`` and PID namespace, and no network unless
``network: host``. What a command needs to start that lies under ``/tmp`` (its
interpreter, a virtual environment: :func:`agentrig.runtime.sandbox.with_startup`)
is shown there read-only; the rest of ``/tmp`` stays private.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from agentrig.runtime.commands import merge_env, to_argv
from agentrig.runtime.errors import parse_options
from agentrig.runtime.interface import Invocation, Runtime, RuntimeProcess, RuntimeResult, WorkspaceCopy
from agentrig.runtime.process import DEFAULT_MAX_OUTPUT, Chunks, FinishedProcess, ProcessSet, SupervisedProcess
from agentrig.runtime.proctree import interrupt_tree, kill_marked, kill_tree

if TYPE_CHECKING:
    from agentrig.runtime.sandbox import BwrapSpec

#: Set in every command's environment to find its processes at cleanup.
MARKER_ENV = "AGENTRIG_RUNTIME_ID"

#: Host variables a command inherits unless the config says otherwise.
DEFAULT_INHERIT = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM", "USER", "LOGNAME", "SHELL", "TMPDIR")

#: Host variables that TLS clients and tool managers need, passed through when set on the host
#: (besides ``inherit_env``): certificate bundles (``uv``, ``pip``, ``requests``, ``curl``, node),
#: and where rustup, cargo, uv, pyenv, nvm and Go keep their toolchains and caches. None of them
#: holds a secret; variables that may embed credentials (index URLs, tokens) are not here.
TOOL_ENV = (
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "PIP_CERT",
    "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "CARGO_HOME", "UV_CACHE_DIR", "UV_PYTHON_INSTALL_DIR", "UV_TOOL_DIR",
    "PYENV_ROOT", "PYENV_VERSION", "NVM_DIR", "GOPATH", "GOMODCACHE", "GOCACHE", "JAVA_HOME", "PIP_FIND_LINKS",
)

#: Tool managers that find their installation (or cache) under ``~`` when their variable is unset:
#: with the session's isolated ``HOME`` they would not, so the host's directory is named (uv's
#: cache: else every evaluation of a SlopCodeBench checkpoint downloads its test tools anew).
_HOME_TOOLS = (("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo"), ("UV_CACHE_DIR", ".cache/uv"))


def tool_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The :data:`TOOL_ENV` variables set in ``environ`` (default: the host's), plus
    ``RUSTUP_HOME`` / ``CARGO_HOME`` / ``UV_CACHE_DIR`` pointing at ``~/.rustup`` / ``~/.cargo`` /
    ``~/.cache/uv`` when unset but present, so ``cargo`` (a rustup proxy) works and ``uv`` finds
    its cache under an isolated ``HOME``."""
    environ = os.environ if environ is None else environ
    found = {name: environ[name] for name in TOOL_ENV if environ.get(name)}
    home = environ.get("HOME")
    if home:
        for name, directory in _HOME_TOOLS:
            if name not in found and Path(home, directory).is_dir():
                found[name] = str(Path(home, directory))
    return found


class LocalRuntimeConfig(BaseModel):
    """Options of the ``local`` runtime."""

    model_config = ConfigDict(extra="forbid")

    inherit_env: list[str] = Field(
        default_factory=lambda: list(DEFAULT_INHERIT),
        description="Host environment variables passed through to commands (others are not).",
    )
    max_output: int = Field(default=DEFAULT_MAX_OUTPUT, gt=0, description="Characters of each stream kept in a result.")
    pass_tool_env: bool = Field(
        default=True,
        description="Pass the host's certificate-bundle and tool-manager variables (SSL_CERT_FILE, RUSTUP_HOME, ...) when set.",
    )
    sandbox: Literal["none", "bwrap"] = Field(
        default="none",
        description="'bwrap': every command in a bubblewrap sandbox (workspace and HOME writable, the rest of the "
        "system read-only, /run hidden, private /tmp, /proc and PID namespace); 'none': no sandbox.",
    )
    network: Literal["none", "host"] | None = Field(
        default=None,
        description="With sandbox=bwrap: 'none' (default; the sandbox's own loopback only) or 'host'. "
        "Without a sandbox commands always have the host's network.",
    )

    @field_validator("sandbox")
    @classmethod
    def _sandbox_works(cls, value: str) -> str:
        if value == "bwrap":
            from agentrig.runtime.sandbox import bwrap_problem

            problem = bwrap_problem()
            if problem is not None:
                raise PydanticCustomError("sandbox_unavailable", problem)
        return value

    @field_validator("network")
    @classmethod
    def _network_needs_a_sandbox(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value == "none" and info.data.get("sandbox", "none") == "none":
            raise PydanticCustomError(
                "network_needs_sandbox", "'none' needs sandbox=bwrap (without a sandbox commands use the host's network)"
            )
        return value


class LocalProcess(SupervisedProcess):
    """A subprocess supervised by a monitor thread."""

    def __init__(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        stdin: bytes | None,
        timeout: float | None,
        idle_timeout: float | None,
        max_output: int,
        background: bool = True,
    ) -> None:
        """Start ``argv``; raises ``OSError`` when it cannot be executed."""
        super().__init__(timeout=timeout, idle_timeout=idle_timeout, max_output=max_output)
        self.popen = subprocess.Popen(
            argv,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: one signal reaches the whole tree
            close_fds=True,
        )
        self.pid = self.popen.pid
        self._selector = selectors.DefaultSelector()
        assert self.popen.stdout is not None and self.popen.stderr is not None
        self._selector.register(self.popen.stdout.fileno(), selectors.EVENT_READ, "stdout")
        self._selector.register(self.popen.stderr.fileno(), selectors.EVENT_READ, "stderr")
        self._exited = False
        self._pipes = 2
        try:
            # a pidfd becomes readable when the process exits: no polling for it
            self._pidfd: int | None = os.pidfd_open(self.pid)
            self._selector.register(self._pidfd, selectors.EVENT_READ, "exit")
            self.exit_poll_interval = None
        except (AttributeError, OSError):
            self._pidfd = None
        if stdin is not None:
            # a writer thread: a process that does not read its input must not block us
            threading.Thread(target=self._feed, args=(stdin,), name="agentrig-stdin", daemon=True).start()
        self._begin(f"agentrig-local-{self.pid}", background=background)

    def _feed(self, data: bytes) -> None:
        assert self.popen.stdin is not None
        try:
            self.popen.stdin.write(data)
        except (BrokenPipeError, OSError, ValueError):
            pass
        finally:
            try:
                self.popen.stdin.close()
            except (BrokenPipeError, OSError):
                pass

    def _read(self, timeout: float | None) -> Chunks | None:
        if self._pipes == 0 and (self._exited or self._pidfd is None):
            return None
        chunks: Chunks = []
        for key, _ in self._selector.select(timeout):
            if key.data == "exit":
                self._exited = True
                self._selector.unregister(key.fd)
                continue
            data = os.read(key.fd, 65536)
            if data:
                chunks.append((key.data, data))
            else:
                self._selector.unregister(key.fd)
                self._pipes -= 1
        if self._pipes == 0 and not self._exited and self.popen.poll() is not None:
            self._exited = True  # usually gone by the time its pipes close: skip one wake-up
        if not chunks and self._pipes == 0 and (self._exited or self._pidfd is None):
            return None
        return chunks

    def _main_exited(self) -> bool:
        if self._pidfd is not None:
            return self._exited
        return self.popen.poll() is not None

    def _kill_tree(self) -> None:
        kill_tree(self.pid)

    def _interrupt_tree(self) -> bool:
        return interrupt_tree(self.pid)

    def _exit_code(self) -> int | None:
        try:
            code = self.popen.wait() if self._exited else self.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            kill_tree(self.pid)
            code = self.popen.wait()
        # a signal death reads like a shell reports it (SIGKILL -> 137), as in a container
        return 128 - code if code < 0 else code

    def _close(self) -> None:
        self._selector.close()
        if self._pidfd is not None:
            os.close(self._pidfd)
        for pipe in (self.popen.stdout, self.popen.stderr):
            if pipe is not None:
                pipe.close()


#: How many times a command is started when its bubblewrap sandbox could not be set up (see :meth:`LocalRuntime.run`).
SANDBOX_SETUP_TRIES = 3


def sandbox_not_set_up(result: RuntimeResult) -> bool:
    """Whether ``result`` is bubblewrap's own failure to bind the host's mounts, before the command started: exit
    status 1, no output, and one line of ``bwrap``'s mount errors."""
    lines = result.stderr.splitlines()
    return (result.exit_code == 1 and not result.stdout and len(lines) == 1
            and lines[0].startswith(("bwrap: Can't bind mount", "bwrap: Can't remount readonly")))


class LocalRuntime(Runtime):
    """Commands run as subprocesses of this process, in the workspace directory."""

    name = "local"
    options_model = LocalRuntimeConfig

    def __init__(
        self,
        workspace: Path,
        *,
        home: Path | None = None,
        env: Mapping[str, str] | None = None,
        config: LocalRuntimeConfig | Mapping[str, Any] | None = None,
    ) -> None:
        """A runtime working in ``workspace``, with ``home`` as ``HOME`` and ``env`` added to every command."""
        from agentrig.workspace import WorkspaceError

        workspace = Path(workspace)
        if not workspace.is_dir():
            raise WorkspaceError(f"workspace '{workspace}' is not an existing directory")
        if home is not None and not Path(home).is_dir():
            raise WorkspaceError(f"home directory '{home}' is not an existing directory")
        self.config = parse_options(LocalRuntimeConfig, config, self.name)
        self.workspace = workspace.resolve()
        self._home = Path(home).resolve() if home is not None else None
        base = tool_environment() if self.config.pass_tool_env else {}
        base.update({name: os.environ[name] for name in self.config.inherit_env if name in os.environ})
        if self._home is not None:
            base["HOME"] = str(self._home)
        base.setdefault("PATH", os.defpath)
        self._env = merge_env(base, env)
        # every command inherits this marker, so background processes that left
        # their command's process group are still found and killed at cleanup
        self._marker = uuid.uuid4().hex
        self._env[MARKER_ENV] = self._marker
        # and the tag of this process: what outlives it (kill -9) is swept by the next agentrig
        from agentrig.scratch import OWNER_ENV, owner_tag

        self._env[OWNER_ENV] = owner_tag()
        self._processes = ProcessSet()
        self._closed = False
        self._copies: set[Path] = set()  # workspace copies being tested: writable in the sandbox too
        self._removals: list[threading.Thread] = []

    @property
    def workdir(self) -> str:
        """The workspace directory on this machine."""
        return str(self.workspace)

    @property
    def home(self) -> str | None:
        """``HOME`` as commands see it."""
        return str(self._home) if self._home is not None else None

    @property
    def environment(self) -> dict[str, str]:
        """The base environment every command gets (before a call's own ``env``)."""
        return dict(self._env)

    def launch(self, invocation: Invocation) -> RuntimeProcess:
        """Start ``invocation`` (str: through ``sh -c``; list: no shell) in the workspace."""
        return self._spawn(invocation)

    def run(self, invocation: Invocation) -> RuntimeResult:
        """Run ``invocation`` to completion, supervised on the calling thread.

        In the bubblewrap sandbox, a command whose sandbox could not be set up because the host's mounts changed
        while ``bwrap`` bound them (Docker starting or stopping a container: ``bwrap: Can't bind mount /oldroot/
        on /newroot/: Unable to apply mount flags``) never started: it is started again, up to
        :data:`SANDBOX_SETUP_TRIES` times in all."""
        for attempt in range(1, SANDBOX_SETUP_TRIES + 1):
            process = self._spawn(invocation, background=False)
            self._last = process
            result = process.run_inline() if isinstance(process, SupervisedProcess) else process.wait()
            if attempt == SANDBOX_SETUP_TRIES or self.config.sandbox != "bwrap" or not sandbox_not_set_up(result):
                return result
            time.sleep(0.05 * attempt)
        raise AssertionError("unreachable")  # the loop returns on its last try

    def _spawn(self, invocation: Invocation, *, background: bool = True) -> RuntimeProcess:
        if self._closed:
            raise RuntimeError("runtime has been cleaned up")
        argv = to_argv(invocation.command)
        full_env = merge_env(self._env, invocation.env)
        directory = self.workspace if invocation.cwd is None else (self.workspace / invocation.cwd)
        stdin = invocation.stdin
        data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
        if self.config.sandbox == "bwrap":
            sandboxed = self._sandboxed(argv, full_env, directory)
            if isinstance(sandboxed, FinishedProcess):
                return sandboxed
            argv = sandboxed
        try:
            process = LocalProcess(
                argv,
                cwd=directory,
                env=full_env,
                stdin=data,
                timeout=invocation.timeout,
                idle_timeout=invocation.idle_timeout,
                max_output=self.config.max_output,
                background=background,
            )
        except FileNotFoundError as exc:
            if not directory.is_dir():
                return FinishedProcess(126, f"agentrig: working directory '{directory}' does not exist\n")
            return FinishedProcess(127, f"agentrig: command not found: {argv[0]} ({exc.strerror})\n")
        except PermissionError:
            return FinishedProcess(126, f"agentrig: permission denied: {argv[0]}\n")
        self._processes.add(process)
        return process

    def _sandboxed(self, argv: list[str], env: dict[str, str], directory: Path) -> list[str] | FinishedProcess:
        """``argv`` wrapped in a bubblewrap sandbox (``env`` gets the sandbox's ``TMPDIR``), or how it ended already."""
        import shutil

        from agentrig.runtime.sandbox import SandboxStartError, bwrap_argv, with_startup

        # found before the sandbox starts: bwrap reports a missing program as exit status 1, not 127
        if "/" in argv[0]:
            program = str(directory / argv[0]) if os.path.isfile(directory / argv[0]) else None
            if program is not None and not os.access(program, os.X_OK):
                return FinishedProcess(126, f"agentrig: permission denied: {argv[0]}\n")
        else:
            program = shutil.which(argv[0], path=env.get("PATH", os.defpath))
        if program is None:
            if not directory.is_dir():
                return FinishedProcess(126, f"agentrig: working directory '{directory}' does not exist\n")
            return FinishedProcess(127, f"agentrig: command not found: {argv[0]}\n")
        try:
            spec = with_startup(self.sandbox_spec(directory), argv, search_path=env.get("PATH", os.defpath), cwd=str(directory))
        except SandboxStartError as exc:
            return FinishedProcess(126, f"agentrig: {exc}\n")
        if "TMPDIR" in env:
            env["TMPDIR"] = "/tmp"  # the host's may be read-only in the sandbox; its /tmp is private and writable
        return bwrap_argv(spec, argv)

    def sandbox_spec(self, directory: Path | None = None) -> BwrapSpec:
        """The bubblewrap sandbox a command starting in ``directory`` (default: the workspace) runs in with
        ``sandbox: bwrap``: what else runs beside the agent's commands (the react agent's stdio MCP servers)
        takes the same one."""
        from agentrig.credentials import credentials_dir
        from agentrig.runtime.sandbox import HIDDEN_DIRECTORIES, BwrapSpec

        directory = self.workspace if directory is None else directory
        writable = [str(self.workspace), *([str(self._home)] if self._home is not None else [])]
        writable += [str(copy) for copy in sorted(self._copies) if directory == copy or copy in directory.parents]
        # agentrig's own credential files are hidden too (the rest of the host stays readable)
        hidden = (*HIDDEN_DIRECTORIES, str(credentials_dir()))
        return BwrapSpec(
            writable=tuple(writable), network=self.config.network == "host", chdir=str(directory), hidden=hidden
        )

    @contextmanager
    def workspace_copy(self) -> Iterator[WorkspaceCopy]:
        """A copy of the workspace on the host, beside it (same file system), removed afterwards."""
        import shutil
        import tempfile

        from agentrig.runtime.interface import RuntimeFileError

        try:
            scratch = Path(tempfile.mkdtemp(prefix="agentrig-tests-", dir=self.workspace.parent))
            copy = scratch / self.workspace.name
            shutil.copytree(self.workspace, copy, symlinks=True)
        except OSError as exc:
            raise RuntimeFileError(f"cannot copy the workspace for the tests: {exc}") from None
        self._copies.add(copy)
        try:
            yield WorkspaceCopy(path=str(copy), host=copy)
        finally:
            self._copies.discard(copy)
            # removed off the evaluation's path (unlinks are slow on some file systems); cleanup() waits
            self._removals = [t for t in self._removals if t.is_alive()]
            remover = threading.Thread(
                target=shutil.rmtree, args=(scratch,), kwargs={"ignore_errors": True}, name="agentrig-copy-removal"
            )
            remover.start()
            self._removals.append(remover)

    def upload(self, source: Path, target: str) -> None:
        """Copy ``source`` (file or directory) to the host path ``target`` (relative: to the workspace).

        Into the workspace or a workspace copy (what the agent's commands write), no symbolic link there is
        followed (:func:`agentrig.boundary.copy_under`): a link on the way raises
        :class:`~agentrig.boundary.BoundaryError` naming it."""
        import shutil

        from agentrig.boundary import copy_under

        source, destination = Path(source), Path(os.path.normpath(self.workspace / target))
        for root in (self.workspace, *self._copies):
            if destination == root or root in destination.parents:
                copy_under(root, destination.relative_to(root).as_posix(), source, f"upload to '{target}'")
                return
        destination.parent.mkdir(parents=True, exist_ok=True)  # elsewhere on the host: a place of the caller's
        if source.is_dir():
            shutil.copytree(source, destination, symlinks=True, dirs_exist_ok=True)
        else:
            shutil.copy2(source, destination)

    def read_file(self, path: str) -> bytes | None:
        """The content of the host file ``path`` (relative: to the workspace), or ``None``."""
        file = self.workspace / path
        return file.read_bytes() if file.is_file() else None

    def kill(self) -> None:
        """Kill every running command, and the background processes commands left behind."""
        self._processes.kill_all()
        kill_marked(MARKER_ENV, self._marker)

    def cleanup(self) -> None:
        """Kill everything this runtime started and wait for workspace copies to be removed; idempotent."""
        self.kill()
        for remover in self._removals:
            remover.join()
        self._removals = []
        self._closed = True
