"""The configuration files of a Harbor task (``task.toml``) and of a Terminal-Bench task (``task.yaml``).

Both are read into pydantic models; a malformed file raises
:class:`TaskConfigError` whose one-line message names the file and the field
(``tasks/hello/task.toml: field `environment.cpus`: Input should be a valid integer``).
Fields agentrig does not use are accepted and ignored, as Harbor itself
ignores them: a task written for a newer Harbor still loads.

Environment values (``[verifier] env``, ``[solution] env``, ``[environment] env``)
may name host variables as ``${VAR}`` or ``${VAR:-default}``;
:func:`resolve_env` fills them in when the task runs, never when it is listed.
"""

from __future__ import annotations

import os
import re
import sys
import unicodedata
from collections.abc import Collection
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agentrig.boundary import BoundaryError, Duration, Seconds, check_nesting, nesting_message, read_problem_text, shorten

TASK_TOML = "task.toml"
TASK_YAML = "task.yaml"
_ENV_TEMPLATE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)B?\s*$", re.IGNORECASE)


class TaskConfigError(ValueError):
    """A task's configuration file is malformed; the message is one line naming file and field."""


NetworkMode = Literal["public", "no-network", "allowlist"]
"""Harbor's ``network_mode`` (``harbor.models.task.config.NetworkMode``): the internet, none, or only ``allowed_hosts``."""


class PhaseNetwork(BaseModel):
    """``network_mode`` / ``allowed_hosts`` of ``[agent]`` or ``[verifier]``: a phase's own policy
    (Harbor's ``PhaseNetworkPolicyConfig``); unset, the phase has its environment's."""

    network_mode: NetworkMode | None = None
    allowed_hosts: list[str] | None = None

    @model_validator(mode="after")
    def _hosts_need_allowlist(self) -> PhaseNetwork:
        if self.allowed_hosts is not None and self.network_mode != "allowlist":
            raise ValueError("allowed_hosts is only valid when network_mode='allowlist'")
        return self


class VerifierSection(PhaseNetwork):
    """``[verifier]``: how long ``tests/test.sh`` may run and the environment it gets."""

    model_config = ConfigDict(extra="ignore")

    timeout_sec: Seconds = 600.0
    env: dict[str, str] = Field(default_factory=dict)
    user: str | int | None = None


class AgentSection(PhaseNetwork):
    """``[agent]``: how long the agent may work on the task."""

    model_config = ConfigDict(extra="ignore")

    timeout_sec: Seconds | None = 600.0
    user: str | int | None = None


class SolutionSection(BaseModel):
    """``[solution]``: the environment ``solution/solve.sh`` gets."""

    model_config = ConfigDict(extra="ignore")

    env: dict[str, str] = Field(default_factory=dict)


