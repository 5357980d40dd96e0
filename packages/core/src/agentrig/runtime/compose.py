"""Docker Compose v2 projects: the ``main`` container of a multi-container task and its services.

A problem format that needs several containers (a Harbor task whose
``environment/docker-compose.yaml`` adds a database or an API server beside
the agent's container) gives the ``docker`` runtime a :class:`ComposeOptions`
(its ``compose`` option). The runtime then does not create its container
itself: :class:`ComposeProject` writes a base file defining the ``main``
service exactly as the runtime would have started its container (the image,
``sleep infinity`` under an init, the workspace bind-mounted at the working
directory, the home directory, the host user, the limits), merges the task's
compose file and the format's overrides on top (``-f base -f task -f ...``, the
order Harbor uses, so the task's ``depends_on`` / ``environment`` of ``main``
apply), adds the owner labels to every service, network and volume in a last
file, and runs ``docker compose up --detach --wait`` (every service running,
and healthy where it has a healthcheck, before the agent starts). The runtime
adopts the ``main`` container and runs every command in it by exec.

``docker compose down --volumes --remove-orphans`` removes the whole project
on cleanup (normal end, error, timeout, SIGINT/SIGTERM through the session
teardown). A project whose owner died without cleaning up (``kill -9``) is
removed by :func:`sweep_stale_projects` at the next start of a docker runtime
on this host: its containers, networks and volumes carry the owner labels of
:mod:`agentrig.runtime.docker`, and the project name starts with ``agentrig-``.

Compose is found as the ``docker compose`` plugin or a standalone
``docker-compose`` of version 2.17 or later (``up --wait-timeout``); Debian
bookworm's ``docker-compose`` package is v1 and is refused in one line. The
compose process gets a minimal environment (no host secrets reach the task's
``${VAR}`` interpolation), the owner tag of :mod:`agentrig.scratch` (an
orphaned ``compose up`` is killed by the next start's sweep), and the classic
builder (``DOCKER_BUILDKIT=0``): images are built before, by the format, and
``up`` runs with ``--no-build --pull never``.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agentrig.boundary import Seconds
from agentrig.runtime.errors import RuntimeSetupError

if TYPE_CHECKING:
    import docker

log = logging.getLogger(__name__)

#: The label compose puts on every container, network and volume of a project.
PROJECT_LABEL = "com.docker.compose.project"
#: What every project name agentrig makes starts with (the sweep looks at nothing else).
PROJECT_PREFIX = "agentrig-"
#: The oldest compose accepted: ``up --wait-timeout`` appeared in 2.17.
MINIMUM_VERSION = (2, 17)
#: Seconds a service gets to stop on ``down`` before it is killed (everything is discarded anyway).
STOP_TIMEOUT = 1
_VERSION = re.compile(r"v?(\d+)\.(\d+)")
_PROJECT_CHARS = re.compile(r"[^a-z0-9_-]+")
_PASSED_ENV = ("PATH", "DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH", "DOCKER_API_VERSION")
_command: list[str] | None = None
_command_lock = threading.Lock()


class ComposeOptions(BaseModel):
    """The ``compose`` option of the ``docker`` runtime: the project its ``main`` container belongs to."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, description="Readable part of the project name (the task's name).")
    directory: str = Field(description="The project directory (relative paths of the task's file resolve there).")
    files: list[str] = Field(default_factory=list, description="Compose files merged over the base of `main`, in order.")
    overrides: list[dict[str, Any]] = Field(
        default_factory=list, description="Compose documents merged after `files` (written by the runtime)."
    )
    services: list[str] = Field(default_factory=list, description="Every service of the project (each gets the owner labels).")
    networks: list[str] = Field(default_factory=list, description="Networks the task's file declares (each gets the owner labels).")
    volumes: list[str] = Field(default_factory=list, description="Named volumes the task's file declares (each gets the owner labels).")
    env: dict[str, str] = Field(default_factory=dict, description="Variables the files' ${VAR} interpolation sees.")
    service: str = Field(default="main", description="The service whose container the runtime adopts.")
    wait_timeout: Seconds = Field(default=600.0, description="Seconds `up --wait` may take.")


def compose_command() -> list[str]:
    """The argv prefix running Docker Compose v2 (``docker compose`` or ``docker-compose``); cached.

    Raises :class:`RuntimeSetupError` in one line when neither is a compose of at least
    :data:`MINIMUM_VERSION`.
    """
    global _command
    with _command_lock:
        if _command is not None:
            return list(_command)
        found: list[str] = []
        for candidate in (["docker", "compose"], ["docker-compose"]):
            if shutil.which(candidate[0]) is None:
                continue
            try:
                done = subprocess.run(
                    [*candidate, "version", "--short"], capture_output=True, text=True, timeout=30, env=_base_env()
                )
            except (OSError, subprocess.TimeoutExpired):
                continue
            match = _VERSION.match(done.stdout.strip()) if done.returncode == 0 else None
            if match is None:
                continue
            version = (int(match.group(1)), int(match.group(2)))
            if version >= MINIMUM_VERSION:
                _command = candidate
                return list(candidate)
            found.append(f"{' '.join(candidate)} {done.stdout.strip()}")
        have = f" (found {', '.join(found)})" if found else ""
        raise RuntimeSetupError(
            f"multi-container tasks need Docker Compose v{MINIMUM_VERSION[0]}.{MINIMUM_VERSION[1]} or later{have}: "
            "install the compose plugin (Debian trixie's docker-compose package; see .ci/run)"
        )


def project_name(name: str, session_id: str) -> str:
    """``agentrig-<name>-<session_id>``, a valid compose project name (lowercase letters, digits, ``-``, ``_``)."""
    readable = _PROJECT_CHARS.sub("-", name.lower()).strip("-_")[:40].rstrip("-_") or "task"
    return f"{PROJECT_PREFIX}{readable}-{_PROJECT_CHARS.sub('-', session_id.lower())}"


def _base_env(*, buildkit: bool = False) -> dict[str, str]:
    """What the compose process inherits: the engine's address, the CLI's configuration, and the builder:
    the engine's classic one for a project's ``up`` (which builds nothing: images are built before), its
    BuildKit for the builds of :mod:`agentrig.runtime.buildkit` (compose's own client; no buildx needed)."""
    env = {key: os.environ[key] for key in _PASSED_ENV if key in os.environ}
    env.setdefault("PATH", os.defpath)
    env["DOCKER_CONFIG"] = os.environ.get("DOCKER_CONFIG") or str(Path.home() / ".docker")
    env["DOCKER_BUILDKIT"] = "1" if buildkit else "0"
    if not buildkit:
        env["COMPOSE_DOCKER_CLI_BUILD"] = "0"
    return env


def build_env() -> dict[str, str]:
    """The environment of a ``docker compose build`` with the engine's BuildKit."""
    return _base_env(buildkit=True)


def _last_line(output: str) -> str:
    """The most telling line of compose's output: the last one that says something."""
    lines = [" ".join(line.split()) for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower() or "failed" in line.lower() or "unhealthy" in line.lower()]
    chosen = (errors or lines or ["no output"])[-1]
    return chosen[:400]


class ComposeProject:
    """One compose project: written, started (:meth:`up`) and removed (:meth:`down`) for one runtime."""

    def __init__(
        self, options: ComposeOptions, session_id: str, client: docker.DockerClient, *, owner_env: Mapping[str, str]
    ) -> None:
        """Name the project; nothing runs until :meth:`up`. ``owner_env`` marks the compose processes
        (:data:`agentrig.scratch.OWNER_ENV`, the run's id) so an orphaned one is found and killed."""
        self.options = options
        self.client = client
        self.name = project_name(options.name, session_id)
        self._owner_env = dict(owner_env)
        self._dir: Path | None = None
        self._files: list[str] = []
        self._started = False

    # -- the generated files -------------------------------------------------------------

    def _write(self, base: dict[str, Any], labels: Mapping[str, str]) -> None:
        from agentrig.scratch import temp_dir

        self._dir = temp_dir("agentrig-compose-")
        owned = {"labels": dict(labels)}
        label_file = {
            "services": {service: dict(owned) for service in dict.fromkeys([self.options.service, *self.options.services])},
            "networks": {network: dict(owned) for network in dict.fromkeys(["default", *self.options.networks])},
        }
        if self.options.volumes:
            label_file["volumes"] = {volume: dict(owned) for volume in dict.fromkeys(self.options.volumes)}
        (self._dir / "base.json").write_text(json.dumps({"services": {self.options.service: base}}, indent=2))
        overrides = []
        for index, document in enumerate(self.options.overrides):
            overrides.append(self._dir / f"override-{index}.json")
            overrides[-1].write_text(json.dumps(document, indent=2))
        (self._dir / "owner.json").write_text(json.dumps(label_file, indent=2))
        self._files = [str(self._dir / "base.json"), *self.options.files, *map(str, overrides), str(self._dir / "owner.json")]

    def _argv(self, *args: str) -> list[str]:
        argv = [*compose_command(), "--project-name", self.name, "--project-directory", self.options.directory]
        for file in self._files:
            argv += ["-f", file]
        return [*argv, *args]

    def _env(self) -> dict[str, str]:
        # the task's variables never redirect compose (another engine, other files to read)
        env = {k: v for k, v in self.options.env.items() if not k.upper().startswith(("DOCKER_", "COMPOSE_"))}
        env.update(_base_env())
        env.update(self._owner_env)
        return env

    # -- up and down ---------------------------------------------------------------------

    def up(self, base: dict[str, Any], labels: Mapping[str, str]) -> str:
        """Write the files, start every service and wait until they run (and are healthy where they have a
        healthcheck); returns the id of the adopted service's container. On any failure, or an interrupt
        while starting, whatever was started is removed before the error (one line) propagates."""
        self._write(base, labels)
        timeout = int(max(1.0, self.options.wait_timeout))
        argv = self._argv("up", "--detach", "--wait", "--wait-timeout", str(timeout), "--no-build", "--pull", "never")
        try:
            self._started = True
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                cwd=self.options.directory,
                env=self._env(),
                start_new_session=True,  # a Ctrl-C reaches agentrig, which stops it and removes the project
            )
            try:
                output, _ = process.communicate(timeout=timeout + 120)
            except BaseException:
                _stop(process)
                raise
            if process.returncode != 0:
                raise RuntimeSetupError(
                    f"starting the services of '{self.options.name}' (docker compose up, project {self.name}) "
                    f"failed: {_last_line(output)}"
                )
            return self._container_id()
        except subprocess.TimeoutExpired:
            self.down()
            raise RuntimeSetupError(
                f"starting the services of '{self.options.name}' (project {self.name}) took longer than {timeout + 120} s"
            ) from None
        except BaseException:
            self.down()
            raise

    def _container_id(self) -> str:
        filters: dict[str, str | list[str] | bool] = {
            "label": [f"{PROJECT_LABEL}={self.name}", f"com.docker.compose.service={self.options.service}"]
        }
        found = self.client.containers.list(all=True, filters=filters)
        if not found:
            raise RuntimeSetupError(
                f"'{self.options.name}': docker compose started no '{self.options.service}' container (project {self.name})"
            )
        return str(found[0].id)

    def down(self) -> None:
        """Remove every container, network and volume of the project, and the generated files; idempotent."""
        if self._started:
            self._started = False
            try:
                done = subprocess.run(
                    self._argv("down", "--volumes", "--remove-orphans", "--timeout", str(STOP_TIMEOUT)),
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    text=True,
                    errors="replace",
                    cwd=self.options.directory,
                    env=self._env(),
                    timeout=120,
                    start_new_session=True,  # a second Ctrl-C does not cut the removal short
                )
                if done.returncode != 0:
                    log.warning("docker compose down of project %s failed: %s", self.name, _last_line(done.stdout + done.stderr))
            except (OSError, subprocess.TimeoutExpired, RuntimeSetupError) as exc:
                log.warning("docker compose down of project %s failed: %s", self.name, exc)
            remove_project(self.client, self.name)  # what compose could not remove (or never knew of)
        if self._dir is not None:
            from agentrig.scratch import remove_temp_dir

            remove_temp_dir(self._dir)
            self._dir = None


