"""The ``harbor`` and ``terminal-bench`` problem formats, declared by the core's plugin."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from agentrig.formats.harbor.task import HarborTask, load_harbor_task, load_terminal_bench_task
from agentrig.formats.interface import EvaluationContext, ProblemEnvironment, ProblemFormat, SolutionError
from agentrig.problem import Checkpoint, Problem, ProblemError

if TYPE_CHECKING:
    from agentrig.evaluation.records import EvaluationRecord
    from agentrig.formats.interface import CheckpointStop
    from agentrig.run.records import CheckpointResultLine, ProblemScore
    from agentrig.runtime.images import RequiredImage
    from agentrig.runtime.interface import Runtime


def _task(problem: Problem) -> HarborTask:
    if not isinstance(problem, HarborTask):
        raise ProblemError(f"problem '{problem.name}' is not a Harbor task")
    return problem


class HarborFormat(ProblemFormat):
    """Harbor tasks: ``task.toml``, ``instruction.md``, ``environment/``, ``tests/test.sh``, ``solution/solve.sh``;
    a multi-step task (``[[steps]]``) has one checkpoint per step (:mod:`agentrig.formats.harbor.steps`)."""

    name: ClassVar[str] = "harbor"
    marker_files: ClassVar[tuple[str, ...]] = ("task.toml",)
    brings_image: ClassVar[bool] = True

    def detect(self, path: Path) -> bool:
        """A directory holding ``task.toml``."""
        return (path / "task.toml").is_file()

    def load(self, path: Path) -> Problem:
        """The task as a problem: one checkpoint, or one per step of a multi-step task; raises
        :class:`ProblemError` naming the file and field."""
        return load_harbor_task(path)

    def evaluate(self, problem: Problem, checkpoint: Checkpoint, context: EvaluationContext) -> EvaluationRecord:
        """Upload ``tests/`` (a step's: the task's and its own, merged) into the container, run the verifier
        (on the verifier phase's network), read the reward back."""
        from agentrig.formats.harbor.network import verifier_phase
        from agentrig.formats.harbor.verifier import run_verifier

        with verifier_phase(context.runtime):
            return run_verifier(
                _task(problem), context.runtime, report_dir=context.report_dir, policy=context.policy,
                allow_env=context.allow_env, checkpoint=checkpoint, readback=context.readback,
            )

    def prepare_checkpoint(self, problem: Problem, checkpoint: Checkpoint, runtime: Runtime, workspace: Path) -> None:
        """A step of a multi-step task: its ``workdir/`` and ``setup.sh``, its healthcheck (nothing for a one-step task)."""
        from agentrig.formats.harbor.steps import prepare_step

        prepare_step(_task(problem), checkpoint, runtime)

    def stop_after(
        self, problem: Problem, checkpoint: Checkpoint, evaluation: EvaluationRecord, report_dir: Path | None
    ) -> CheckpointStop | None:
        """A step without a reward, or below its ``min_reward``, stops the later steps."""
        from agentrig.formats.harbor.steps import stop_after_step

        return stop_after_step(_task(problem), checkpoint, evaluation, report_dir)

    def problem_score(self, problem: Problem, lines: list[CheckpointResultLine]) -> ProblemScore | None:
        """A multi-step task's reward by its ``multi_step_reward_strategy``."""
        from agentrig.formats.harbor.steps import task_score

        return task_score(_task(problem), lines)

    def host_variables(self, problem: Problem) -> list[str]:
        """The host variables the task's ``[verifier]`` (and its steps'), and ``[solution] env`` name (``${VAR}``)."""
        from agentrig.formats.harbor.config import host_variables

        config = _task(problem).config
        steps = [name for step in config.steps or [] for name in host_variables(step.verifier.env)]
        return sorted({*host_variables(config.verifier.env), *host_variables(config.solution.env), *steps})

    def count_tests(self, problem: Problem, checkpoint: Checkpoint) -> int | None:
        """One verifier script per task."""
        return 1

    def has_solution(self, problem: Problem, checkpoint: Checkpoint) -> bool:
        """Whether the task (or the checkpoint's step) ships its reference solution script."""
        return _task(problem).solution_for(checkpoint) is not None

    def apply_solution(self, problem: Problem, checkpoint: Checkpoint, runtime: Runtime, workspace: Path) -> None:
        """Upload the solution to ``/solution`` and run it from the working directory, as Harbor's oracle does."""
        from agentrig.formats.harbor.verifier import HarborRuntimeError, run_solution

        task = _task(problem)
        solution = task.solution_for(checkpoint)
        if solution is None:
            step = task.step(checkpoint)
            if step is not None and (task.path / task.step_dir(step) / "solution").is_dir():
                expected = f"{task.step_dir(step)}/solution/solve.sh"
            else:
                expected = "solution/solve.sh" if task.kind == "harbor" else "solution.sh or solution.yaml"
            raise SolutionError(f"{task.path / expected}: missing: task '{task.name}' has no reference solution")
        try:
            code, output = run_solution(task, runtime, checkpoint=checkpoint)
        except HarborRuntimeError as exc:
            raise SolutionError(str(exc)) from None
        if code != 0:
            last = " ".join(output.split())[-300:]
            why = "timed out" if code is None else f"exited with {code}"
            raise SolutionError(f"{solution[1]} of task '{task.name}' {why}" + (f": {last}" if last else ""))

    def agent_time_limit(self, problem: Problem, checkpoint: Checkpoint) -> float | None:
        """The task's ``[agent] timeout_sec`` (a step's ``[steps.agent] timeout_sec``; Terminal-Bench: ``max_agent_timeout_sec``)."""
        return _task(problem).agent_timeout(checkpoint)

    def required_images(self, problem: Problem) -> list[RequiredImage]:
        """The task's ``docker_image``, or its Dockerfile's base images, and its compose services' images."""
        from agentrig.formats.harbor.required import required_images

        return required_images(_task(problem))

    def session_image(self, problem: Problem) -> str | None:
        """The task's image (its main container's), built now unless an identical one exists."""
        from agentrig.formats.harbor.environment import task_image

        return task_image(_task(problem))

    def prepare_environment(
        self, problem: Problem, runtime: str, options: dict[str, Any] | None, scratch: Path, *, rebuild: str | None = None
    ) -> ProblemEnvironment | None:
        """The task's image (built once; again with ``rebuild``), working directory, limits, networks and starting files."""
        from agentrig.formats.harbor.environment import prepare_environment

        prepared = prepare_environment(_task(problem), runtime, options, scratch, rebuild=rebuild)
        return ProblemEnvironment(
            image=prepared.image, runtime_options=prepared.runtime_options, seed=prepared.seed, notices=prepared.notices
        )


class TerminalBenchFormat(HarborFormat):
    """Terminal-Bench's older tasks: ``task.yaml`` (with the instruction), ``Dockerfile``, ``run-tests.sh``, ``tests/``, ``solution.sh``."""

    name: ClassVar[str] = "terminal-bench"
    marker_files: ClassVar[tuple[str, ...]] = ("task.yaml",)

    def detect(self, path: Path) -> bool:
        """A directory holding ``task.yaml``."""
        return (path / "task.yaml").is_file()

    def load(self, path: Path) -> Problem:
        """The task as a one-checkpoint problem; raises :class:`ProblemError` naming the file and field."""
        return load_terminal_bench_task(path)
