"""Multi-container Harbor tasks: ``environment/docker-compose.yaml`` checked, its images built.

Harbor runs every task with Docker Compose v2: its base file defines the
``main`` service (the image built from ``environment/Dockerfile``, ``sleep
infinity``, the limits) and a task's own ``environment/docker-compose.yaml``
is merged on top (``-f base -f task``) to add services (a database, an API
server) and to give ``main`` more (``depends_on: {svc: {condition:
service_healthy}}``); ``docker compose up --detach --wait`` starts them, and the
agent and the verifier run in ``main`` (harbor 0.25 ``environments/docker/docker.py``,
``docker-compose-build.yaml``; the cookbook's ``multi-container`` and
``mcp-tools`` recipes). agentrig does the same through the ``docker`` runtime's
``compose`` option (:mod:`agentrig.runtime.compose`).

The task's compose file is untrusted input. :func:`check_compose_file` reads it
when the task is loaded and refuses, in one line naming the file and the
field, what would reach outside the task's containers: bind mounts of host
paths (absolute, ``~``, variables, or leading outside ``environment/``) and
writable ones, ``privileged``, host namespaces (``pid``/``ipc``/``uts``/
``userns_mode``/``cgroup: host``, ``network_mode: host`` unless the task
allows internet, joining a foreign container), devices and GPUs, capabilities
beyond Docker's defaults, ``security_opt`` other than ``no-new-privileges``,
published ports, external or named networks and volumes, volume drivers and
their options, build contexts or files outside ``environment/``, ``include``,
``extends`` from another file, and any service field agentrig does not know
(a field added to Compose later is refused until it is reviewed). Harbor's own
``harbor lint`` (``lint/compose.py``) flags the same bind mounts, privileged
services and capabilities.

When the task runs, :func:`compose_runtime_option` builds every service's
image from its ``build`` (the way agentrig builds task images: cached by
content, never pulled, the classic builder), checks that every other
service's ``image`` is present locally (nothing is pulled), makes the
project's networks ``internal`` when the task forbids internet, and returns
the runtime's ``compose`` option.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agentrig.boundary import BoundaryError, resolve_inside, shorten
from agentrig.problem import ProblemError

if TYPE_CHECKING:
    import docker

    from agentrig.formats.harbor.config import HarborTaskConfig

#: The task's compose file, as Harbor names it (``definition.COMPOSE_FILE_NAME``); ``.yml`` is not looked at.
COMPOSE_FILE = "docker-compose.yaml"
#: The agent's service (Harbor's ``MAIN_SERVICE_NAME``).
MAIN_SERVICE = "main"

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_CONTEXT_VAR = re.compile(r"\$\{CONTEXT_DIR\}|\$CONTEXT_DIR\b")
#: Docker's default capabilities (adding one changes nothing) and two that reach no further than the container.
SAFE_CAPABILITIES = frozenset(
    {
        "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE",
        "NET_RAW", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT", "IPC_LOCK", "SYS_NICE",
    }
)
#: Service fields that reach nothing outside the project.
_PLAIN_FIELDS = frozenset(
    {
        "annotations", "attach", "command", "configs", "container_name", "cpu_count", "cpu_percent", "cpu_period",
        "cpu_quota", "cpu_shares", "cpus", "cpuset", "depends_on", "dns", "dns_opt", "dns_search", "domainname",
        "entrypoint", "environment", "expose", "extra_hosts", "group_add", "healthcheck", "hostname", "image",
        "init", "labels", "links", "mac_address", "mem_limit", "mem_reservation", "mem_swappiness",
        "memswap_limit", "networks", "oom_score_adj", "pids_limit", "platform", "profiles", "pull_policy",
        "read_only", "restart", "scale", "secrets", "shm_size", "stdin_open", "stop_grace_period", "stop_signal",
        "sysctls", "tmpfs", "tty", "ulimits", "user", "working_dir",
    }
)
_CHECKED_FIELDS = frozenset(
    {
        "build", "cap_add", "cap_drop", "cgroup", "deploy", "devices", "env_file", "extends", "gpus", "ipc",
        "logging", "network_mode", "pid", "ports", "privileged", "security_opt", "userns_mode", "uts", "volumes",
        "volumes_from",
    }
)
_TOP_FIELDS = frozenset({"services", "networks", "volumes", "configs", "secrets", "version", "name"})
#: Options of a short-syntax volume that change neither who may write it nor the host: Compose's ``nocopy``,
#: private propagation and the consistency hints. ``ro``/``rw`` are read in order, the last one winning, as
#: Compose does (``./:/app:ro,rw`` and ``./:/app:ro:rw`` are writable); SELinux relabelling (``z``, ``Z``) and
#: propagation to or from the host (``shared``, ``slave``, ...) are refused.
_VOLUME_MODES = frozenset({"nocopy", "private", "rprivate", "cached", "delegated", "consistent"})
_PROPAGATION_TO_HOST = frozenset({"shared", "rshared", "slave", "rslave"})
#: How a long-syntax ``read_only`` says true (Compose reads these strings as true; anything else counts as writable).
_TRUE = frozenset({"true", "yes", "on", "y"})


class ComposeService(BaseModel):
    """What agentrig must do for one service before ``up``: build its image, or find it."""

    model_config = ConfigDict(extra="forbid")

    name: str
    context: str | None = Field(default=None, description="Build context, relative to environment/.")
    dockerfile: str | None = Field(default=None, description="The Dockerfile, relative to environment/.")
    image: str | None = None


class ComposeSpec(BaseModel):
    """A checked ``environment/docker-compose.yaml``: its services, networks and named volumes."""

    model_config = ConfigDict(extra="forbid")

    file: Path
    services: list[ComposeService]
    networks: list[str] = Field(default_factory=list)
    volumes: list[str] = Field(default_factory=list)


class _Checker:
    """The checks of one compose file; every refusal is a :class:`ProblemError` naming file and field."""

    def __init__(self, file: Path, environment: Path, internet: bool) -> None:
        self.file = file
        self.environment = environment
        self.internet = internet

    def fail(self, field: str, message: str) -> ProblemError:
        return ProblemError(f"{self.file}: field `{field}`: {message}")

    def mapping(self, value: Any, field: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
            raise self.fail(field, "expected a mapping")
        return value

    def items(self, value: Any, field: str) -> list[Any]:
        """A list field (a mapping's keys for fields that accept both forms)."""
        if value is None:
            return []
        if isinstance(value, dict):
            return list(value)
        if isinstance(value, (str, int, float, bool)):
            return [value]
        if not isinstance(value, list):
            raise self.fail(field, "expected a list")
        return value

    def path(self, value: Any, field: str, base: Path | None = None) -> Path:
        """A host path of the file (build context, env_file, bind source): inside environment/, no variables."""
        base = base or self.environment
        if not isinstance(value, str) or not value.strip():
            raise self.fail(field, f"'{shorten(value)}' is not a path")
        text = _CONTEXT_VAR.sub(".", value) if base == self.environment else value
        if "$" in text:
            raise self.fail(field, f"'{shorten(value)}' takes its path from a variable; write a path inside {self.environment}")
        if text.startswith("~"):
            raise self.fail(field, f"'{shorten(value)}' is a path in the host's home; write a path inside {self.environment}")
        if "://" in text or text.startswith("git@"):
            raise self.fail(field, f"'{shorten(value)}' is a remote location; agentrig builds only from {self.environment}")
        try:
            return resolve_inside(base, text, f"{self.file}: field `{field}`", allow_root=True)
        except BoundaryError as exc:
            raise ProblemError(str(exc)) from None

    # -- the file ------------------------------------------------------------------------

    def check(self, document: Any) -> ComposeSpec:
        top = self.mapping(document, "the file")
        for key in top:
            if key.startswith("x-"):
                continue
            if key == "include":
                raise self.fail("include", "including other compose files is not supported: put the services in this file")
            if key not in _TOP_FIELDS:
                raise self.fail(key, "not supported by agentrig")
        services = self.mapping(top.get("services"), "services")
        if not services:
            raise self.fail("services", "missing: the file must define services (main and those beside it)")
        checked = [self.service(name, spec) for name, spec in services.items()]
        networks = self.networks(top.get("networks"))
        volumes = self.volumes(top.get("volumes"))
        for kind in ("configs", "secrets"):
            self.file_sources(kind, top.get(kind))
        return ComposeSpec(file=self.file, services=checked, networks=networks, volumes=volumes)

    def networks(self, value: Any) -> list[str]:
        names: list[str] = []
        for name, spec in self.mapping(value, "networks").items():
            field = f"networks.{name}"
            if not _NAME.match(name):
                raise self.fail(field, "not a valid network name")
            spec = self.mapping(spec, field)
            for key in spec:
                if key in ("external", "name"):
                    raise self.fail(f"{field}.{key}", "a network outside the task's project is not supported: remove it")
                if key == "driver" and spec[key] not in (None, "bridge"):
                    raise self.fail(f"{field}.driver", f"driver '{shorten(spec[key])}' is not supported (only bridge networks)")
                if key not in ("driver", "internal", "labels", "attachable", "enable_ipv6", "ipam") and not key.startswith("x-"):
                    raise self.fail(f"{field}.{key}", "not supported by agentrig")
            names.append(name)
        return names

    def volumes(self, value: Any) -> list[str]:
        names: list[str] = []
        for name, spec in self.mapping(value, "volumes").items():
            field = f"volumes.{name}"
            if not _NAME.match(name):
                raise self.fail(field, "not a valid volume name")
            spec = self.mapping(spec, field)
            for key in spec:
                if key in ("external", "name"):
                    raise self.fail(f"{field}.{key}", "a volume outside the task's project is not supported: remove it")
                if key == "driver_opts" or (key == "driver" and spec[key] not in (None, "local")):
                    raise self.fail(f"{field}.{key}", "volume drivers and their options (host paths, remote shares) are not supported")
                if key not in ("driver", "labels") and not key.startswith("x-"):
                    raise self.fail(f"{field}.{key}", "not supported by agentrig")
            names.append(name)
        return names

    def file_sources(self, kind: str, value: Any) -> None:
        for name, spec in self.mapping(value, kind).items():
            field = f"{kind}.{name}"
            spec = self.mapping(spec, field)
            for key in spec:
                if key == "file":
                    self.path(spec[key], f"{field}.file")
                elif key not in ("environment", "content", "labels") and not key.startswith("x-"):
                    raise self.fail(f"{field}.{key}", "not supported by agentrig (only file inside environment/, environment, content)")

    # -- one service ---------------------------------------------------------------------

    def service(self, name: str, value: Any) -> ComposeService:
        field = f"services.{name}"
        if not _NAME.match(name):
            raise self.fail(field, "not a valid service name")
        spec = self.mapping(value, field)
        result = ComposeService(name=name)
        for key, item in spec.items():
            where = f"{field}.{key}"
            if key.startswith("x-") or key in _PLAIN_FIELDS:
                continue
            if key not in _CHECKED_FIELDS:
                raise self.fail(where, "not supported by agentrig (it is refused until reviewed: it may reach the host)")
            getattr(self, f"_{key}")(item, where)
        if name == MAIN_SERVICE:
            for key in ("build", "image"):
                if key in spec:
                    raise self.fail(
                        f"{field}.{key}", "main is built from environment/Dockerfile (or [environment] docker_image): remove it"
                    )
            return result
        image = spec.get("image")
        if image is not None and not isinstance(image, str):
            raise self.fail(f"{field}.image", "expected an image name")
        result.image = image
        if "build" in spec:
            result.context, result.dockerfile = self._build_paths(spec["build"], f"{field}.build")
        elif image is None:
            raise self.fail(field, "needs an image or a build")
        return result

    def _build(self, value: Any, field: str) -> None:
        self._build_paths(value, field)

    def _build_paths(self, value: Any, field: str) -> tuple[str, str]:
        spec = {"context": value} if isinstance(value, str) else self.mapping(value, field)
        for key in spec:
            if key not in ("context", "dockerfile") and not key.startswith("x-"):
                raise self.fail(f"{field}.{key}", "not supported by agentrig (builds take context and dockerfile only)")
        context = self.path(spec.get("context", "."), f"{field}.context")
        dockerfile = self.path(spec.get("dockerfile", "Dockerfile"), f"{field}.dockerfile", base=context)
        if not dockerfile.is_file():
            raise self.fail(f"{field}.dockerfile", f"{dockerfile} does not exist")
        root = self.environment.resolve()
        return context.relative_to(root).as_posix(), dockerfile.relative_to(root).as_posix()

    def _privileged(self, value: Any, field: str) -> None:
        if value not in (False, None, "false"):
            raise self.fail(field, "privileged containers reach the host: remove it")

    def _namespace(self, value: Any, field: str) -> None:
        text = str(value)
        if text == "host" or text.startswith("container:"):
            raise self.fail(field, f"'{shorten(text)}' shares a namespace outside the task's project: remove it")

    def _pid(self, value: Any, field: str) -> None:
        self._namespace(value, field)

    def _ipc(self, value: Any, field: str) -> None:
        self._namespace(value, field)

    def _uts(self, value: Any, field: str) -> None:
        self._namespace(value, field)

    def _userns_mode(self, value: Any, field: str) -> None:
        self._namespace(value, field)

    def _cgroup(self, value: Any, field: str) -> None:
        self._namespace(value, field)

    def _network_mode(self, value: Any, field: str) -> None:
        text = str(value)
        if text == "host":
            # stricter than Harbor: the host's network holds the host's own services on 127.0.0.1; only
            # the user gives it (-c runtime.network=host), never a task file
            raise self.fail(field, "'host' gives a task's service the host's network and its local services: remove it")
        if text == "bridge" and not self.internet:
            raise self.fail(field, "'bridge' gives the engine's default network to a task that forbids internet")
        self._namespace(text, field)

    def _devices(self, value: Any, field: str) -> None:
        if self.items(value, field):
            raise self.fail(field, "host devices are not given to task containers: remove it")

    def _gpus(self, value: Any, field: str) -> None:
        if value:
            raise self.fail(field, "GPUs are not supported for task services: remove it")

    def _cap_add(self, value: Any, field: str) -> None:
        for cap in self.items(value, field):
            name = str(cap).upper().removeprefix("CAP_")
            if name not in SAFE_CAPABILITIES:
                raise self.fail(field, f"capability {shorten(cap)} reaches beyond the container: remove it")

    def _cap_drop(self, value: Any, field: str) -> None:
        self.items(value, field)

    def _security_opt(self, value: Any, field: str) -> None:
        for option in self.items(value, field):
            if str(option).replace("=", ":") not in ("no-new-privileges", "no-new-privileges:true"):
                raise self.fail(field, f"'{shorten(option)}' is not supported (only no-new-privileges)")

    def _ports(self, value: Any, field: str) -> None:
        if self.items(value, field):
            raise self.fail(field, "publishing ports on the host is not supported: services reach each other by name (use expose)")

    def _env_file(self, value: Any, field: str) -> None:
        for index, entry in enumerate(self.items(value, field)):
            path = entry.get("path") if isinstance(entry, dict) else entry
            self.path(path, f"{field}[{index}]")

    def _extends(self, value: Any, field: str) -> None:
        if isinstance(value, dict) and "file" in value:
            raise self.fail(f"{field}.file", "extending a service of another file is not supported: put it in this file")

    def _volumes_from(self, value: Any, field: str) -> None:
        for entry in self.items(value, field):
            if str(entry).startswith("container:"):
                raise self.fail(field, f"'{shorten(entry)}' mounts a container outside the task's project: remove it")

    def _logging(self, value: Any, field: str) -> None:
        driver = self.mapping(value, field).get("driver")
        if driver not in (None, "json-file", "local", "none"):
            raise self.fail(f"{field}.driver", f"logging driver '{shorten(driver)}' sends logs out of the engine: remove it")

    def _deploy(self, value: Any, field: str) -> None:
        spec = self.mapping(value, field)
        for key in spec:
            if key not in ("resources", "restart_policy", "replicas", "labels") and not key.startswith("x-"):
                raise self.fail(f"{field}.{key}", "not supported by agentrig")
        resources = self.mapping(spec.get("resources"), f"{field}.resources")
        reservations = self.mapping(resources.get("reservations"), f"{field}.resources.reservations")
        if reservations.get("devices") or reservations.get("generic_resources"):
            raise self.fail(f"{field}.resources.reservations", "devices (GPUs) are not supported for task services")

    def _volumes(self, value: Any, field: str) -> None:
        for index, entry in enumerate(self.items(value, field)):
            where = f"{field}[{index}]"
            if isinstance(entry, str):
                self._short_volume(entry, where)
            elif isinstance(entry, dict):
                self._long_volume(entry, where)
            else:
                raise self.fail(where, "expected SOURCE:TARGET[:MODE] or a mapping")

    def _short_volume(self, entry: str, field: str) -> None:
        parts = entry.split(":")
        if len(parts) == 1:
            return  # an anonymous volume
        # Compose reads every part after the target as options, and a later ro/rw overrides an earlier one
        source, read_only = parts[0], False
        for option in (option for part in parts[2:] for option in part.split(",")):
            if option in ("ro", "rw"):
                read_only = option == "ro"
            elif option in ("z", "Z"):
                raise self.fail(field, f"mount option '{option}' relabels the host's files (SELinux): remove it")
            elif option in _PROPAGATION_TO_HOST:
                raise self.fail(field, f"mount option '{option}': mount propagation to the host is not supported")
            elif option not in _VOLUME_MODES:
                raise self.fail(field, f"mount option '{shorten(option)}' is not supported")
        if source.startswith((".", "/", "~", "$")) or "/" in source:
            self._bind(source, read_only, field)
        elif not _NAME.match(source):
            raise self.fail(field, f"'{shorten(source)}' is neither a volume name nor a path inside {self.environment}")

    def _long_volume(self, entry: dict[str, Any], field: str) -> None:
        kind = entry.get("type")
        if kind == "bind":
            bind = self.mapping(entry.get("bind"), f"{field}.bind")
            if bind.get("propagation") not in (None, "private", "rprivate"):
                raise self.fail(f"{field}.bind.propagation", "mount propagation to the host is not supported")
            if bind.get("selinux") is not None:
                raise self.fail(f"{field}.bind.selinux", "relabelling the host's files (SELinux) is not supported: remove it")
            read_only = entry.get("read_only")
            self._bind(entry.get("source"), read_only is True or str(read_only).lower() in _TRUE, field)
        elif kind == "volume":
            source = entry.get("source")
            if source is not None and not (isinstance(source, str) and _NAME.match(source)):
                raise self.fail(f"{field}.source", f"'{shorten(source)}' is not a volume name")
        elif kind != "tmpfs":
            raise self.fail(f"{field}.type", f"mount type '{shorten(kind)}' is not supported (bind, volume, tmpfs)")

    def _bind(self, source: Any, read_only: bool, field: str) -> None:
        if isinstance(source, str) and source.startswith("/"):
            raise self.fail(field, f"'{shorten(source)}' mounts a host path: mount files of {self.environment} (relative, read-only)")
        self.path(source, field)
        if not read_only:
            raise self.fail(
                field, "a writable mount of the task's own files lets a container change them: add :ro (read_only: true)"
            )


def _check_env_file(environment: Path) -> None:
    """The project's ``.env`` may set variables, not Docker's or Compose's own settings (where to connect, what to read)."""
    file = environment / ".env"
    if not file.is_file():
        return
    from agentrig.boundary import read_problem_text

    try:
        text = read_problem_text(file, "compose variables")
    except (BoundaryError, OSError, UnicodeDecodeError) as exc:
        raise ProblemError(f"{file}: cannot read: {exc}") from None
    for number, line in enumerate(text.splitlines(), 1):
        key = line.strip().removeprefix("export ").split("=", 1)[0].strip()
        if key.upper().startswith(("DOCKER_", "COMPOSE_")):
            raise ProblemError(f"{file}: line {number}: {key} configures Docker or Compose itself, not the task: remove it")


def check_compose_file(task_dir: Path, config: HarborTaskConfig) -> ComposeSpec | None:
    """The task's ``environment/docker-compose.yaml``, checked (``None`` when it has none);
    :class:`ProblemError` naming the file and field of anything it may not do."""
    from agentrig.formats.native import read_yaml

    environment = task_dir / "environment"
    file = environment / COMPOSE_FILE
    if not file.is_file():
        return None
    try:
        resolve_inside(task_dir, f"environment/{COMPOSE_FILE}", f"{file}: the task's compose file")
    except BoundaryError as exc:
        raise ProblemError(str(exc)) from None
    document = read_yaml(file, "compose file")
    _check_env_file(environment)
    return _Checker(file, environment.resolve(), internet_allowed(config)).check(document)


def internet_allowed(config: HarborTaskConfig) -> bool:
    """Whether the task's containers may reach the internet: Harbor's agent-phase policy
    (:func:`agentrig.formats.harbor.network.phase_modes`: ``[environment] network_mode``, the deprecated
    ``allow_internet``, ``[agent] network_mode``) is ``public``. ``allowlist`` counts as no: only Harbor's
    egress sidecar could enforce it."""
    from agentrig.formats.harbor.network import phase_modes

    return phase_modes(config)[0] == "public"


def compose_env(config: HarborTaskConfig, environment: Path, main_image: str, where: str) -> dict[str, str]:
    """The variables the compose file's ``${VAR}`` see: the task's ``[environment] env`` (host variables
    resolved; credentials only as :func:`~agentrig.formats.harbor.config.resolve_env` allows) and Harbor's
    infrastructure variables over them (``ComposeInfraEnvVars``: MAIN_IMAGE_NAME, CONTEXT_DIR,
    PREBUILT_IMAGE_NAME, CPUS, MEMORY)."""
    from agentrig.formats.harbor.config import resolve_env

    env = {k: v for k, v in resolve_env(config.environment.env, where).items() if not k.upper().startswith(("DOCKER_", "COMPOSE_"))}
    env.update(
        MAIN_IMAGE_NAME=main_image,
        CONTEXT_DIR=str(environment.resolve()),
        CPUS=f"{config.environment.cpus:g}",
        MEMORY=f"{config.environment.memory_mb}M",
    )
    if config.environment.docker_image:
        env["PREBUILT_IMAGE_NAME"] = config.environment.docker_image
    return env


def compose_runtime_option(
    *,
    task_name: str,
    task_dir: Path,
    config: HarborTaskConfig,
    client: docker.DockerClient,
    main_image: str,
    on_build: Callable[[str], None] | None = None,
    rebuild: str | None = None,
) -> dict[str, Any]:
    """The ``docker`` runtime's ``compose`` option for the task at ``task_dir``: the file checked again
    (it may have changed since it was listed), every service image built or found, and an override
    naming those images and making the project's networks internal when the task forbids internet."""
    import docker.errors

    from agentrig.formats.harbor.config import TaskConfigError
    from agentrig.formats.harbor.image import build_task_image
    from agentrig.runtime.compose import ComposeOptions, compose_command
    from agentrig.runtime.errors import ImageNotFoundError, RuntimeSetupError

    compose_command()  # no compose v2: one line now, not after the images are built
    try:
        spec = check_compose_file(task_dir, config)
    except ProblemError as exc:
        raise RuntimeSetupError(str(exc)) from None
    if spec is None:
        raise RuntimeSetupError(f"{task_dir / 'environment' / COMPOSE_FILE}: missing (it was there when the task was loaded)")
    environment = (task_dir / "environment").resolve()
    services: dict[str, Any] = {}
    for service in spec.services:
        if service.name == MAIN_SERVICE:
            continue
        if service.context is not None and service.dockerfile is not None:
            image = build_task_image(
                client,
                task=f"{task_name}-{service.name}",
                context=environment / service.context,
                dockerfile=environment / service.dockerfile,
                timeout=config.environment.build_timeout_sec,
                on_build=on_build,
                rebuild=rebuild,
            )
            services[service.name] = {"image": image.tag}
        elif service.image and "$" not in service.image:
            try:
                client.images.get(service.image)
            except docker.errors.ImageNotFound:
                raise ImageNotFoundError(
                    f"image '{service.image}' of service '{service.name}' ({spec.file}) is not present locally and "
                    f"agentrig never pulls: build or load it (`docker build -t {service.image} .` / `docker load -i FILE`), then retry"
                ) from None
    override: dict[str, Any] = {"services": services}
    if not internet_allowed(config):
        # the project's networks still join the services; none of them leads out
        override["networks"] = {name: {"internal": True} for name in dict.fromkeys(["default", *spec.networks])}
    try:
        env = compose_env(config, environment, main_image, f"{task_dir / 'task.toml'} [environment] env")
    except TaskConfigError as exc:
        raise RuntimeSetupError(str(exc)) from None
    return ComposeOptions(
        name=task_name,
        directory=str(environment),
        files=[str(spec.file.resolve())],
        overrides=[override],
        services=[service.name for service in spec.services],
        networks=spec.networks,
        volumes=spec.volumes,
        env=env,
    ).model_dump()
