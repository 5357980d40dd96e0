"""The agent interface: configuration, lifecycle, and the agent classes of an agent type.

Lifecycle, driven by the runner: ``Agent.from_config`` → ``setup(session)`` →
for each checkpoint ``run_checkpoint(task)``, ``save_artifacts(path)``,
``finish_checkpoint(reset_context)`` → ``cleanup()``.
"""

from __future__ import annotations

import inspect
import logging
import os
import threading
import time
import traceback
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from agentrig.agents.mcp import McpServerConfig, check_server_names
from agentrig.agents.result import CheckpointInferenceResult as CheckpointInferenceResult  # part of the interface
from agentrig.errors import AgentError, AgentLimitError, AgentSetupError
from agentrig.registry import PluginRegistry, fire_hook, get_registry
from agentrig.scrub import SecretScrubber
from agentrig.usage import AgentCostLimits, UsageTracker

if TYPE_CHECKING:
    from agentrig.agents.session import Session
    from agentrig.credentials import ProviderCredential
    from agentrig.llm.interface import ToolSpec
    from agentrig.model_definition import ModelDefinition, ThinkingPreset
    from agentrig.pricing import APIPricing
    from agentrig.trajectory import TrajectoryStep


class AgentConfigBase(BaseModel):
    """Configuration shared by every agent type.

    Subclasses narrow ``type`` to a ``Literal`` naming their agent type and add
    their own fields. Unknown keys are an error (``extra="forbid"``).
    ``docker_template`` is a Dockerfile template (``{{ base_image }}`` and
    ``{{ version }}`` are replaced, see :mod:`agentrig.runtime.images`) for
    agents that need their own image; it requires ``version``.

    ``mcp_servers`` names MCP servers (:mod:`agentrig.agents.mcp`) the agent
    offers its model; an agent type that can use them says so with
    :attr:`supports_mcp`, and any other refuses a non-empty ``mcp_servers``.
    """

    model_config = ConfigDict(extra="forbid")

    #: Whether the agent type gives ``mcp_servers`` to its model; ``False``: a config naming servers is refused.
    supports_mcp: ClassVar[bool] = False

    type: str = Field(description="The agent type, as listed by `agentrig agents list`.")
    cost_limits: AgentCostLimits = Field(default_factory=AgentCostLimits)
    version: str | None = Field(default=None, description="Version of the agent's own tool, rendered into its image.")
    docker_template: str | None = Field(
        default=None,
        description=(
            "Dockerfile template for the agent's image: '{{ base_image }}' and '{{ version }}' are replaced "
            "(a Dockerfile's own ${VAR} is left alone); built as agentrig/<agent>-<version>:<base-tag>."
        ),
    )
    reset_context: bool | None = Field(
        default=None,
        description="Start every checkpoint with a fresh context (true) or continue the conversation (false); "
        "none: the run's setting (agentrig run --reset-context/--keep-context, default keep).",
    )
    mcp_servers: dict[str, McpServerConfig] = Field(
        default_factory=dict,
        exclude_if=lambda servers: not servers,  # a config without servers dumps (and records) as before
        description="MCP servers by name: stdio {command, args, env} or streamable HTTP {url, headers}; "
        "secret values as ${VAR} from agentrig's environment. Only agents that support MCP accept any.",
    )

    @field_validator("mcp_servers", mode="before")
    @classmethod
    def _mcp_supported(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None or value == "":
            return {}  # `-c mcp_servers=` clears them
        if value and not cls.supports_mcp:
            from pydantic_core import PydanticCustomError

            agent = info.data.get("type") or cls.model_fields["type"].default or cls.__name__
            raise PydanticCustomError(
                "mcp_unsupported", "{agent} has no MCP support: remove mcp_servers (or pick an agent that has)", {"agent": agent}
            )
        return check_server_names(value) if isinstance(value, dict) else value

    @model_validator(mode="after")
    def _template_needs_version(self) -> AgentConfigBase:
        if self.docker_template is not None and not (self.version or "").strip():
            raise ValueError(
                f"agent '{self.type}' has a docker_template but no 'version': set 'version' in the agent config"
            )
        return self


StepListener = Callable[["TrajectoryStep"], None]


@dataclass(frozen=True)
class AgentContext:
    """What an agent is built for, besides its own config: handed to :meth:`Agent._from_config`.

    Frozen and picklable. Fields an agent does not use it simply ignores;
    fields may be added later (always with a default), so read them by name.
    """

    #: The model the agent talks to (``--model``), ``None`` for an agent that needs none.
    model: ModelDefinition | None = None
    #: The model provider's credential (endpoint, key) from the environment, ``None`` when there is none.
    credential: ProviderCredential | None = None
    #: The problem run the agent works on (``hello``, ``hello/attempt_2``; ``task`` for :func:`agentrig.run_task`).
    problem_name: str = "task"
    #: One line per step wanted (``--verbose``).
    verbose: bool = False
    #: The container image the session runs (``--image``, or the agent's own image), ``None`` for none.
    image: str | None = None
    #: ``--thinking``: extended thinking / reasoning effort, ``None`` for the model's own default.
    thinking_preset: ThinkingPreset | None = None
    #: ``--thinking-max-tokens``: the thinking budget in tokens, ``None`` for the preset's.
    thinking_max_tokens: int | None = None
    #: ``--runtime``: the runtime the agent's sessions run in (``local``, ``docker``, ...), ``None`` when not known.
    #: An agent's ``preflight`` may check what that runtime needs of the host (a CLI agent: the host's Node.js).
    runtime: str | None = None

    def require_model(self, agent: str) -> ModelDefinition:
        """The model, for an agent that cannot work without one; :class:`AgentSetupError` naming
        ``agent`` and ``--model`` when there is none (an agent built outside ``agentrig run``)."""
        if self.model is None:
            from agentrig.errors import AgentSetupError

            raise AgentSetupError(f"agent '{agent}' needs a model: give one (--model PROVIDER/NAME, or AgentContext(model=...))")
        return self.model

    def legacy_arguments(self) -> tuple[Any, ...]:
        """The seven arguments the former ``_from_config`` takes after ``config``, in its order."""
        return (
            self.model, self.credential, self.problem_name, self.verbose, self.image,
            self.thinking_preset, self.thinking_max_tokens,
        )


class Agent(ABC):
    """Base class of every agent.

    Subclasses implement :meth:`_from_config`, :meth:`setup`, :meth:`run`,
    :meth:`reset`, :meth:`save_artifacts` and :meth:`cleanup`; they record model
    calls in ``self.usage`` and report each step through :meth:`emit_step`.
    """

    agent_type: ClassVar[str | None] = None
    #: Whether :meth:`restore_context` can take up a conversation this agent type recorded
    #: (``agentrig run --from ... --keep-context``); agents that cannot are refused before the run starts.
    restores_context: ClassVar[bool] = False

    def __init__(
        self,
        agent_name: str,
        problem_name: str,
        cost_limits: AgentCostLimits,
        pricing: APIPricing | None,
        verbose: bool,
    ) -> None:
        """Set up the bookkeeping every agent shares."""
        self.agent_name = agent_name
        self.problem_name = problem_name
        self.cost_limits = cost_limits
        self.pricing = pricing
        self.verbose = verbose
        self.usage = UsageTracker()
        self.prior_cost = 0.0
        self.stop_reason: str | None = None
        self.checkpoint_error: BaseException | None = None
        """The exception the last :meth:`run_checkpoint` ended in (``None``: it did not raise); in memory
        only, for the runner's retry decision (:func:`agentrig.run.retries.retry_cause`)."""
        self.log = logging.getLogger(f"agentrig.agent.{agent_name}.{problem_name}")
        self._step_listeners: list[StepListener] = []
        self.parent_agent: Agent | None = None
        """The agent that runs this one as a tool (a subagent), or ``None``."""
        self._stop_lock = threading.Lock()
        self._stop_request: tuple[str, str] | None = None
        self._checkpoint_clock: float | None = None
        self._secrets = SecretScrubber()

    @property
    def secrets(self) -> SecretScrubber:
        """The values this agent must never record (:mod:`agentrig.scrub`): its credential and MCP values (added
        when it is built), the run's verifier-allowed variables (added by the runner); add its own with
        ``agent.secrets.add(...)``. Every step it emits, its artifacts and its error are scrubbed of them."""
        scrubber: SecretScrubber | None = self.__dict__.get("_secrets")  # an agent that skipped __init__ has none yet
        if scrubber is None:
            scrubber = self.__dict__["_secrets"] = SecretScrubber()
        return scrubber

    def scrub(self, step: TrajectoryStep) -> TrajectoryStep:
        """``step`` without the secrets of this agent and of the agents running it as a subagent."""
        agent: Agent | None = self
        while agent is not None:
            step = agent.secrets.model(step)
            agent = getattr(agent, "parent_agent", None)
        return step

    # -- construction -------------------------------------------------------

    @classmethod
    def from_config(cls, config: AgentConfigBase, context: AgentContext | None = None, *legacy: Any) -> Agent:
        """Build the agent of ``config.type`` (found through the plugins) for ``context``.

        ``context`` carries what the agent is built for besides its config
        (model, credential, problem, image, thinking, verbosity); ``None``: an
        empty :class:`AgentContext`. The former positional form
        ``from_config(config, model, credential, problem_name, verbose, image,
        thinking_preset, thinking_max_tokens)`` still works, with a
        ``DeprecationWarning``.
        """
        if legacy or (context is not None and not isinstance(context, AgentContext)):
            context = _legacy_call_context(context, *legacy)
        agent_cls = get_agent_cls(config.type)
        return build_agent(agent_cls, config, context or AgentContext())

    @classmethod
    @abstractmethod
    def _from_config(cls, config: AgentConfigBase, context: AgentContext) -> Agent:
        """Build an instance from its own config type and ``context``; called by :meth:`from_config`.

        An implementation written against the former signature
        ``_from_config(config, model, credential, problem_name, verbose, image,
        thinking_preset=None, thinking_max_tokens=None)`` is still called that
        way (recognised by its signature), with one ``DeprecationWarning``.
        """

    # -- lifecycle ----------------------------------------------------------

    def preflight(self) -> None:
        """Raise :class:`AgentSetupError` when the agent's model settings cannot work.

        ``agentrig run`` calls it once, before the run directory exists, so a
        missing API key, a provider without an endpoint or an invalid model
        option is a usage error (exit 2) instead of a failed run. It must make
        no network call and start nothing; ``setup`` still runs its own checks.
        The default checks nothing.
        """

    @abstractmethod
    def setup(self, session: Session) -> None:
        """Prepare to work in ``session`` (its workspace and runtime)."""

    @abstractmethod
    def run(self, task: str) -> None:
        """Work on ``task`` until done or stopped; does not reset any state."""

    @abstractmethod
    def reset(self) -> None:
        """Forget the conversation and per-checkpoint state (not the workspace, not usage)."""

    @abstractmethod
    def save_artifacts(self, path: Path) -> None:
        """Write the agent's own artifacts (transcripts, logs) into ``path``."""

    @abstractmethod
    def cleanup(self) -> None:
        """Release what the agent holds (processes, connections); called once at the end."""

    def tool_specs(self) -> list[ToolSpec]:
        """The tools this agent offers its model (``agentrig.list_tools``); empty when it cannot say."""
        return []

    def supports_replay(self) -> bool:
        """Whether :meth:`run_replay` can re-execute a recorded trajectory."""
        return False

    def run_replay(self, path: Path) -> CheckpointInferenceResult:
        """Re-execute the trajectory recorded at ``path`` with no model."""
        raise AgentError(f"{type(self).__name__} does not support replay")

    def restore_context(self, artifacts: Path) -> None:
        """Take up the conversation recorded in ``artifacts`` (a checkpoint's ``agent/`` directory, as
        :meth:`save_artifacts` wrote it in another run), after :meth:`setup`, before the next checkpoint.

        ``artifacts`` comes from a run directory read back: untrusted input. Read only files inside it
        (:func:`agentrig.boundary.read_inside`, with a size cap) and raise :class:`AgentSetupError` with one
        line naming the file when it cannot be used. Only agents that set :attr:`restores_context` are asked.
        """
        raise AgentSetupError(f"agent '{self.agent_name}' cannot restore a recorded conversation")

    # -- limits and steps ---------------------------------------------------

    def hit_net_rate_limit(self) -> bool:
        """Whether the whole problem's cost has reached ``net_cost_limit``."""
        limit = self.cost_limits.net_cost_limit
        return bool(limit) and self.usage.cost + self.prior_cost >= limit

    def limit_reached(self) -> str | None:
        """The name of the limit the agent has reached (``step_limit``, ``time_limit``, ...), or ``None``.

        A stop the runner requested (:meth:`request_stop`) counts as reached.
        """
        stop = self._pending_stop()
        if stop is not None:
            return stop[0]
        reason = self.cost_limits.exceeded(self.usage, self.prior_cost)
        clock, time_limit = self._checkpoint_clock, self.cost_limits.time_limit
        if reason is None and time_limit and clock is not None and time.monotonic() - clock >= time_limit:
            reason = "time_limit"
        return reason

    def request_stop(self, reason: str, message: str | None = None) -> bool:
        """Ask the running checkpoint to stop (thread-safe); ``False`` when a stop was already asked.

        The runner calls it when a limit it enforces is reached. From then on
        :meth:`check_limits` and :meth:`emit_step` raise :class:`AgentLimitError`
        with ``reason``, and the checkpoint ends with ``stop_reason = reason``
        and an ``ErrorStep`` saying ``message``.
        """
        with self._stop_lock:
            if self._stop_request is not None:
                return False
            self._stop_request = (reason, message or f"{reason} reached: the runner stopped the agent")
            return True

    @property
    def stop_requested(self) -> str | None:
        """The reason of a stop the runner asked for in this checkpoint, or ``None``."""
        return self._stop_request[0] if self._stop_request is not None else None

    def check_limits(self) -> None:
        """Raise :class:`AgentLimitError` when a limit is reached; call before each model call."""
        reason = self.limit_reached()
        if reason is not None:
            raise AgentLimitError(reason)

    def add_step_listener(self, listener: StepListener) -> None:
        """Call ``listener`` with every step this agent emits (the runner writes them to disk)."""
        self._step_listeners.append(listener)

    def emit_step(self, step: TrajectoryStep) -> None:
        """Report one trajectory step as it happens: to listeners and the ``agentrig_step`` hook.

        A subagent's steps (``parent_agent`` set) go to the ``agentrig_subagent_step``
        hook instead: observers of a run see them only when they ask for them.
        Once the runner asked the agent to stop (:meth:`request_stop`), the
        step is still reported, then :class:`AgentLimitError` is raised: an
        agent that never checks its limits stops at its next step.
        """
        self._deliver(step)
        stop = self._pending_stop()
        if stop is not None:
            raise AgentLimitError(stop[0], stop[1])

    def _pending_stop(self) -> tuple[str, str] | None:
        """The stop asked of this agent, or of an agent running it as a subagent (a stop reaches subagents)."""
        agent: Agent | None = self
        while agent is not None:
            request: tuple[str, str] | None = getattr(agent, "_stop_request", None)  # an agent that skipped __init__ has none
            if request is not None:
                return request
            agent = agent.parent_agent
        return None

    def _deliver(self, step: TrajectoryStep) -> None:
        step = self.scrub(step)  # the one place every agent's steps pass: no listener or hook sees a secret
        for listener in self._step_listeners:
            listener(step)
        if self.parent_agent is None:
            fire_hook("agentrig_step", agent=self, step=step)
        else:
            fire_hook("agentrig_subagent_step", parent=self.parent_agent, agent=self, step=step)

    # -- checkpoints --------------------------------------------------------

    def run_checkpoint(self, task: str) -> CheckpointInferenceResult:
        """Run ``task`` and capture timing, usage and any error with its traceback."""
        started = datetime.now(timezone.utc)
        had_error = False
        error_message: str | None = None
        self.checkpoint_error = None
        with self._stop_lock:
            self._stop_request = None
        self._checkpoint_clock = time.monotonic()
        try:
            self.run(task)
        except AgentLimitError as exc:
            self.stop_reason = self.stop_reason or exc.reason
        except Exception as exc:
            if self._pending_stop() is None:  # an agent stopped by the runner fails in many ways: not an error
                had_error = True
                self.checkpoint_error = exc
                error_message = traceback.format_exc()
                self.stop_reason = self.stop_reason or "error"
                self.log.error("agent raised %s: %s", type(exc).__name__, exc)
        finally:
            self._checkpoint_clock = None
        stop = self._pending_stop()
        if stop is not None:
            from agentrig.trajectory import ErrorStep

            self.stop_reason = stop[0]
            self._deliver(ErrorStep(message=stop[1], error_type=stop[0]))
        return self.checkpoint_result(started, had_error=had_error, error_message=error_message)

    def checkpoint_result(
        self, started: datetime, *, had_error: bool = False, error_message: str | None = None
    ) -> CheckpointInferenceResult:
        """The result of a checkpoint begun at ``started`` and ending now (``run_replay`` uses it too).

        Carries a copy of the usage so far, ``stop_reason`` and ``prior_cost``.
        """
        completed = datetime.now(timezone.utc)
        if error_message is not None:
            error_message = self.secrets.text(error_message)
        return CheckpointInferenceResult(
            started=started,
            completed=completed,
            elapsed=(completed - started).total_seconds(),
            usage=self.usage.model_copy(deep=True),
            had_error=had_error,
            error_message=error_message,
            stop_reason=self.stop_reason,
            prior_cost=self.prior_cost,
        )

    def finish_checkpoint(self, reset_context: bool = True) -> None:
        """Close a checkpoint: reset the context if asked, move its cost into ``prior_cost``."""
        if reset_context:
            self.reset()
        self.prior_cost += self.usage.cost
        self.usage = UsageTracker()
        self.stop_reason = None

    def describe(self) -> dict[str, Any]:
        """A small summary for logs and ``run.json``."""
        return {"agent": self.agent_name, "problem": self.problem_name}


def get_agent_cls(name: str, registry: PluginRegistry | None = None) -> type[Agent]:
    """The :class:`Agent` subclass of agent type ``name`` (declared by an installed plugin), imported
    on first use; ``registry``: the process-wide one by default."""
    return (registry or get_registry()).load_class(name, "agent", Agent)  # type: ignore[type-abstract]  # the ABC checked against


def get_agent_config_cls(name: str, registry: PluginRegistry | None = None) -> type[AgentConfigBase]:
    """The :class:`AgentConfigBase` subclass of agent type ``name``, imported on first use."""
    return (registry or get_registry()).load_class(name, "config", AgentConfigBase)


_LEGACY_FORM = (
    "_from_config(config, model, credential, problem_name, verbose, image, thinking_preset, thinking_max_tokens)"
)
_warned_legacy: set[type] = set()


def takes_context(agent_cls: type[Agent]) -> bool:
    """Whether ``agent_cls._from_config`` has the current form ``(config, context)``; ``False`` for the
    former eight-argument form (a second parameter named ``model``, or more than two positional ones)."""
    try:
        parameters = list(inspect.signature(agent_cls._from_config).parameters.values())
    except (TypeError, ValueError):  # no signature to read: call it the current way
        return True
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) <= 2 and not (len(positional) == 2 and positional[1].name == "model")