def _stop(process: subprocess.Popen[str]) -> None:
    """End a compose process (its own session) and wait for it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        pass


def remove_project(client: docker.DockerClient, name: str, *, wait: float = 15.0) -> list[str]:
    """Remove, through the engine's API, every container, network and volume labelled with project ``name``
    (an agentrig project only); returns what was removed (``container:NAME``, ``network:NAME``, ``volume:NAME``).

    Containers go first; networks and volumes are removed once no container of the project is left (one
    being removed by another party, a concurrent sweep, still holds them), within ``wait`` seconds."""
    if not name.startswith(PROJECT_PREFIX):
        return []
    selector: dict[str, str | list[str] | bool] = {"label": f"{PROJECT_LABEL}={name}"}

    def containers() -> list[Any]:
        return list(client.containers.list(all=True, filters=selector, ignore_removed=True))

    removed: list[str] = []
    deadline = time.monotonic() + wait
    try:
        left = containers()
        for container in left:
            try:
                container.remove(force=True, v=True)
                removed.append(f"container:{container.name}")
            except Exception as exc:  # already gone, or being removed by another party
                log.debug("removing container %s failed: %s", container.name, exc)
        while left and time.monotonic() < deadline:
            left = containers()
            if left:
                time.sleep(0.2)
    except Exception as exc:
        log.debug("listing the containers of project %s failed: %s", name, exc)
    groups: list[tuple[str, Callable[[], list[Any]], Callable[[Any], None]]] = [
        ("network", lambda: client.networks.list(filters=selector), lambda n: n.remove()),
        ("volume", lambda: client.volumes.list(filters=selector), lambda v: v.remove(force=True)),
    ]
    for kind, listing, remove in groups:
        while True:
            try:
                parts = listing()
            except Exception as exc:
                log.debug("listing the %ss of project %s failed: %s", kind, name, exc)
                break
            failed = False
            for part in parts:
                try:
                    remove(part)
                    removed.append(f"{kind}:{part.name}")
                except Exception as exc:
                    failed = failed or "not found" not in str(exc).lower()
                    log.debug("removing %s %s failed: %s", kind, part.name, exc)
            if not failed or time.monotonic() >= deadline:
                break
            time.sleep(0.2)  # still in use by a container on its way out
    return removed


def sweep_stale_projects(
    client: docker.DockerClient, *, label: str, stale: Callable[[Mapping[str, str]], bool]
) -> list[str]:
    """Remove the agentrig compose projects (every container, network and volume) whose parts
    carrying ``label`` are ``stale`` by their labels (their owner died: ``kill -9``); a project
    with any part that is not stale is left alone. Returns what was removed."""
    verdicts: dict[str, bool] = {}
    selector: dict[str, str | list[str] | bool] = {"label": [label, PROJECT_LABEL]}
    parts: list[Any] = []
    try:
        parts += client.containers.list(all=True, filters=selector, ignore_removed=True)
        parts += client.networks.list(filters=selector)
        parts += client.volumes.list(filters=selector)
    except Exception as exc:
        log.debug("listing compose projects failed: %s", exc)
        return []
    for part in parts:
        labels = getattr(part, "labels", None) or (part.attrs or {}).get("Labels") or {}
        project = labels.get(PROJECT_LABEL, "")
        if project.startswith(PROJECT_PREFIX):
            verdicts[project] = verdicts.get(project, True) and stale(labels)
    removed: list[str] = []
    for project in sorted(name for name, is_stale in verdicts.items() if is_stale):
        removed += remove_project(client, project)
    if removed:
        log.info("removed %d part(s) of stale agentrig compose project(s): %s", len(removed), ", ".join(removed))
    return removed
