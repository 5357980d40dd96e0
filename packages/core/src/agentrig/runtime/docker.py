"""The ``docker`` runtime: one long-lived container per session, commands run by exec.

The container runs ``sleep infinity`` under an init, with the workspace
bind-mounted at ``/workspace`` (or at the ``workdir`` option: a task image's
own working directory) and the session's home at ``/home/agentrig``.
Commands run through the low-level exec API as the host user's uid:gid (files
on the host are not root-owned), their environment passed in the API request
(never on a command line visible in ``ps``). Output is read from the exec's
hijacked socket and demultiplexed here, so wall and idle timeouts are
enforced while reading; a timeout kills the exec's whole process tree.

Containers carry the ``agentrig`` label and their owner's host and pid; they
are removed on cleanup (and on SIGINT/SIGTERM through the session teardown),
and those whose owner died without cleaning up are swept at the next start.

With the ``compose`` option (a multi-container task), the runtime starts a
Docker Compose project instead (:mod:`agentrig.runtime.compose`: ``main``
defined as the container above, the task's services beside it) and adopts its
``main`` container; cleanup removes the whole project.


The ``network`` option is ``none`` (the default), ``host``, ``bridge`` or a
network's name; ``bridge`` is the engine's default bridge, or a private network
made for the session on an engine without one (:mod:`agentrig.runtime.networks`:
labelled, removed and swept like the container). ``verifier_network`` is the
network while :meth:`DockerRuntime.verifier_phase` lasts (a Harbor task's
verifier may have another network than its agent).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import select
import shlex
import socket
import struct
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from agentrig.runtime.commands import merge_env, to_argv
from agentrig.runtime.compose import ComposeOptions
from agentrig.runtime.errors import DockerUnavailableError, ImageNotFoundError, RuntimeSetupError, parse_options
from agentrig.runtime.interface import Invocation, Runtime, RuntimeProcess
from agentrig.runtime.oci import NAME_PATTERN, is_default, missing_message
from agentrig.runtime.owners import LABEL, LABEL_HOST, LABEL_PID, LABEL_SESSION, LABEL_START, owner_alive
from agentrig.runtime.process import DEFAULT_MAX_OUTPUT, Chunks, ProcessSet, StreamName, SupervisedProcess
from agentrig.runtime.proctree import interrupt_tree, kill_tree, process_start_time

if TYPE_CHECKING:
    import docker

    from agentrig.runtime.compose import ComposeProject

log = logging.getLogger(__name__)

EXEC_MARKER = "AGENTRIG_EXEC_ID"
RUNTIME_MARKER = "AGENTRIG_RUNTIME_ID"
CONTAINER_WORKDIR = "/workspace"
CONTAINER_HOME = "/home/agentrig"
_HEADER = struct.Struct(">BxxxL")
_STREAMS: dict[int, StreamName] = {1: "stdout", 2: "stderr"}


class BindMount(BaseModel):
    """A host directory bound into the container (an agent bundle: read-only)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str = Field(pattern=r"^/", description="Absolute path of an existing directory on the engine's host.")
    target: str = Field(pattern=r"^/.+", description="Absolute path in the container.")
    read_only: bool = Field(default=True, description="Bind it read-only.")


