"""The interface a problem format implements: detect, load, evaluate, apply the reference solution.

A format is declared by a plugin::

    @agentrig.hookimpl
    def agentrig_problem_formats():
        return [agentrig.ProblemFormatSpec(name="mybench", loader="mybench_pkg.format:MyBenchFormat")]

``loader`` names a zero-argument factory (usually the class) of a
:class:`ProblemFormat`. The core calls, in this order:

1. :meth:`ProblemFormat.detect` on directories (cheaply: a few ``stat``
   calls, no parsing) to find problems of the format, also inside a dataset
   directory;
2. :meth:`ProblemFormat.load` to turn a detected directory into the core's
   :class:`~agentrig.problem.Problem` (a subclass of it may carry the
   format's own data); this runs again in the worker that runs the problem,
   so it must depend on the directory only;
3. per checkpoint, after the agent: :meth:`ProblemFormat.evaluate` with an
   :class:`EvaluationContext` (the session's runtime, the agent's workspace,
   where the raw report goes); most formats build a
   :class:`~agentrig.evaluation.engine.TestCommand` and hand it to
   :meth:`EvaluationContext.run_tests`, which runs it on a copy of the
   workspace. A format whose verifier works differently (Harbor: upload
   ``tests/`` into the container after the agent with
   ``context.runtime.upload``, run ``tests/test.sh``, read
   ``/logs/verifier/reward.txt`` with ``context.runtime.read_file``) runs its
   own commands and builds the record with :meth:`EvaluationContext.finish`;
4. for the ``oracle`` agent: :meth:`ProblemFormat.has_solution` and
   :meth:`ProblemFormat.apply_solution` (copy files into the workspace, or
   upload a script and run it in the runtime).

Around each checkpoint a format may also act (the defaults do nothing, so a
format that does not need them is unchanged): :meth:`ProblemFormat.prepare_checkpoint`
runs before the agent (a Harbor step's ``workdir/`` upload, ``setup.sh`` and
healthcheck), :meth:`ProblemFormat.stop_after` decides after the evaluation
whether the later checkpoints run (a Harbor step's ``min_reward``), and
:meth:`ProblemFormat.problem_score` gives the problem a score of its own from
its checkpoints' (a Harbor multi-step task's ``multi_step_reward_strategy``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from agentrig.evaluation.engine import DEFAULT_TEST_TIMEOUT, ReportSpec, TestCommand, finish, run_test_command
from agentrig.evaluation.policy import PassPolicy, PolicyError, deciding_policy
from agentrig.evaluation.records import EvaluationRecord, TestResult
from agentrig.problem import Checkpoint, Problem, ProblemError
from agentrig.readback import ReadbackLimits

if TYPE_CHECKING:
    from agentrig.run.records import CheckpointResultLine, ProblemScore
    from agentrig.runtime.images import RequiredImage
    from agentrig.runtime.interface import Runtime

__all__ = [
    "Checkpoint",
    "CheckpointSetupError",
    "CheckpointStop",
    "EvaluationContext",
    "EvaluationRecord",
    "PassPolicy",
    "Problem",
    "ProblemEnvironment",
    "ProblemError",
    "ProblemFormat",
    "ReportSpec",
    "SolutionError",
    "TestCommand",
    "TestResult",
]


class ProblemEnvironment(BaseModel):
    """Where a problem's session must run, when its format decides it (Harbor: the task's own image).

    ``image`` replaces the run's ``--image``; ``runtime_options`` are the
    runtime's options to use (the format merges the run's own into them);
    ``seed`` replaces the problem's ``workspace`` directory as the files the
    fresh workspace starts with; ``notices`` are one line each where the
    problem gets less than it asks for (a network it cannot have): the run
    shows them and records them with the problem; ``snapshot_ignore`` are
    paths relative to the workspace (POSIX, taken literally) that the
    checkpoints' snapshots leave out on top of the defaults, as the
    benchmark's own snapshots do (SlopCodeBench's static assets).
    """

    model_config = ConfigDict(extra="forbid")

    image: str | None = None
    runtime_options: dict[str, Any] = Field(default_factory=dict)
    seed: Path | None = None
    notices: list[str] = Field(default_factory=list)
    snapshot_ignore: list[str] = Field(default_factory=list)


class SolutionError(RuntimeError):
    """A reference solution is missing or could not be applied; one line naming what."""


class CheckpointSetupError(RuntimeError):
    """What a checkpoint needs before its agent could not be made (a Harbor step's ``setup.sh``
    failed, its healthcheck never passed); one line naming what. The checkpoint is recorded as an
    infrastructure failure without running the agent."""


@dataclass(frozen=True)
class CheckpointStop:
    """Why the checkpoints after one are not run: ``reason`` a short word recorded as their
    ``stop_reason`` (``min_reward``, ``no_reward``), ``message`` one line saying why."""

    reason: str
    message: str


@dataclass
class EvaluationContext:
    """What a format's :meth:`ProblemFormat.evaluate` works with.

    ``runtime`` is the session's runtime, where the agent ran (its
    ``workspace_copy``, ``upload``, ``read_file`` and ``exec`` are the tools);
    ``workspace`` the agent's workspace directory on the host (read it, never
    write it: the snapshot is taken after the evaluation); ``report_dir`` the
    directory beside ``evaluation.json`` for raw reports; ``timeout`` the
    run's default seconds for a test command (``--test-timeout``);
    ``session_timeout`` the run's cap on every test command, also on those that
    time each test (``--test-session-timeout``; ``None``: none); ``policy``
    the run's pass policy (``--pass-policy``), which wins over the format's;
    ``env`` variables added to test commands; ``allow_env`` the credential variables
    (``OPENAI_API_KEY``, ...) the user allows a task's own verifier to take from the host
    (``-c verifier.allow_env=[NAME,...]``): a format never expands any other credential.
    """

    runtime: Runtime
    workspace: Path
    report_dir: Path | None = None
    timeout: float = DEFAULT_TEST_TIMEOUT
    policy: PassPolicy | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    allow_env: frozenset[str] = frozenset()
    session_timeout: float | None = None
    readback: ReadbackLimits | None = None

    def run_tests(self, test: TestCommand) -> EvaluationRecord:
        """Run ``test`` on a copy of the workspace and return the structured record (never raises)."""
        if self.env:
            test.env = {**self.env, **test.env}
        return run_test_command(
            self.runtime, test, report_dir=self.report_dir, default_timeout=self.timeout, policy=self.policy,
            session_timeout=self.session_timeout,
        )

    def finish(
        self,
        record: EvaluationRecord,
        tests: Iterable[TestResult] = (),
        score: float | None = None,
        policy: PassPolicy | None = None,
    ) -> EvaluationRecord:
        """Fill in counts, groups, score and ``passed`` of a record a format built itself
        (a verifier run its own way, a reward read back); the run's policy wins over ``policy``."""
        return finish(record, list(tests), score, deciding_policy(self.policy, policy))