def _size_to_mb(text: str) -> int:
    match = _SIZE.match(text)
    if match is None:
        raise ValueError(f"invalid size {text!r}: expected e.g. '512M' or '2G'")
    number, unit = float(match.group(1)), match.group(2).upper()
    factor = {"": 1 / (1024 * 1024), "K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}[unit]
    return max(1, int(number * factor))


class EnvironmentSection(BaseModel):
    """``[environment]``: the image (built from ``environment/Dockerfile`` or a prebuilt
    ``docker_image``) and the container's resources."""

    model_config = ConfigDict(extra="ignore")

    build_timeout_sec: Seconds = 600.0
    docker_image: str | None = None
    cpus: float = Field(default=1, gt=0)
    memory_mb: int = Field(default=2048, gt=0)
    storage_mb: int = Field(default=10240, gt=0)
    gpus: int = Field(default=0, ge=0)
    #: The task's network (Harbor's ``BaselineNetworkPolicyConfig``): public unless the task says otherwise.
    network_mode: NetworkMode = "public"
    allowed_hosts: list[str] | None = None
    allow_internet: bool | None = Field(default=None, description="Deprecated: network_mode public (true) or no-network (false).")
    env: dict[str, str] = Field(default_factory=dict)
    memory: str | None = Field(default=None, exclude=True, description="Deprecated: a size such as '2G'.")
    storage: str | None = Field(default=None, exclude=True, description="Deprecated: a size such as '10G'.")

    @model_validator(mode="after")
    def _deprecated_sizes(self) -> EnvironmentSection:
        # older tasks write sizes as strings ("2G"); Harbor maps them onto the *_mb fields
        if self.memory is not None:
            self.memory_mb = _size_to_mb(self.memory)
        if self.storage is not None:
            self.storage_mb = _size_to_mb(self.storage)
        return self

    @model_validator(mode="after")
    def _network(self) -> EnvironmentSection:
        # Harbor's TaskConfig._apply_legacy_allow_internet: allow_internet decides unless
        # network_mode or allowed_hosts is written
        if self.allow_internet is not None and "network_mode" not in self.model_fields_set and self.allowed_hosts is None:
            self.network_mode = "public" if self.allow_internet else "no-network"
        if self.allowed_hosts is not None and self.network_mode != "allowlist":
            raise ValueError("allowed_hosts is only valid when network_mode='allowlist'")
        return self


class HealthcheckSection(BaseModel):
    """``[steps.healthcheck]``: a command polled before the step's agent, with Docker ``HEALTHCHECK``
    semantics (Harbor's ``HealthcheckConfig``, same defaults): it passes at its first exit 0;
    failures during ``start_period_sec`` do not count (retried every ``start_interval_sec``);
    after it, ``retries`` consecutive failures (``interval_sec`` apart) fail the step."""

    model_config = ConfigDict(extra="ignore")

    command: str = Field(min_length=1)
    interval_sec: Duration = 5.0
    timeout_sec: Seconds = 30.0
    start_period_sec: Duration = 0.0
    start_interval_sec: Duration = 5.0
    retries: int = Field(default=3, ge=0)


class StepAgentSection(BaseModel):
    """``[steps.agent]``: the step's own agent timeout (unset: the task's ``[agent] timeout_sec``)."""

    model_config = ConfigDict(extra="ignore")

    timeout_sec: Seconds | None = None
    user: str | int | None = None


class StepVerifierSection(BaseModel):
    """``[steps.verifier]``: the step's verifier timeout and the variables added to the task's ``[verifier] env``.

    ``timeout_sec`` defaults to 600 s, not to the task's ``[verifier] timeout_sec``: Harbor's
    ``StepConfig.verifier`` is a full ``VerifierConfig`` whose default is 600, and its
    ``_step_verifier_timeout_sec`` falls back to the task's only when the step's is ``None``.
    """

    model_config = ConfigDict(extra="ignore")

    timeout_sec: Seconds = 600.0
    env: dict[str, str] = Field(default_factory=dict)
    user: str | int | None = None


def _step_name(value: str) -> str:
    # Harbor's validate_step_name: one portable directory name under steps/
    if (
        not value.strip()
        or value in (".", "..")
        or value.endswith((".", " "))
        or re.search(r'[<>:"/\\|?*\x00-\x1f\x7f]', value)
        or len(value.encode("utf-8")) > 255
    ):
        raise ValueError(
            f"invalid step name {shorten(repr(value))}: a step name is one directory name under steps/"
            " (no path separators, control or reserved characters, no trailing dot or space)"
        )
    return value


class StepSection(BaseModel):
    """One ``[[steps]]`` entry of a multi-step task (schema 1.1): its directory ``steps/<name>/``,
    its agent and verifier settings, ``min_reward`` (a number gates the ``reward`` metric, a table
    gates each metric named; a step below it stops the remaining steps), an optional
    ``healthcheck`` and the ``artifacts`` it adds to the task's."""

    model_config = ConfigDict(extra="ignore")

    name: str
    agent: StepAgentSection = Field(default_factory=StepAgentSection)
    verifier: StepVerifierSection = Field(default_factory=StepVerifierSection)
    min_reward: float | dict[str, float] | None = None
    healthcheck: HealthcheckSection | None = None
    artifacts: list[str | dict[str, Any]] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        return _step_name(value)


MULTI_STEP_STRATEGIES = ("mean", "final")


class HarborTaskConfig(BaseModel):
    """A Harbor ``task.toml``.

    ``steps`` (``[[steps]]``, schema 1.1) makes the task a multi-step one: each step has its
    own instruction, tests and solution under ``steps/<name>/`` and runs, in order, in the
    same container. ``multi_step_reward_strategy`` (``mean``, the default, or ``final``)
    derives the task's reward from the steps'.
    """

    model_config = ConfigDict(extra="ignore")

    version: str = "1.0"
    metadata: dict[str, Any] = Field(default_factory=dict)
    verifier: VerifierSection = Field(default_factory=VerifierSection)
    agent: AgentSection = Field(default_factory=AgentSection)
    solution: SolutionSection = Field(default_factory=SolutionSection)
    environment: EnvironmentSection = Field(default_factory=EnvironmentSection)
    source: str | None = None
    steps: list[StepSection] | None = None
    multi_step_reward_strategy: Literal["mean", "final"] | None = None

    @field_validator("steps")
    @classmethod
    def _unique_steps(cls, steps: list[StepSection] | None) -> list[StepSection] | None:
        # as Harbor: unique also on case-insensitive, Unicode-normalising file systems
        seen: set[str] = set()
        for step in steps or []:
            key = unicodedata.normalize("NFC", step.name).casefold()
            if key in seen:
                raise ValueError(f"step names must be unique (also ignoring case): {shorten(repr(step.name))} repeats")
            seen.add(key)
        return steps

    @model_validator(mode="before")
    @classmethod
    def _schema_version(cls, data: Any) -> Any:
        if isinstance(data, dict) and "schema_version" in data and "version" not in data:
            data = {**data, "version": data["schema_version"]}
        return data

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, (int, float)) else value