class DockerRuntimeConfig(BaseModel):
    """Options of the ``docker`` runtime (``--image`` sets ``image``)."""

    model_config = ConfigDict(extra="forbid")

    image: str = Field(min_length=1, description="Image to run (never pulled: it must be present locally).")
    workdir: str = Field(
        default=CONTAINER_WORKDIR,
        pattern=r"^/.+",
        description="Absolute path where the workspace is mounted and commands run (a task image's WORKDIR, e.g. /app).",
    )
    network: str = Field(
        default="none",
        min_length=1,
        description="Network: 'none' (default), 'host', 'bridge' (the engine's default bridge; on an engine without "
        "one, a private bridge network made for the session and removed with it) or an existing network's name.",
    )
    verifier_network: str | None = Field(
        default=None,
        min_length=1,
        description="The network while a format's verifier runs in the container (a Harbor task's verifier phase); "
        "None: the same as network.",
    )
    mem_limit: str | None = Field(default=None, description="Memory limit, e.g. '2g' (swap is not allowed beyond it).")
    cpus: float | None = Field(default=None, gt=0, description="CPU limit in cores, e.g. 1.5.")
    pids_limit: int | None = Field(default=None, gt=0, description="Maximum number of processes in the container.")
    user: str | None = Field(default=None, description="uid:gid commands run as (default: the host user's).")
    init: bool = Field(default=True, description="Run the container's main process under an init (reaps zombies).")
    max_output: int = Field(default=DEFAULT_MAX_OUTPUT, gt=0, description="Characters of each stream kept in a result.")
    sweep_stale: bool = Field(default=True, description="Remove containers left by crashed agentrig runs on this host.")
    mounts: list[BindMount] = Field(
        default_factory=list,
        description="More host directories bound into the container (set for an agent bundle: "
        "/opt/agentrig/agents/<agent>-<version>, read-only).",
    )
    oci_runtime: str | None = Field(
        default=None,
        pattern=NAME_PATTERN,
        description="The OCI runtime the container runs under, registered with the Docker engine: 'runsc' (gVisor) "
        "gives the agent's commands a kernel of their own in user space, as defence in depth; default: the engine's "
        "(runc). Checked when the run starts.",
    )
    compose: ComposeOptions | None = Field(
        default=None,
        description="Start a Docker Compose project and adopt its `main` container instead of starting one (set by a "
        "format, e.g. a Harbor task with environment/docker-compose.yaml).",
    )

    @field_validator("oci_runtime")
    @classmethod
    def _oci_runtime_registered(cls, value: str | None) -> str | None:
        if value is not None:
            problem = oci_runtime_problem(value)
            if problem is not None:
                raise PydanticCustomError("oci_runtime_unavailable", problem)
        return value


def _docker_host() -> str:
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def connect() -> docker.DockerClient:
    """A client of the engine ``DOCKER_HOST`` names; raises :class:`DockerUnavailableError` in one line."""
    try:
        import docker
    except ImportError:
        raise DockerUnavailableError(
            "the docker runtime needs the 'docker' package: pip install 'agentrig[docker]'"
        ) from None
    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except Exception as exc:
        reason = " ".join(str(exc).split())[:200]
        raise DockerUnavailableError(
            f"Docker daemon unreachable at {_docker_host()} ({reason}); start it "
            "(`sudo systemctl start docker`, or `dockerd &`) or point DOCKER_HOST at a running engine"
        ) from None
    return client


_registered: set[tuple[str, str]] = set()


def oci_runtime_problem(name: str) -> str | None:
    """Why the Docker engine cannot run containers under the OCI runtime ``name``, in one line
    (:func:`agentrig.runtime.oci.missing_message`); ``None`` when it can, or when the engine cannot be
    asked (starting the container says what is wrong then)."""
    host = _docker_host()
    if (host, name) in _registered:
        return None
    try:
        client = connect()
        try:
            runtimes = sorted((client.info().get("Runtimes") or {}).keys())
        finally:
            client.close()
    except Exception:
        return None
    if name not in runtimes:
        return missing_message(name, runtimes)
    _registered.add((host, name))
    return None


def sweep_stale_containers(client: docker.DockerClient) -> list[str]:
    """Remove agentrig containers made on this host by processes that are gone; returns their names.

    Compose projects of such processes go first, whole (containers, networks, volumes:
    :func:`agentrig.runtime.compose.sweep_stale_projects`)."""
    from agentrig.runtime.compose import sweep_stale_projects

    host = socket.gethostname()

    def stale(labels: Mapping[str, str]) -> bool:
        return labels.get(LABEL_HOST) == host and not owner_alive(labels)

    swept = sweep_stale_projects(client, label=LABEL, stale=stale)
    removed: list[str] = [part.split(":", 1)[1] for part in swept if part.startswith("container:")]
    # ignore_removed: a container removed between the listing and its inspection (its run just
    # ended) is skipped; without it docker-py raised NotFound here, failing the next session
    for container in client.containers.list(all=True, filters={"label": LABEL}, ignore_removed=True):
        labels = container.labels or {}
        if labels.get(LABEL_HOST) != host or owner_alive(labels):
            continue
        try:
            container.remove(force=True)
            removed.append(str(container.name))
        except Exception as exc:  # another sweeper got it first, or it is being removed
            log.debug("sweeping %s failed: %s", container.name, exc)
    if removed:
        log.info("removed %d stale agentrig container(s): %s", len(removed), ", ".join(removed))
    return removed


