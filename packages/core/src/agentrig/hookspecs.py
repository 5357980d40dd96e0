"""The hook specifications of agentrig.

Construction hooks (``agentrig_agents``, ``agentrig_runtimes``,
``agentrig_stream_parsers``, ``agentrig_problem_formats``, ``agentrig_datasets``,
``agentrig_model_providers``) declare what a plugin provides, by import path;
they must be cheap and import nothing heavy. Lifecycle hooks observe an agent
while it runs; their return values are ignored.

The lifecycle hooks receive the running :class:`agentrig.Agent` and its
session. Their specs name them by the protocols :class:`ObservedAgent` and
:class:`ObservedSession` (what an observer may rely on), not by the classes:
the registry loads these specs, and the agent machinery uses the registry, so
the specs stay below it in the import graph.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from agentrig.markers import hookspec

if TYPE_CHECKING:
    from agentrig.agents.result import CheckpointInferenceResult
    from agentrig.cli.plugin_commands import PluginCommands
    from agentrig.problem import Checkpoint, Problem
    from agentrig.runtime.interface import Runtime
    from agentrig.specs import (
        AgentSpec,
        DatasetSpec,
        ExecutorSpec,
        MetricSpec,
        ModelProviderSpec,
        ProblemFormatSpec,
        RuntimeSpec,
        StreamParserSpec,
    )
    from agentrig.trajectory import TrajectoryStep
    from agentrig.usage import UsageTracker
    from agentrig.workspace import Workspace


@runtime_checkable
class ObservedAgent(Protocol):
    """What a lifecycle hook may rely on of the agent it is given (an :class:`agentrig.Agent`)."""

    @property
    def agent_name(self) -> str:
        """The agent type (``react``, ``oracle``, ...)."""

    @property
    def problem_name(self) -> str:
        """The problem run it works on (``hello``, ``hello/attempt_2``; ``<problem>/<tool>`` for a subagent)."""

    @property
    def usage(self) -> UsageTracker:
        """Cost, steps and tokens of the current checkpoint so far."""

    @property
    def prior_cost(self) -> float:
        """What the problem's earlier checkpoints cost."""

    @property
    def stop_reason(self) -> str | None:
        """Why the agent stopped, once it knows (``submitted``, ``step_limit``, ...)."""

    @property
    def parent_agent(self) -> ObservedAgent | None:
        """The agent running this one as a tool (a subagent), or ``None``."""


@runtime_checkable
class ObservedSession(Protocol):
    """What a lifecycle hook may rely on of the session it is given (an ``agentrig.agents.session.Session``)."""

    @property
    def workspace(self) -> Workspace:
        """The workspace; ``workspace.path`` is its directory on the host."""

    @property
    def runtime(self) -> Runtime:
        """Where the agent's commands run."""

    @property
    def home(self) -> Path:
        """The isolated home directory every command sees, on the host."""

    @property
    def problem(self) -> Problem | None:
        """The problem being run, ``None`` outside a run."""

    @property
    def checkpoint(self) -> Checkpoint | None:
        """The checkpoint being worked on (set before each ``run_checkpoint``), ``None`` before the first."""


@hookspec
def agentrig_agents() -> list[AgentSpec]:
    """Declare the agent types this plugin provides.

    Called once when plugins are discovered (``agentrig agents list``, and
    before any run). Return a list of :class:`agentrig.AgentSpec`; name the
    config and agent classes by import path, do not import them here.
    """


@hookspec
def agentrig_runtimes() -> list[RuntimeSpec]:
    """Declare the runtimes (where commands run) this plugin provides.

    Called once when runtimes are resolved. Return a list of
    :class:`agentrig.RuntimeSpec`; the core declares ``local`` and ``docker``
    through this same hook.
    """


@hookspec
def agentrig_stream_parsers() -> list[StreamParserSpec]:
    """Declare parsers of agent output streams this plugin provides.

    Called once when a parser is looked up by name. Return a list of
    :class:`agentrig.StreamParserSpec`.
    """


@hookspec
def agentrig_executors() -> list[ExecutorSpec]:
    """Declare the executors (where problem jobs run) this plugin provides.

    Called once when ``agentrig run`` resolves ``--executor``. Return a list of
    :class:`agentrig.ExecutorSpec` naming each ``Executor`` class by import
    path; the core declares ``local`` (its process pool) through this same hook.
    """