def build_agent(agent_cls: type[Agent], config: AgentConfigBase, context: AgentContext) -> Agent:
    """``agent_cls._from_config(config, context)``, or the former eight-argument call for an agent
    written against it (one ``DeprecationWarning`` per class and process, naming the new form)."""
    agent = _build(agent_cls, config, context)
    agent.secrets.add(context.credential, *config_secrets(config))
    return agent


def config_secrets(config: AgentConfigBase) -> list[str]:
    """The secrets an agent config hands its agent: its MCP servers' ``env`` and ``headers`` values, ``${VAR}``
    read from this process's environment (a variable that is unset gives nothing: the agent's preflight says so)."""
    from agentrig.agents.mcp import McpConfigError, resolve_servers, server_secrets

    resolved = {}
    for name, server in (getattr(config, "mcp_servers", None) or {}).items():
        try:
            resolved.update(resolve_servers({name: server}, os.environ))
        except McpConfigError:
            resolved[name] = server
    return server_secrets(resolved)


def _build(agent_cls: type[Agent], config: AgentConfigBase, context: AgentContext) -> Agent:
    """The agent of :func:`build_agent`, as its class builds it."""
    if takes_context(agent_cls):
        return agent_cls._from_config(config, context)
    if agent_cls not in _warned_legacy:
        _warned_legacy.add(agent_cls)
        warnings.warn(
            f"agent class {agent_cls.__module__}.{agent_cls.__qualname__} implements {_LEGACY_FORM}, which is "
            "deprecated: implement _from_config(cls, config, context) and read the model, credential, problem_name, "
            "verbose, image, thinking_preset and thinking_max_tokens from context (an agentrig.AgentContext)",
            DeprecationWarning,
            stacklevel=3,
        )
    legacy: Any = agent_cls._from_config
    arguments = context.legacy_arguments()
    parameters = inspect.signature(legacy).parameters.values()
    if not any(p.kind is p.VAR_POSITIONAL for p in parameters):  # written before the thinking arguments existed
        arguments = arguments[: len([p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]) - 1]
    built: Agent = legacy(config, *arguments)
    return built


def _legacy_call_context(model: Any, *rest: Any) -> AgentContext:
    """The :class:`AgentContext` of a call ``Agent.from_config(config, model, credential, problem_name,
    verbose, image, thinking_preset=None, thinking_max_tokens=None)`` (deprecated: one warning per call site)."""
    warnings.warn(
        "Agent.from_config(config, model, credential, problem_name, verbose, image, ...) is deprecated: "
        "call Agent.from_config(config, agentrig.AgentContext(model=..., credential=..., problem_name=..., ...))",
        DeprecationWarning,
        stacklevel=3,
    )
    names = ("credential", "problem_name", "verbose", "image", "thinking_preset", "thinking_max_tokens")
    if len(rest) > len(names):
        raise TypeError(f"Agent.from_config() takes at most 8 positional arguments ({len(rest) + 2} given)")
    return AgentContext(model=model, **dict(zip(names, rest, strict=False)))  # the trailing ones are optional