def parse_policy(text: str | None, where: str) -> PassPolicy | None:
    """``text`` as a :class:`PassPolicy` (``None`` stays ``None``); a bad one is a :class:`ProblemError` naming ``where``."""
    if text is None:
        return None
    try:
        return PassPolicy.parse(text)
    except PolicyError as exc:
        raise ProblemError(f"{where}: {exc}") from None


class ProblemFormat(ABC):
    """A problem format. Subclasses set ``name`` and implement :meth:`detect` and :meth:`load`.

    The defaults of the other methods serve formats written in the core's
    model: a checkpoint's ``test`` runs on a copy of the workspace with the
    problem's ``tests`` directory put into it, its ``report`` (if any) is
    parsed, and ``pass_policy`` decides; ``solution`` directories are the
    reference solutions.
    """

    name: ClassVar[str] = ""
    """The format's name (``--format NAME``); the spec's name wins when they differ."""

    #: Whether :meth:`prepare_environment` supplies each problem's container image (``--image`` then not needed).
    brings_image: ClassVar[bool] = False

    #: The files whose presence :meth:`detect` looks for, shown when no format recognises a directory.
    marker_files: ClassVar[tuple[str, ...]] = ()

    @abstractmethod
    def detect(self, path: Path) -> bool:
        """Whether the directory ``path`` is a problem of this format. Must be cheap
        (look for a file or two; parse nothing) and never raise."""

    @abstractmethod
    def load(self, path: Path) -> Problem:
        """Read the problem at ``path`` into the core's model (``format`` set to this
        format's name). Raise :class:`~agentrig.problem.ProblemError` with one line
        naming the file and the field to fix."""

    # -- the environment -----------------------------------------------------------------

    def prepare_environment(
        self, problem: Problem, runtime: str, options: dict[str, Any] | None, scratch: Path, *, rebuild: str | None = None
    ) -> ProblemEnvironment | None:
        """Called once before ``problem``'s session opens (in the worker, also for ``replay``):
        build what the problem runs in and say how to open the session. ``runtime`` is the
        run's runtime name, ``options`` its runtime options (``--image`` included), ``scratch``
        a directory for files the session needs (it lives as long as the session).
        ``rebuild`` (``agentrig run --rebuild``) is a token of that invocation: build images
        again, not from a cache, unless built under the same token already (a format written
        before it existed may leave the parameter out: it is only passed when set).
        ``None`` (the default): the run's own runtime, image and the problem's ``workspace``.
        Raise :class:`~agentrig.runtime.errors.RuntimeSetupError` (one line) when the problem
        cannot run in ``runtime``."""
        return None

    def session_image(self, problem: Problem) -> str | None:
        """The image ``problem``'s session runs in when the format brings it (a Harbor task's, built now if
        needed: the later :meth:`prepare_environment` finds it), for the checks before a run; ``None`` (the
        default): the run's ``--image``. Raise :class:`~agentrig.runtime.errors.RuntimeSetupError` (one line)."""
        return None

    def required_images(self, problem: Problem) -> list[RequiredImage]:
        """The container images ``problem`` needs present locally under a container runtime (a Harbor
        task's ``docker_image``, the bases its Dockerfiles build on), each with what names it;
        ``agentrig run`` checks them before anything is made (nothing is ever pulled). Must be cheap
        (read files; build nothing). Default: none."""
        return []

    def host_variables(self, problem: Problem) -> list[str]:
        """The host environment variables ``problem``'s own files ask to be given (a Harbor task's
        ``${VAR}`` in ``[verifier] env``); ``agentrig run`` names them once. Default: none."""
        return []

    def required_tools(self, problem: Problem, runtime: str) -> dict[str, str]:
        """The programs ``problem``'s evaluation runs under the runtime named ``runtime`` that must be
        on the ``PATH`` its commands get, each with what to do when it is missing
        (``{"uvx": "pip install uv"}``). ``agentrig run`` checks them before the first checkpoint and
        refuses in one line naming the fix (exit 2). Default: none."""
        return {}

    def agent_time_limit(self, problem: Problem, checkpoint: Checkpoint) -> float | None:
        """Wall-clock seconds the benchmark gives the agent on ``checkpoint`` (a Harbor task's
        ``[agent] timeout_sec``), or ``None`` (the default: no limit of the problem's own). The
        runner enforces it as the agent's ``cost_limits.time_limit`` when the agent config sets none."""
        return None

    # -- around each checkpoint -----------------------------------------------------------

    def prepare_checkpoint(self, problem: Problem, checkpoint: Checkpoint, runtime: Runtime, workspace: Path) -> None:
        """Called before the agent works on ``checkpoint`` (also the first one after a ``--resume``,
        in the session restored from the last finished checkpoint): put in place what the
        benchmark puts there before its agent (a Harbor step: its ``workdir/`` files, its
        ``setup.sh``, its healthcheck). Raise :class:`CheckpointSetupError` (one line) when it
        cannot: the checkpoint is then recorded as an infrastructure failure, its agent not run.
        Default: nothing."""
        return

    def stop_after(
        self, problem: Problem, checkpoint: Checkpoint, evaluation: EvaluationRecord, report_dir: Path | None
    ) -> CheckpointStop | None:
        """Whether the checkpoints after ``checkpoint`` are not run, given its ``evaluation`` (and
        the raw report under ``report_dir``): a :class:`CheckpointStop` (they are recorded as
        ``skipped`` with its reason, as checkpoints after a reached net cost limit are), or ``None``
        (the default: every checkpoint runs whatever the verdicts before it)."""
        return None

    def problem_score(self, problem: Problem, lines: list[CheckpointResultLine]) -> ProblemScore | None:
        """The problem's own score from its checkpoints' result ``lines`` (in order, skipped ones
        included), when the benchmark defines one (a Harbor multi-step task's reward by its
        ``multi_step_reward_strategy``); recorded as ``score`` of the problem in ``run.json`` and
        ``problem.json``. Default: ``None`` (the problem has no score beyond its checkpoints')."""
        return None

    # -- evaluation ------------------------------------------------------------------

    def test_command(self, problem: Problem, checkpoint: Checkpoint, context: EvaluationContext) -> TestCommand | None:
        """What to run to evaluate ``checkpoint`` (``None``: it has no test)."""
        if checkpoint.test is None:
            return None
        tests_dir = problem.path / problem.tests
        files = [(tests_dir, tests_dir.name)] if tests_dir.is_dir() else []
        report = ReportSpec.parse(checkpoint.report) if checkpoint.report else None
        policy = parse_policy(checkpoint.pass_policy or problem.pass_policy, f"{problem.path}: pass_policy")
        return TestCommand(
            command=checkpoint.test,
            files=files,
            report=report,
            timeout=checkpoint.timeout,
            policy=policy,
            infrastructure_exit_codes=frozenset({126, 127}),
        )

    def evaluate(self, problem: Problem, checkpoint: Checkpoint, context: EvaluationContext) -> EvaluationRecord:
        """Evaluate the agent's work on ``checkpoint``; never raises for a failing test
        or runtime (record it: ``infrastructure_failure`` and ``error``)."""
        test = self.test_command(problem, checkpoint, context)
        if test is None:
            return EvaluationRecord(command=None)
        return context.run_tests(test)

    def count_tests(self, problem: Problem, checkpoint: Checkpoint) -> int | None:
        """How many tests evaluate ``checkpoint``, if known without running them (``problems list``)."""
        return 1 if checkpoint.test is not None else 0

    # -- the reference solution (the oracle agent) --------------------------------------

    def has_solution(self, problem: Problem, checkpoint: Checkpoint) -> bool:
        """Whether ``checkpoint`` has a reference solution."""
        return checkpoint.solution is not None and (problem.path / checkpoint.solution).is_dir()

    def apply_solution(self, problem: Problem, checkpoint: Checkpoint, runtime: Runtime, workspace: Path) -> None:
        """Make the workspace hold the reference solution of ``checkpoint``; raises
        :class:`SolutionError` when there is none or it cannot be applied.

        The default copies the ``solution`` directory over the workspace
        (through ``runtime.upload``, so it works in any runtime).
        """
        if checkpoint.solution is None:
            raise SolutionError(f"problem '{problem.name}' checkpoint '{checkpoint.name}' has no reference solution")
        source = problem.path / checkpoint.solution
        if not source.is_dir():
            raise SolutionError(f"{source}: the reference solution of checkpoint '{checkpoint.name}' does not exist")
        runtime.upload(source, runtime.workdir)