@hookspec
def agentrig_problem_formats() -> list[ProblemFormatSpec]:
    """Declare the problem formats this plugin provides.

    Called once when problems are detected or loaded (``agentrig run``,
    ``agentrig problems list``). Return a list of
    :class:`agentrig.ProblemFormatSpec`; the loader (an
    :class:`agentrig.formats.interface.ProblemFormat`) is named by import path
    and imported only when a problem directory is examined. The core declares
    ``agentrig`` (``problem.yaml``) and ``slopcode`` through this same hook.
    """


@hookspec
def agentrig_datasets() -> list[DatasetSpec]:
    """Declare the datasets (directories of problems) this plugin ships.

    Called once when datasets are listed or a ``dataset:NAME[@VERSION]`` is run
    (``agentrig datasets list``, ``agentrig run dataset:NAME``). Return a list of
    :class:`agentrig.DatasetSpec`; the directory is named as
    ``"package:relative/dir"`` and found without importing the package. The
    core ships its ``starter`` dataset through this same hook.
    """


@hookspec
def agentrig_model_providers() -> list[ModelProviderSpec]:
    """Declare the model providers (how a ``--model PROVIDER/NAME`` is reached) this plugin provides.

    Called once when a model client is made or a provider's credential variables are looked
    up. Return a list of :class:`agentrig.ModelProviderSpec` naming each client factory by
    import path, with its credential and endpoint variables. The core declares ``openai``
    (which also serves every provider nobody declares, as an OpenAI-compatible server),
    ``anthropic`` and ``replay`` through this same hook.
    """


@hookspec
def agentrig_metrics() -> list[MetricSpec]:
    """Declare the code-quality metrics this plugin computes from a checkpoint's snapshot.

    Called once when metrics are listed or computed (``-c metrics=[...]`` on a run, ``agentrig
    evaluate --metrics``). Return a list of :class:`agentrig.MetricSpec` naming each metric's
    implementation by import path (a :class:`agentrig.metrics.interface.Metric`), with the
    languages it reads. Import no analysis tool here: the core declares its ``size``, ``lint``
    (ruff), ``complexity`` (radon), ``patterns`` (ast-grep), ``waste``, ``duplication`` and ``slopcode``
    metrics through this same hook and imports or runs the tools only when a metric is computed.
    """


@hookspec
def agentrig_commands(commands: PluginCommands) -> None:
    """Add sub-commands to ``agentrig`` with ``commands.add(name, help=..., handler=...)``.

    Called once when the command line is built for a command that is not the core's own
    (and for ``agentrig --help``), so a plugin's command never slows or breaks ``agentrig
    run``. Import nothing heavy here: do the work in the handler. A name already taken (by
    the core or another plugin) is refused and reported on the plugin.
    """


@hookspec
def agentrig_agent_setup(agent: ObservedAgent, session: ObservedSession) -> None:
    """Called right after ``agent.setup(session)`` succeeded, once per problem."""


@hookspec
def agentrig_checkpoint_start(agent: ObservedAgent, checkpoint: Checkpoint) -> None:
    """Called before the agent runs ``checkpoint`` (a :class:`agentrig.problem.Checkpoint`)."""


@hookspec
def agentrig_step(agent: ObservedAgent, step: TrajectoryStep) -> None:
    """Called once per trajectory step, as the agent produces it."""


@hookspec
def agentrig_subagent_step(parent: ObservedAgent, agent: ObservedAgent, step: TrajectoryStep) -> None:
    """Called once per trajectory step of a subagent (an agent ``parent`` runs as a tool), as it happens.

    These steps never reach ``agentrig_step``: an observer sees them only by
    implementing this hook. ``agent.parent_agent`` is ``parent``.
    """


@hookspec
def agentrig_checkpoint_end(agent: ObservedAgent, checkpoint: Checkpoint, result: CheckpointInferenceResult) -> None:
    """Called after the agent ran ``checkpoint``, with its :class:`agentrig.CheckpointInferenceResult`."""


@hookspec
def agentrig_agent_cleanup(agent: ObservedAgent) -> None:
    """Called after ``agent.cleanup()``, once per problem, even when cleanup failed."""