class SolutionCommand(BaseModel):
    """One step of a Terminal-Bench ``solution.yaml``."""

    model_config = ConfigDict(extra="ignore")

    command: str
    min_timeout_sec: Seconds = 30.0
    block: bool = True
    append_enter: bool = True


class TerminalBenchTaskConfig(BaseModel):
    """A Terminal-Bench ``task.yaml`` (the format before Harbor): the instruction lives in the file."""

    model_config = ConfigDict(extra="ignore")

    instruction: str = Field(min_length=1)
    author_name: str = "unknown"
    author_email: str = "unknown"
    difficulty: str = "unknown"
    category: str = "software_engineering"
    tags: list[str] = Field(default_factory=list)
    parser_name: str = "pytest"
    max_agent_timeout_sec: Seconds = 360.0
    max_test_timeout_sec: Seconds = 60.0
    run_tests_in_same_shell: bool = False

    @model_validator(mode="before")
    @classmethod
    def _descriptions(cls, data: Any) -> Any:
        # the first Terminal-Bench tasks listed instructions as `descriptions`, keyed; `base` is the one run
        if isinstance(data, dict) and "instruction" not in data and isinstance(data.get("descriptions"), list):
            texts = {d.get("key"): d.get("description") for d in data["descriptions"] if isinstance(d, dict)}
            chosen = texts.get("base") if "base" in texts else next(iter(texts.values()), None)
            if chosen is not None:
                data = {**data, "instruction": chosen}
        return data


def _field_error(path: Path, exc: ValidationError) -> TaskConfigError:
    error = exc.errors()[0]
    field = ".".join(str(part) for part in error["loc"])
    message = error["msg"]
    if error["type"] != "missing" and "input" in error and not isinstance(error["input"], (dict, list)):
        message += f" (got {shorten(repr(error['input']))})"
    where = f"field `{field}`" if field else "the file"
    return TaskConfigError(f"{path}: {where}: {message}")


