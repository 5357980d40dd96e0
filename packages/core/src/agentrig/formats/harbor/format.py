"""The ``harbor`` and ``terminal-bench`` problem formats, declared by the core's plugin."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from agentrig.formats.interface import EvaluationContext, ProblemEnvironment, ProblemFormat, SolutionError
from agentrig.formats.harbor.task import HarborTask, load_harbor_task, load_terminal_bench_task
from agentrig.problem import Checkpoint, Problem, ProblemError

if TYPE_CHECKING:
    from agentrig.evaluation.records import EvaluationRecord
    from agentrig.runtime.interface import Runtime


def _task(problem: Problem) -> HarborTask:
    if not isinstance(problem, HarborTask):
        raise ProblemError(f"problem '{problem.name}' is not a Harbor task")
    return problem


class HarborFormat(ProblemFormat):
    """Harbor tasks: ``task.toml``, ``instruction.md``, ``environment/``, ``tests/test.sh``, ``solution/solve.sh``."""

    name: ClassVar[str] = "harbor"
    marker_files: ClassVar[tuple[str, ...]] = ("task.toml",)
    brings_image: ClassVar[bool] = True

    def detect(self, path: Path) -> bool:
        """A directory holding ``task.toml``."""
        return (path / "task.toml").is_file()

    def load(self, path: Path) -> Problem:
        """The task as a one-checkpoint problem; raises :class:`ProblemError` naming the file and field."""
        return load_harbor_task(path)

    def evaluate(self, problem: Problem, checkpoint: Checkpoint, context: EvaluationContext) -> EvaluationRecord:
        """Upload ``tests/`` into the container, run the verifier, read the reward back."""
        from agentrig.formats.harbor.verifier import run_verifier

        return run_verifier(
            _task(problem), context.runtime, report_dir=context.report_dir, policy=context.policy, allow_env=context.allow_env
        )

    def host_variables(self, problem: Problem) -> list[str]:
        """The host variables the task's ``[verifier]`` and ``[solution] env`` name (``${VAR}``)."""
        from agentrig.formats.harbor.config import host_variables

        config = _task(problem).config
        return sorted({*host_variables(config.verifier.env), *host_variables(config.solution.env)})

    def count_tests(self, problem: Problem, checkpoint: Checkpoint) -> int | None:
        """One verifier script per task."""
        return 1

    def has_solution(self, problem: Problem, checkpoint: Checkpoint) -> bool:
        """Whether the task ships its reference solution script."""
        return _task(problem).solution_script is not None

    def apply_solution(self, problem: Problem, checkpoint: Checkpoint, runtime: Runtime, workspace: Path) -> None:
        """Upload the solution to ``/solution`` and run it from the working directory, as Harbor's oracle does."""
        from agentrig.formats.harbor.verifier import HarborRuntimeError, run_solution

        task = _task(problem)
        if task.solution_script is None:
            expected = "solution/solve.sh" if task.kind == "harbor" else "solution.sh or solution.yaml"
            raise SolutionError(f"{task.path / expected}: missing: task '{task.name}' has no reference solution")
        try:
            code, output = run_solution(task, runtime)
        except HarborRuntimeError as exc:
            raise SolutionError(str(exc)) from None
        if code != 0:
            last = " ".join(output.split())[-300:]
            why = "timed out" if code is None else f"exited with {code}"
            raise SolutionError(f"{task.solution_script} of task '{task.name}' {why}" + (f": {last}" if last else ""))

    def agent_time_limit(self, problem: Problem, checkpoint: Checkpoint) -> float | None:
        """The task's ``[agent] timeout_sec`` (Terminal-Bench: ``max_agent_timeout_sec``)."""
        return _task(problem).config.agent.timeout_sec

    def prepare_environment(
        self, problem: Problem, runtime: str, options: dict[str, Any] | None, scratch: Path
    ) -> ProblemEnvironment | None:
        """The task's image (built once), working directory, limits and starting files."""
        from agentrig.formats.harbor.environment import prepare_environment

        prepared = prepare_environment(_task(problem), runtime, options, scratch)
        return ProblemEnvironment(image=prepared.image, runtime_options=prepared.runtime_options, seed=prepared.seed)


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
