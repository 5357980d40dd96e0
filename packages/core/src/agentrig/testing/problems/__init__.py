"""Sample problems shipped with agentrig, for tests and demos.

Each sample is an ordinary problem directory (``problem.yaml``, prompts, an
optional ``files/`` workspace) plus a ``sample.yaml`` that is not part of the
problem format: for every checkpoint, a ``marker`` (a phrase found in its
prompt and in no other checkpoint's) and a ``solution`` (shell commands that
solve it). Scripted agents and scripted models follow the solutions; the
conformance suite uses the markers to see which prompts reached the model.

Samples:

- ``hello``: one checkpoint, empty workspace, needs only ``sh`` and ``grep``.
- ``greetings``: two checkpoints over one workspace (the conformance default).
- ``python_fix``: a one-line Python bug fix; needs ``python3`` where commands run.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentrig.problem import Checkpoint, Problem

#: The directory holding the sample problems (installed as package data).
SAMPLE_PROBLEMS_DIR = Path(__file__).resolve().parent

SAMPLE_FILE = "sample.yaml"


class SampleError(ValueError):
    """A sample problem is missing or its ``sample.yaml`` does not match its ``problem.yaml``."""


class SampleCheckpoint(BaseModel):
    """How a scripted agent solves one checkpoint of a sample problem."""

    model_config = ConfigDict(extra="forbid")

    marker: str = Field(min_length=1, description="A phrase of this checkpoint's prompt found in no other prompt.")
    solution: list[str] = Field(min_length=1, description="Shell commands, run in order in the workspace.")


class _SampleFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    checkpoints: dict[str, SampleCheckpoint]


class SampleProblem(BaseModel):
    """A sample problem: the problem itself and how each checkpoint is solved."""

    model_config = ConfigDict(extra="forbid")

    problem: Problem
    checkpoints: dict[str, SampleCheckpoint]

    @property
    def name(self) -> str:
        """The problem's name."""
        return self.problem.name

    @property
    def path(self) -> Path:
        """The problem directory."""
        return self.problem.path

    def solution(self, checkpoint: Checkpoint | str) -> list[str]:
        """The shell commands that solve ``checkpoint``."""
        return list(self.checkpoints[_name(checkpoint)].solution)

    def marker(self, checkpoint: Checkpoint | str) -> str:
        """A phrase found in ``checkpoint``'s prompt and in no other checkpoint's."""
        return self.checkpoints[_name(checkpoint)].marker


def _name(checkpoint: Checkpoint | str) -> str:
    return checkpoint if isinstance(checkpoint, str) else checkpoint.name


def sample_problem_names() -> list[str]:
    """The names of the shipped sample problems, sorted."""
    return sorted(p.parent.name for p in SAMPLE_PROBLEMS_DIR.glob(f"*/{SAMPLE_FILE}"))


def sample_problem_path(name: str) -> Path:
    """The directory of sample problem ``name`` (pass it to ``agentrig run``)."""
    path = SAMPLE_PROBLEMS_DIR / name
    if not (path / SAMPLE_FILE).is_file():
        raise SampleError(f"no sample problem named '{name}' (available: {', '.join(sample_problem_names())})")
    return path


def load_sample_problem(name: str) -> SampleProblem:
    """Load sample problem ``name`` with its solutions; checks that both files agree."""
    from agentrig.run.problems import load_problem
    from agentrig.yaml_loader import YamlError, load_yaml

    path = sample_problem_path(name)
    problem = load_problem(path)
    file = path / SAMPLE_FILE
    try:
        sample = _SampleFile.model_validate(load_yaml(file.read_text(encoding="utf-8"), str(file)))
    except YamlError as exc:
        raise SampleError(str(exc)) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise SampleError(f"{file}: {where}: {first['msg']}") from None
    names = [c.name for c in problem.checkpoints]
    if sorted(names) != sorted(sample.checkpoints):
        raise SampleError(f"{file}: checkpoints {sorted(sample.checkpoints)} do not match problem.yaml's {names}")
    for checkpoint in problem.checkpoints:
        marker = sample.checkpoints[checkpoint.name].marker
        holders = [c.name for c in problem.checkpoints if marker in problem.prompt_text(c)]
        if holders != [checkpoint.name]:
            raise SampleError(
                f"{file}: checkpoints.{checkpoint.name}.marker must appear in that checkpoint's prompt only"
                f" (found in: {holders or 'none'})"
            )
    return SampleProblem(problem=problem, checkpoints=sample.checkpoints)
