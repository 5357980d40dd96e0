"""The ``agentrig`` format: a directory holding ``problem.yaml`` (see :class:`agentrig.problem.Problem`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from agentrig.boundary import BoundaryError, check_relative, check_tree, resolve_inside, shorten
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


def read_yaml(file: Path, what: str = "problem file") -> Any:
    """The YAML document in ``file``; a :class:`ProblemError` naming the file (and line) when it
    is not valid, larger than the problem-file cap, or nested deeper than :data:`~agentrig.boundary.NESTING_MAX`."""
    return parse_yaml(read_text(file, what), file)


def parse_yaml(text: str, file: Path) -> Any:
    """The YAML document ``text`` (read from ``file``); :class:`ProblemError` as :func:`read_yaml`
    (through :func:`agentrig.yaml_loader.load_yaml`, the depth counted before it is built)."""
    from agentrig.yaml_loader import YamlError, load_yaml

    try:
        return load_yaml(text, str(file))
    except YamlError as exc:
        raise ProblemError(str(exc)) from None


def read_text(file: Path, what: str = "problem file") -> str:
    """The UTF-8 text of the problem file ``file``, at most the problem-file cap
    (:func:`agentrig.boundary.problem_file_limit`); a :class:`ProblemError` naming the file otherwise."""
    from agentrig.boundary import read_problem_text

    try:
        return read_problem_text(file, what)
    except BoundaryError as exc:
        raise ProblemError(str(exc)) from None
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
        try:
            resolve_inside(directory, file.name, str(file))
        except BoundaryError as exc:
            raise ProblemError(str(exc)) from None
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
    """What the schema cannot check: files exist inside the problem directory (no path, and no
    symbolic link in a directory agentrig copies, leads out of it), names are unique, reports
    and policies parse."""
    try:
        _check_problem(problem, file)
    except BoundaryError as exc:
        raise ProblemError(str(exc)) from None


def _check_problem(problem: Problem, file: Path) -> None:
    from agentrig.evaluation.engine import ReportSpec

    root = problem.path
    seen: set[str] = set()
    parse_policy(problem.pass_policy, f"{file}: pass_policy")
    for index, checkpoint in enumerate(problem.checkpoints):
        where = f"{file}: checkpoints[{index}]"
        if checkpoint.name in seen:
            raise ProblemError(f"{where}.name: duplicate checkpoint name '{checkpoint.name}'")
        seen.add(checkpoint.name)
        if not resolve_inside(root, checkpoint.prompt, f"{where}.prompt").is_file():
            raise ProblemError(f"{where}.prompt: file '{shorten(checkpoint.prompt)}' does not exist")
        if checkpoint.test is not None and not checkpoint.test.strip():
            raise ProblemError(f"{where}.test: empty command (remove the field for no test)")
        if checkpoint.solution is not None and not check_tree(root, checkpoint.solution, f"{where}.solution").is_dir():
            raise ProblemError(f"{where}.solution: directory '{shorten(checkpoint.solution)}' does not exist")
        if checkpoint.report is not None:
            try:
                spec = ReportSpec.parse(checkpoint.report)
            except ValueError as exc:
                raise ProblemError(f"{where}.report: {exc}") from None
            check_relative(spec.path, f"{where}.report")
        parse_policy(checkpoint.pass_policy, f"{where}.pass_policy")
    if problem.workspace is not None and not check_tree(root, problem.workspace, f"{file}: workspace").is_dir():
        raise ProblemError(f"{file}: workspace: directory '{shorten(problem.workspace)}' does not exist")
    check_tree(root, problem.tests, f"{file}: tests")
    for index, command in enumerate(problem.setup):
        if not command.strip():
            raise ProblemError(f"{file}: setup[{index}]: empty command")
