"""The ``agentrig`` format: a directory holding ``problem.yaml`` (see :class:`agentrig.problem.Problem`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from agentrig.formats.interface import ProblemFormat, parse_policy
from agentrig.problem import Checkpoint, Problem, ProblemError

PROBLEM_FILE = "problem.yaml"
_INTERNAL_FIELDS = ("path", "format")


def _field_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _expected_fields(model: type[BaseModel]) -> str:
    return ", ".join(name for name, field in model.model_fields.items() if not field.exclude)


def describe_validation_error(exc: ValidationError, model: type[BaseModel], item: type[BaseModel] = Checkpoint) -> str:
    """The first error of ``exc`` as ``field: what is wrong`` on one line."""
    first = exc.errors()[0]
    loc = tuple(first["loc"])
    where = _field_path(loc)
    if first["type"] == "extra_forbidden":
        owner: type[BaseModel] = item if loc and loc[0] == "checkpoints" else model
        message = f"unknown field '{loc[-1]}' (expected one of: {_expected_fields(owner)})"
        where = _field_path(loc[:-1]) if len(loc) > 1 else "(top level)"
        return f"{where}: {message}"
    more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
    return f"{where}: {first['msg']}{more}"


def read_yaml(file: Path) -> Any:
    """The YAML document in ``file``; a :class:`ProblemError` naming the line when it is not valid."""
    import yaml

    # libyaml's loader when PyYAML has it: a dataset's files are parsed ~10x faster
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(file.read_text(encoding="utf-8"), Loader=loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        reason = getattr(exc, "problem", None) or str(exc)
        raise ProblemError(f"{file}: invalid YAML{at}: {reason}") from None
    except UnicodeDecodeError:
        raise ProblemError(f"{file}: not UTF-8 text") from None
    except OSError as exc:
        raise ProblemError(f"{file}: {exc.strerror or exc}") from None


class NativeFormat(ProblemFormat):
    """``problem.yaml``: name, workspace, checkpoints with prompt files and test commands."""

    name = "agentrig"
    marker_files = (PROBLEM_FILE,)

    def detect(self, path: Path) -> bool:
        """A directory holding ``problem.yaml`` (or ``problem.yml``)."""
        return (path / PROBLEM_FILE).is_file() or (path / "problem.yml").is_file()

    def load(self, path: Path) -> Problem:
        """Read and check ``problem.yaml``: prompt files, the workspace and solution directories
        exist, checkpoint names are unique, reports and pass policies are well formed."""
        path = Path(path)
        if path.is_file() and path.name in (PROBLEM_FILE, "problem.yml"):
            directory, file = path.parent, path
        else:
            directory = path
            file = path / PROBLEM_FILE if not (path / "problem.yml").is_file() else path / "problem.yml"
        if not file.is_file():
            raise ProblemError(f"{file}: not found (a problem is a directory holding {PROBLEM_FILE})")
        data = read_yaml(file)
        if not isinstance(data, dict):
            raise ProblemError(f"{file}: expected a mapping with 'name' and 'checkpoints', got {type(data).__name__}")
        for internal in _INTERNAL_FIELDS:
            if internal in data:
                raise ProblemError(
                    f"{file}: (top level): unknown field '{internal}' (expected one of: {_expected_fields(Problem)})"
                )
        try:
            problem = Problem.model_validate({**data, "path": directory.resolve(), "format": self.name})
        except ValidationError as exc:
            raise ProblemError(f"{file}: {describe_validation_error(exc, Problem)}") from None
        check_problem(problem, file)
        return problem


def check_problem(problem: Problem, file: Path) -> None:
    """What the schema cannot check: files exist, names are unique, reports and policies parse."""
    from agentrig.evaluation.engine import ReportSpec

    seen: set[str] = set()
    parse_policy(problem.pass_policy, f"{file}: pass_policy")
    for index, checkpoint in enumerate(problem.checkpoints):
        where = f"{file}: checkpoints[{index}]"
        if checkpoint.name in seen:
            raise ProblemError(f"{where}.name: duplicate checkpoint name '{checkpoint.name}'")
        seen.add(checkpoint.name)
        prompt = problem.path / checkpoint.prompt
        if not prompt.is_file():
            raise ProblemError(f"{where}.prompt: file '{checkpoint.prompt}' does not exist")
        if checkpoint.test is not None and not checkpoint.test.strip():
            raise ProblemError(f"{where}.test: empty command (remove the field for no test)")
        if checkpoint.solution is not None and not (problem.path / checkpoint.solution).is_dir():
            raise ProblemError(f"{where}.solution: directory '{checkpoint.solution}' does not exist")
        if checkpoint.report is not None:
            try:
                ReportSpec.parse(checkpoint.report)
            except ValueError as exc:
                raise ProblemError(f"{where}.report: {exc}") from None
        parse_policy(checkpoint.pass_policy, f"{where}.pass_policy")
    if problem.workspace is not None and not (problem.path / problem.workspace).is_dir():
        raise ProblemError(f"{file}: workspace: directory '{problem.workspace}' does not exist")
    for index, command in enumerate(problem.setup):
        if not command.strip():
            raise ProblemError(f"{file}: setup[{index}]: empty command")
