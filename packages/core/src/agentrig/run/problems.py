"""Loading ``problem.yaml`` into a :class:`~agentrig.problem.Problem`, with errors
that name the file and the field to fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from agentrig.problem import Checkpoint, Problem

PROBLEM_FILE = "problem.yaml"


class ProblemError(ValueError):
    """A problem directory or its ``problem.yaml`` is invalid; the message names file and field."""


def _field_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _expected_fields(model: type[BaseModel]) -> str:
    return ", ".join(name for name, field in model.model_fields.items() if not field.exclude)


def describe_validation_error(exc: ValidationError, model: type[BaseModel]) -> str:
    """The first error of ``exc`` as ``field: what is wrong`` on one line."""
    first = exc.errors()[0]
    loc = tuple(first["loc"])
    where = _field_path(loc)
    if first["type"] == "extra_forbidden":
        owner: type[BaseModel] = Checkpoint if loc and loc[0] == "checkpoints" else model
        message = f"unknown field '{loc[-1]}' (expected one of: {_expected_fields(owner)})"
        where = _field_path(loc[:-1]) if len(loc) > 1 else "(top level)"
        return f"{where}: {message}"
    more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
    return f"{where}: {first['msg']}{more}"


def load_problem(path: str | Path) -> Problem:
    """Read and check the problem at ``path`` (its directory or its ``problem.yaml``).

    Checks that prompt files and the workspace directory exist and that
    checkpoint names are unique. Raises :class:`ProblemError`.
    """
    import yaml

    path = Path(path)
    if path.is_file() and path.name in (PROBLEM_FILE, "problem.yml"):
        directory, file = path.parent, path
    else:
        directory, file = path, path / PROBLEM_FILE
    if not directory.exists():
        raise ProblemError(f"problem directory '{directory}' does not exist")
    if not directory.is_dir():
        raise ProblemError(f"'{directory}' is not a problem directory (expected a directory with {PROBLEM_FILE})")
    if not file.is_file():
        raise ProblemError(f"{file}: not found (a problem is a directory holding {PROBLEM_FILE})")
    try:
        data: Any = yaml.safe_load(file.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        reason = getattr(exc, "problem", None) or str(exc)
        raise ProblemError(f"{file}: invalid YAML{at}: {reason}") from None
    except UnicodeDecodeError:
        raise ProblemError(f"{file}: not UTF-8 text") from None
    if not isinstance(data, dict):
        raise ProblemError(f"{file}: expected a mapping with 'name' and 'checkpoints', got {type(data).__name__}")
    if "path" in data:
        raise ProblemError(f"{file}: (top level): unknown field 'path' (expected one of: {_expected_fields(Problem)})")
    try:
        problem = Problem.model_validate({**data, "path": directory.resolve()})
    except ValidationError as exc:
        raise ProblemError(f"{file}: {describe_validation_error(exc, Problem)}") from None
    _check_files(problem, file)
    return problem


def _check_files(problem: Problem, file: Path) -> None:
    seen: set[str] = set()
    for index, checkpoint in enumerate(problem.checkpoints):
        if checkpoint.name in seen:
            raise ProblemError(f"{file}: checkpoints[{index}].name: duplicate checkpoint name '{checkpoint.name}'")
        seen.add(checkpoint.name)
        prompt = problem.path / checkpoint.prompt
        if not prompt.is_file():
            raise ProblemError(f"{file}: checkpoints[{index}].prompt: file '{checkpoint.prompt}' does not exist")
        if checkpoint.test is not None and not checkpoint.test.strip():
            raise ProblemError(f"{file}: checkpoints[{index}].test: empty command (remove the field for no test)")
    if problem.workspace is not None and not (problem.path / problem.workspace).is_dir():
        raise ProblemError(f"{file}: workspace: directory '{problem.workspace}' does not exist")


def load_problems(paths: list[str | Path]) -> list[Problem]:
    """Load every problem; two problems with the same name are an error (they share an output folder)."""
    problems = [load_problem(p) for p in paths]
    names: dict[str, Path] = {}
    for problem in problems:
        if problem.name in names:
            raise ProblemError(
                f"two problems are named '{problem.name}' ({names[problem.name]} and {problem.path}):"
                " names must be unique within a run"
            )
        names[problem.name] = problem.path
    return problems
