"""A Harbor task (or a Terminal-Bench ``task.yaml`` task) in the core's problem model.

A task is a one-checkpoint problem named after its directory. Harbor's layout::

    task.toml            [agent] / [verifier] / [solution] / [environment]
    instruction.md       the task text
    environment/         build context; environment/Dockerfile (or [environment] docker_image)
    tests/test.sh        uploaded to /tests after the agent; writes /logs/verifier/reward.txt or reward.json
    solution/solve.sh    the reference solution (the oracle uploads solution/ to /solution and runs it)

Terminal-Bench's older layout keeps the instruction in ``task.yaml``, the
Dockerfile at the top (the whole directory is the build context),
``run-tests.sh`` beside ``tests/`` (both uploaded to ``/tests``; exit 0 =
every test passed) and ``solution.sh`` (or ``solution.yaml``, a list of
commands). Both are turned into one :class:`HarborTask`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import Field

from agentrig.formats.harbor.config import (
    TASK_TOML,
    TASK_YAML,
    AgentSection,
    EnvironmentSection,
    HarborTaskConfig,
    SolutionSection,
    TaskConfigError,
    VerifierSection,
    read_task_toml,
    read_task_yaml,
)
from agentrig.boundary import NAME_MAX_LENGTH, BoundaryError, check_tree, is_safe_name, resolve_inside
from agentrig.problem import Checkpoint, Problem, ProblemError

CHECKPOINT = "task"
INSTRUCTION = "instruction.md"
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.-]+")


class HarborTask(Problem):
    """A Harbor or Terminal-Bench task: the core's one-checkpoint problem and what its format needs."""

    kind: Literal["harbor", "terminal-bench"] = "harbor"
    config: HarborTaskConfig = Field(default_factory=HarborTaskConfig)
    instruction: str | None = Field(default=None, description="The task text when it lives in task.yaml.")
    build_context: str | None = Field(default=None, description="Build context directory, relative to the task.")
    dockerfile: str | None = Field(default=None, description="The Dockerfile, relative to the task.")
    test_script: str = Field(description="The verifier script, relative to the task (uploaded into /tests).")
    test_files: list[str] = Field(default_factory=list, description="What goes to /tests, relative to the task.")
    solution_script: str | None = Field(default=None, description="The reference solution script, relative to the task.")
    solution_dir: str | None = Field(default=None, description="Directory uploaded to /solution for the oracle.")

    def prompt_text(self, checkpoint: Checkpoint) -> str:
        """The instruction: ``instruction.md``, or ``task.yaml``'s ``instruction``."""
        if self.instruction is not None:
            return self.instruction
        return super().prompt_text(checkpoint)


def task_name(path: Path) -> str:
    """The problem name of the task at ``path``: its directory's name made a valid name
    (:func:`agentrig.boundary.is_safe_name`): other characters become ``-``, dots only between
    other characters, at most :data:`~agentrig.boundary.NAME_MAX_LENGTH` characters; ``task`` when nothing is left."""
    text = _NAME_CHARS.sub("-", path.name)
    text = ".".join(part for part in text.split(".") if part.strip("-"))
    text = text.strip("-")[:NAME_MAX_LENGTH].rstrip(".-")
    return text if is_safe_name(text) else "task"


def _inside(root: Path, relative: str, what: str, *, tree: bool = False) -> Path:
    """``relative`` under the task ``root``, which it (and, for a ``tree``, every link below it)
    must not leave; :class:`ProblemError` naming the file and what it is otherwise."""
    try:
        return (check_tree if tree else resolve_inside)(root, relative, f"{root / relative}: {what}")
    except BoundaryError as exc:
        raise ProblemError(str(exc)) from None


def _require(path: Path, what: str) -> None:
    if not path.is_file():
        raise ProblemError(f"{path}: missing ({what})")


def _config_error(exc: TaskConfigError) -> ProblemError:
    return ProblemError(str(exc))


def load_harbor_task(path: Path) -> HarborTask:
    """Read the Harbor task at ``path``; raises :class:`ProblemError` naming the file (and field) to fix."""
    path = path.resolve()
    _inside(path, TASK_TOML, "the task's configuration")
    try:
        config = read_task_toml(path / TASK_TOML)
    except TaskConfigError as exc:
        raise _config_error(exc) from None
    _inside(path, INSTRUCTION, "the task's instruction")
    _require(path / INSTRUCTION, "the task's instruction")
    for directory, what in (("environment", "the build context"), ("tests", "the verifier"), ("solution", "the solution")):
        _inside(path, directory, what, tree=True)
    dockerfile = path / "environment" / "Dockerfile"
    if config.environment.docker_image is None and not dockerfile.is_file():
        raise ProblemError(f"{dockerfile}: missing (the task's image; or set [environment] docker_image in {path / TASK_TOML})")
    _require(path / "tests" / "test.sh", "the verifier: it writes /logs/verifier/reward.txt or reward.json")
    solve = path / "solution" / "solve.sh"
    return HarborTask(
        name=task_name(path),
        kind="harbor",
        config=config,
        checkpoints=[
            Checkpoint(name=CHECKPOINT, prompt=INSTRUCTION, test="bash /tests/test.sh", timeout=config.verifier.timeout_sec)
        ],
        tests="tests",
        path=path,
        format="harbor",
        build_context="environment" if dockerfile.is_file() else None,
        dockerfile="environment/Dockerfile" if dockerfile.is_file() else None,
        test_script="tests/test.sh",
        test_files=["tests"],
        solution_script="solution/solve.sh" if solve.is_file() else None,
        solution_dir="solution" if solve.is_file() else None,
    )


def load_terminal_bench_task(path: Path) -> HarborTask:
    """Read the Terminal-Bench task at ``path`` (``task.yaml``); raises :class:`ProblemError` naming the file."""
    path = path.resolve()
    _inside(path, TASK_YAML, "the task's configuration")
    try:
        tb = read_task_yaml(path / TASK_YAML)
    except TaskConfigError as exc:
        raise _config_error(exc) from None
    _inside(path, ".", "the task directory (its build context)", tree=True)
    dockerfile = path / "Dockerfile"
    _require(dockerfile, "the task's image; docker-compose setups without a top-level Dockerfile are not supported")
    _require(path / "run-tests.sh", "the test runner, uploaded to /tests with tests/")
    solution = next((p for p in (path / "solution.sh", path / "solution.yaml") if p.is_file()), None)
    config = HarborTaskConfig(
        metadata={"difficulty": tb.difficulty, "category": tb.category, "tags": tb.tags, "parser_name": tb.parser_name},
        verifier=VerifierSection(timeout_sec=tb.max_test_timeout_sec),
        agent=AgentSection(timeout_sec=tb.max_agent_timeout_sec),
        solution=SolutionSection(),
        environment=EnvironmentSection(),
    )
    return HarborTask(
        name=task_name(path),
        kind="terminal-bench",
        config=config,
        instruction=tb.instruction,
        checkpoints=[
            Checkpoint(name=CHECKPOINT, prompt=TASK_YAML, test="bash /tests/run-tests.sh", timeout=tb.max_test_timeout_sec)
        ],
        tests="tests",
        path=path,
        format="terminal-bench",
        build_context=".",
        dockerfile="Dockerfile",
        test_script="run-tests.sh",
        test_files=["tests", "run-tests.sh"],
        solution_script=solution.name if solution is not None else None,
    )