def sweep_stale(client: docker.DockerClient | None = None) -> list[str]:
    """Remove what agentrig processes gone from this host left on the engine: their containers, compose
    projects (:func:`sweep_stale_containers`), then their private networks; returns what was removed.
    Housekeeping: an unreachable engine or a failed removal never raises."""
    from agentrig.runtime.networks import sweep_stale_networks

    try:
        engine = client or connect()
    except Exception as exc:
        log.debug("no sweep of stale containers: %s", exc)
        return []
    try:
        return [*sweep_stale_containers(engine), *sweep_stale_networks(engine)]
    except Exception as exc:
        log.debug("sweeping stale containers and networks failed: %s", exc)
        return []
    finally:
        if client is None:
            engine.close()


class DockerProcess(SupervisedProcess):
    """One exec in the session's container, read from its hijacked socket."""

    def __init__(
        self,
        runtime: DockerRuntime,
        argv: list[str],
        *,
        env: Mapping[str, str],
        cwd: str,
        stdin: bytes | None,
        timeout: float | None,
        idle_timeout: float | None,
    ) -> None:
        """Create and start the exec; output is read on the monitor thread."""
        super().__init__(timeout=timeout, idle_timeout=idle_timeout, max_output=runtime.config.max_output)
        self._runtime = runtime
        self._api = runtime.client.api
        self.marker = uuid.uuid4().hex
        environment = dict(env)
        environment[EXEC_MARKER] = self.marker
        environment[RUNTIME_MARKER] = runtime.session_id
        created = self._api.exec_create(
            runtime.container_id,
            argv,
            stdout=True,
            stderr=True,
            stdin=stdin is not None,
            user=runtime.user,
            environment=environment,
            workdir=cwd,
        )
        self.exec_id: str = created["Id"]
        raw: Any = self._api.exec_start(self.exec_id, socket=True)  # a socket wrapper: its ``_sock`` is the socket
        self._raw = raw  # keeps the HTTP response (and so the connection) alive
        self._sock: socket.socket = getattr(raw, "_sock", raw)
        self._buffer = b""
        self._eof = False
        self._host_pid: int | None = None
        self._last_check = time.monotonic()
        self._start_failure: bytes | None = None
        if stdin is not None:
            threading.Thread(target=self._feed, args=(stdin,), name="agentrig-docker-stdin", daemon=True).start()
        self._begin(f"agentrig-docker-{self.exec_id[:12]}")

    def _feed(self, data: bytes) -> None:
        try:
            self._sock.sendall(data)
            self._sock.shutdown(socket.SHUT_WR)  # end of input for the process
        except OSError:
            pass

    def _frames(self) -> Chunks:
        chunks: Chunks = []
        while len(self._buffer) >= _HEADER.size:
            stream, size = _HEADER.unpack_from(self._buffer)
            if len(self._buffer) < _HEADER.size + size:
                break
            payload = self._buffer[_HEADER.size : _HEADER.size + size]
            self._buffer = self._buffer[_HEADER.size + size :]
            name = _STREAMS.get(stream)
            if self._start_failure is None and payload.startswith(b"OCI runtime exec failed"):
                # the engine reports a command it could not start on stdout: it is an error
                self._start_failure = payload
                name = "stderr"
            if name is not None and payload:
                chunks.append((name, payload))
        return chunks

    def _read(self, timeout: float | None) -> Chunks | None:
        if self._eof:
            return None
        pending = getattr(self._sock, "pending", lambda: 0)()  # TLS may hold decrypted bytes
        if not pending:
            ready, _, _ = select.select([self._sock], [], [], timeout)
            if not ready:
                return []
        try:
            data = self._sock.recv(1 << 16)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EINTR):
                return []
            data = b""
        if not data:
            self._eof = True
            chunks = self._frames()
            return chunks or None
        self._buffer += data
        return self._frames()

    def host_pid(self) -> int | None:
        """The exec's process id on the engine's host (``None`` if not started or unknown)."""
        if self._host_pid is None:
            try:
                pid = int(self._api.exec_inspect(self.exec_id).get("Pid") or 0)
            except Exception:
                return None
            self._host_pid = pid or None
        return self._host_pid

    def _started_pid(self, patience: float = 3.0) -> int | None:
        """:meth:`host_pid`, waiting up to ``patience`` seconds for an exec the engine has not spawned yet
        (``exec_start`` can return first: a kill then would find nothing and the command would run on)."""
        deadline = time.monotonic() + patience
        while True:
            pid = self.host_pid()
            if pid is not None or self._done.is_set() or time.monotonic() >= deadline:
                return pid
            try:
                if self._api.exec_inspect(self.exec_id).get("ExitCode") is not None:
                    return None  # it ran and ended: nothing to kill
            except Exception:
                return None
            time.sleep(0.02)

    def _kill_tree(self) -> None:
        # under another OCI runtime (gVisor) the exec's processes are not the host's: killed from inside
        pid = self._started_pid() if is_default(self._runtime.config.oci_runtime) else None
        if pid is not None and os.path.exists(f"/proc/{pid}"):
            try:
                kill_tree(pid)  # each exec leads its own process group on the host
                return
            except PermissionError:
                pass
        self._runtime.kill_marked(self.marker)  # a remote or foreign engine: kill from inside

    def _interrupt_tree(self) -> bool:
        pid = self.host_pid() if is_default(self._runtime.config.oci_runtime) else None
        if pid is None or not os.path.exists(f"/proc/{pid}"):
            return False  # a remote engine: the caller kills instead
        try:
            return interrupt_tree(pid)  # the exec's processes, seen from the engine's host
        except PermissionError:
            return False

    def _main_exited(self) -> bool:
        # asked at most four times a second, so short commands never pay for it
        now = time.monotonic()
        if now - self._last_check < 0.25:
            return False
        self._last_check = now
        try:
            return not self._api.exec_inspect(self.exec_id).get("Running")
        except Exception:
            return False

    def _exit_code(self) -> int | None:
        if self._start_failure is not None and b"not found" in self._start_failure:
            return 127  # what a shell reports for a missing command
        deadline = time.monotonic() + 10
        while True:
            info = self._api.exec_inspect(self.exec_id)
            if not info.get("Running"):
                code = info.get("ExitCode")
                return None if code is None else int(code)
            if time.monotonic() > deadline:
                return None
            time.sleep(0.005)

    def _close(self) -> None:
        for closer in (self._sock, self._raw):
            try:
                closer.close()
            except Exception:
                pass