def _read(path: Path) -> str:
    """The text of a task's configuration file, at most the problem-file cap; :class:`TaskConfigError` otherwise."""
    try:
        return read_problem_text(path, "task file")
    except BoundaryError as exc:
        raise TaskConfigError(str(exc)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskConfigError(f"{path}: cannot read: {exc}") from None


def _nesting(data: Any, path: Path) -> None:
    try:
        check_nesting(data, str(path))
    except BoundaryError as exc:
        raise TaskConfigError(str(exc)) from None


def read_task_toml(path: Path) -> HarborTaskConfig:
    """Parse a ``task.toml``; raises :class:`TaskConfigError` naming the file and the field."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    text = _read(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TaskConfigError(f"{path}: invalid TOML: {shorten(' '.join(str(exc).split()))}") from None
    except RecursionError:
        raise TaskConfigError(nesting_message(str(path))) from None
    _nesting(data, path)
    try:
        return HarborTaskConfig.model_validate(data)
    except ValidationError as exc:
        raise _field_error(path, exc) from None


def read_task_yaml(path: Path) -> TerminalBenchTaskConfig:
    """Parse a Terminal-Bench ``task.yaml``; raises :class:`TaskConfigError` naming the file and the field."""
    from agentrig.formats.native import parse_yaml
    from agentrig.problem import ProblemError

    text = _read(path)
    try:
        data = parse_yaml(text, path)  # nesting counted before it is built, as for problem.yaml
    except ProblemError as exc:
        raise TaskConfigError(str(exc)) from None
    if not isinstance(data, dict):
        raise TaskConfigError(f"{path}: expected a mapping of fields (instruction, max_agent_timeout_sec, ...)")
    try:
        return TerminalBenchTaskConfig.model_validate(data)
    except ValidationError as exc:
        raise _field_error(path, exc) from None


def host_variables(env: dict[str, str]) -> list[str]:
    """The host variables ``env``'s values name (``${VAR}`` / ``${VAR:-default}``), sorted."""
    return sorted({match.group(1) for value in env.values() for match in _ENV_TEMPLATE.finditer(value)})


def resolve_env(
    env: dict[str, str],
    where: str,
    environ: dict[str, str] | None = None,
    *,
    allow: Collection[str] = (),
) -> dict[str, str]:
    """``env`` with ``${VAR}`` / ``${VAR:-default}`` taken from the host environment.

    A variable that is unset and has no default raises :class:`TaskConfigError`
    naming ``where`` (e.g. ``tasks/x/task.toml [verifier] env.API_KEY``). A credential
    agentrig holds (:func:`agentrig.credentials.is_credential_variable`: ``OPENAI_API_KEY``,
    ``ANTHROPIC_API_KEY``, any ``*_API_KEY``, ...) is never taken from the host unless ``allow``
    names it (``-c verifier.allow_env=[NAME,...]``): its default is used, or, without one, the
    same error says how to allow it.
    """
    from agentrig.credentials import is_credential_variable

    source = os.environ if environ is None else environ
    allowed = set(allow)
    resolved: dict[str, str] = {}
    for key, value in env.items():

        def fill(match: re.Match[str], key: str = key) -> str:
            name, default = match.group(1), match.group(2)
            if is_credential_variable(name) and name not in allowed:
                if default is not None:
                    return default
                raise TaskConfigError(
                    f"{where}.{key}: host variable {name} holds a credential agentrig does not hand to task"
                    f" scripts; allow it with -c verifier.allow_env=[{name}]"
                )
            if name in source:
                return source[name]
            if default is not None:
                return default
            raise TaskConfigError(f"{where}.{key}: host environment variable {name} is not set (set it, or write ${{{name}:-default}})")

        resolved[key] = _ENV_TEMPLATE.sub(fill, value)
    return resolved