class DockerRuntime(Runtime):
    """One container per session, the workspace bind-mounted at ``/workspace``."""

    name = "docker"
    options_model = DockerRuntimeConfig
    #: The network the container is on now (``none``, ``host``, ``bridge``, ``agentrig-net-...`` or a name).
    network: str

    def __init__(
        self,
        workspace: Path,
        *,
        home: Path | None = None,
        env: Mapping[str, str] | None = None,
        config: DockerRuntimeConfig | Mapping[str, Any] | None = None,
        client: docker.DockerClient | None = None,
    ) -> None:
        """Start the session's container; raises a :class:`RuntimeSetupError` naming what to fix."""
        from agentrig.workspace import WorkspaceError

        if isinstance(config, Mapping) and not config.get("image"):
            raise RuntimeSetupError("the docker runtime needs an image: pass --image IMAGE (or -c runtime.image=IMAGE)")
        self.config = parse_options(DockerRuntimeConfig, config, self.name)
        workspace = Path(workspace)
        if not workspace.is_absolute() or not workspace.is_dir():
            raise WorkspaceError(f"workspace '{workspace}' is not an existing absolute directory: it cannot be mounted")
        if home is not None and not Path(home).is_dir():
            raise WorkspaceError(f"home directory '{home}' is not an existing directory: it cannot be mounted")
        self.workspace = workspace.resolve()
        self.home_dir = Path(home).resolve() if home is not None else None
        self.user = self.config.user or f"{os.getuid()}:{os.getgid()}"
        base: dict[str, str] = {"HOME": CONTAINER_HOME if self.home_dir is not None else "/tmp"}
        self._env = merge_env(base, env)
        self.client = client or connect()
        self._processes = ProcessSet()
        self._closed = False
        self._lock = threading.Lock()
        self._compose: ComposeProject | None = None
        self.session_id = uuid.uuid4().hex[:12]
        if self.config.sweep_stale:
            sweep_stale(self.client)
        if self.config.compose is not None:
            from agentrig.runtime.networks import SessionNetworks

            # the project's own network (internal when the task forbids internet) for both phases: nothing to switch
            self._networks = SessionNetworks(self.client, self.session_id, self._owner_labels())
            self.container = self._start_compose_project()
            self.network = self._agent_network = self._verifier_network = self._compose_network()
        else:
            self._open_networks()
            try:
                self.container = self._start_container()
            except BaseException:
                self._networks.remove()
                raise
        self.container_id: str = self.container.id

    def _check_image(self) -> None:
        import docker.errors

        try:
            self.client.images.get(self.config.image)
        except docker.errors.ImageNotFound:
            raise ImageNotFoundError(
                f"image '{self.config.image}' is not present locally and agentrig never pulls: build it "
                f"(`docker build -t {self.config.image} .`) or load it (`docker load -i FILE`), then retry"
            ) from None

    def _start_container(self) -> Any:
        import docker.errors

        self._check_image()
        volumes = {str(self.workspace): {"bind": self.config.workdir, "mode": "rw"}}
        if self.home_dir is not None:
            volumes[str(self.home_dir)] = {"bind": CONTAINER_HOME, "mode": "rw"}
        for mount in self.config.mounts:
            volumes[mount.source] = {"bind": mount.target, "mode": "ro" if mount.read_only else "rw"}
        labels = self._owner_labels()
        limits: dict[str, Any] = {}
        if self.config.mem_limit:
            limits["mem_limit"] = self.config.mem_limit
            limits["memswap_limit"] = self.config.mem_limit  # no swap: over the limit means killed
        if self.config.cpus:
            limits["nano_cpus"] = int(self.config.cpus * 1e9)
        if self.config.pids_limit:
            limits["pids_limit"] = self.config.pids_limit
        try:
            return self.client.containers.run(
                self.config.image,
                ["sleep", "infinity"],
                detach=True,
                init=self.config.init,
                name=f"agentrig-{self.session_id}",
                labels=labels,
                network_mode=self.network,
                volumes=volumes,
                working_dir=self.config.workdir,
                user=self.user,
                environment={"HOME": self._env["HOME"]},
                runtime=self.config.oci_runtime,  # None: the engine's default
                **limits,
            )
        except docker.errors.APIError as exc:
            message = " ".join(str(exc.explanation or exc).split())
            if "mount" in message or "bind" in message:
                raise RuntimeSetupError(
                    f"cannot mount workspace '{self.workspace}' into the container: {message}"
                ) from None
            raise RuntimeSetupError(f"cannot start a container from '{self.config.image}': {message}") from None

    def _compose_main(self) -> dict[str, Any]:
        """The ``main`` service of a compose project: the container :meth:`_start_container` would start
        (the network excepted: ``main`` joins the project's network, where the services are)."""
        volumes: list[dict[str, Any]] = [{"type": "bind", "source": str(self.workspace), "target": self.config.workdir}]
        if self.home_dir is not None:
            volumes.append({"type": "bind", "source": str(self.home_dir), "target": CONTAINER_HOME})
        volumes += [
            {"type": "bind", "source": m.source, "target": m.target, "read_only": m.read_only} for m in self.config.mounts
        ]
        main: dict[str, Any] = {
            "image": self.config.image,
            "command": ["sleep", "infinity"],
            "init": self.config.init,
            "working_dir": self.config.workdir,
            "user": self.user,
            "environment": {"HOME": self._env["HOME"]},
            "volumes": volumes,
        }
        if self.config.oci_runtime:
            main["runtime"] = self.config.oci_runtime
        if self.config.mem_limit:
            main["mem_limit"] = main["memswap_limit"] = self.config.mem_limit
        if self.config.cpus:
            main["cpus"] = self.config.cpus
        if self.config.pids_limit:
            main["pids_limit"] = self.config.pids_limit
        return main

    def _start_compose_project(self) -> Any:
        """Start the ``compose`` project (:mod:`agentrig.runtime.compose`) and adopt its main container."""
        from agentrig.runtime.compose import ComposeProject
        from agentrig.scratch import OWNER_ENV, RUN_ENV, owner_tag

        assert self.config.compose is not None
        self._check_image()
        owner_env = {OWNER_ENV: owner_tag()}
        if RUN_ENV in self._env:
            owner_env[RUN_ENV] = self._env[RUN_ENV]
        self._compose = ComposeProject(self.config.compose, self.session_id, self.client, owner_env=owner_env)
        container_id = self._compose.up(self._compose_main(), self._owner_labels())
        try:
            return self.client.containers.get(container_id)
        except BaseException:
            self._compose.down()
            raise

    def _compose_network(self) -> str:
        """The default network of the compose project :meth:`_start_compose_project` started."""
        assert self._compose is not None
        return f"{self._compose.name}_default"

    def _owner_labels(self) -> dict[str, str]:
        """The labels that say who made a container or network (swept once that process is gone)."""
        pid = os.getpid()
        return {
            LABEL: "1",
            LABEL_HOST: socket.gethostname(),
            LABEL_PID: str(pid),
            LABEL_START: process_start_time(pid),
            LABEL_SESSION: self.session_id,
        }

    # -- networks ------------------------------------------------------------------

    def _open_networks(self) -> None:
        """Make ``network`` and ``verifier_network`` concrete (a private bridge network when needed)."""
        from agentrig.runtime.networks import SessionNetworks

        self._networks = SessionNetworks(self.client, self.session_id, self._owner_labels())
        try:
            self.network = self._networks.resolve(self.config.network)
            self._agent_network = self.network
            self._verifier_network = self._networks.resolve(self.config.verifier_network or self.config.network)
        except BaseException:
            self._networks.remove()
            raise

    @property
    def verifier_network(self) -> str:
        """The network a verifier runs with (:meth:`verifier_phase`), as concrete as :attr:`network`."""
        return self._verifier_network

    @property
    def bridge_network(self) -> str | None:
        """The Docker network that ``bridge`` stands for in this session (the engine's default bridge or
        the session's private network), when a phase uses it."""
        return self._networks.bridge

    @property
    def network_notice(self) -> str | None:
        """One line when the container has less network than asked (no bridge could be had); else ``None``."""
        return self._networks.notice

    @contextlib.contextmanager
    def verifier_phase(self) -> Iterator[None]:
        """The container on ``verifier_network`` while the context lasts, back on ``network`` after it."""
        self._networks.switch(self.container, self.network, self._verifier_network)
        self.network = self._verifier_network
        try:
            yield
        finally:
            if not self._closed:
                try:
                    self._networks.switch(self.container, self.network, self._agent_network)
                    self.network = self._agent_network
                except Exception as exc:
                    log.warning("moving container %s back to network %s failed: %s", self.container.name, self._agent_network, exc)

    @property
    def workdir(self) -> str:
        """The workspace as commands see it: ``/workspace``, or the ``workdir`` option."""
        return self.config.workdir

    @property
    def home(self) -> str | None:
        """``HOME`` as commands see it."""
        return self._env["HOME"]

    @property
    def environment(self) -> dict[str, str]:
        """The environment every command gets on top of the image's (before a call's own ``env``)."""
        return dict(self._env)

    def launch(self, invocation: Invocation) -> RuntimeProcess:
        """Start ``invocation`` by exec in the container (str: through ``sh -c``; list: no shell)."""
        if self._closed:
            raise RuntimeError("runtime has been cleaned up")
        argv = to_argv(invocation.command)
        full_env = merge_env(self._env, invocation.env)
        workdir = self.config.workdir
        directory = workdir if invocation.cwd is None else str(Path(workdir) / invocation.cwd)
        stdin = invocation.stdin
        data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
        process = DockerProcess(
            self, argv, env=full_env, cwd=directory, stdin=data, timeout=invocation.timeout, idle_timeout=invocation.idle_timeout
        )
        self._processes.add(process)
        return process

    def kill_marked(self, marker: str, name: str = EXEC_MARKER) -> None:
        """Kill, from inside the container, every process whose environment has ``name=marker``."""
        script = (
            "for p in /proc/[0-9]*; do "
            f"if tr '\\0' '\\n' < $p/environ 2>/dev/null | grep -qx {shlex.quote(f'{name}={marker}')}; "
            "then kill -9 ${p#/proc/} 2>/dev/null; fi; done"
        )
        try:
            self.container.exec_run(["sh", "-c", script], user="0:0")
        except Exception as exc:
            log.warning("killing exec %s inside the container failed: %s", marker, exc)

    def kill(self) -> None:
        """Kill every running command and what commands left running in the background
        (the container stays)."""
        self._processes.kill_all()
        self.kill_marked(self.session_id, name=RUNTIME_MARKER)

    def cleanup(self) -> None:
        """Kill every command and remove the container; idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            self._processes.kill_all()
        finally:
            if self._compose is not None:
                self._compose.down()  # the adopted container with its project: every service, network, volume
            else:
                self._remove_container()
            self._networks.remove()  # after the container: a network in use cannot go

    def _remove_container(self) -> None:
        try:
            self.container.remove(force=True)
        except Exception as exc:
            if "No such container" not in str(exc) and "is already in progress" not in str(exc):
                log.warning("removing container %s failed: %s", self.container.name, exc)
