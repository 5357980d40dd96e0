"""Problem formats as plugins: the hook, detection, datasets, selection, and a third party's format."""

from __future__ import annotations

from pathlib import Path

import pytest

import agentrig
from agentrig.formats.interface import EvaluationContext, ProblemFormat, TestCommand
from agentrig.formats.resolve import available_formats, find_problems, get_format, load_problem
from agentrig.problem import Checkpoint, Problem, ProblemError
from agentrig.run.problems import load_problems


def write_native(directory: Path, name: str, checkpoints: int = 1) -> Path:
    directory.mkdir(parents=True)
    lines = [f"name: {name}", "checkpoints:"]
    for i in range(1, checkpoints + 1):
        (directory / f"c{i}.md").write_text(f"task {i}")
        lines += [f"  - name: c{i}", f"    prompt: c{i}.md", "    test: 'true'"]
    (directory / "problem.yaml").write_text("\n".join(lines) + "\n")
    return directory


class TodoFormat(ProblemFormat):
    """A third party's format: a directory holding TODO.txt, one checkpoint per line."""

    name = "todo"
    marker_files = ("TODO.txt",)

    def detect(self, path: Path) -> bool:
        return (path / "TODO.txt").is_file()

    def load(self, path: Path) -> Problem:
        lines = (path / "TODO.txt").read_text().splitlines()
        if not lines:
            raise ProblemError(f"{path / 'TODO.txt'}: empty (one task per line)")
        return TodoProblem(
            name=path.name,
            path=path.resolve(),
            format=self.name,
            checkpoints=[Checkpoint(name=f"todo_{i}", prompt="TODO.txt", test="true") for i in range(len(lines))],
        )


class TodoProblem(Problem):
    def prompt_text(self, checkpoint: Checkpoint) -> str:
        index = int(checkpoint.name.split("_")[1])
        return (self.path / "TODO.txt").read_text().splitlines()[index]


class TodoPlugin:
    @agentrig.hookimpl
    def agentrig_problem_formats(self):
        return [agentrig.ProblemFormatSpec(name="todo", description="TODO lists", loader=f"{__name__}:TodoFormat")]


@pytest.fixture
def todo_format(plugin_registry):
    agentrig.plugins.register(TodoPlugin(), name="todo-plugin")
    return plugin_registry


def test_the_core_format_is_declared_through_the_hook(plugin_registry) -> None:
    specs = plugin_registry.problem_format_specs()
    assert specs["agentrig"].loader == "agentrig.formats.native:NativeFormat"
    core = next(p for p in plugin_registry.plugins() if p.name == "core")
    assert "agentrig_problem_formats" in core.hooks
    assert available_formats()[0] == "agentrig"


def test_a_third_party_format_is_detected_inside_a_dataset(todo_format, tmp_path: Path) -> None:
    write_native(tmp_path / "set" / "alpha", "alpha", 2)
    (tmp_path / "set" / "group" / "beta").mkdir(parents=True)
    (tmp_path / "set" / "group" / "beta" / "TODO.txt").write_text("first\nsecond\nthird\n")
    (tmp_path / "set" / ".hidden" / "gamma").mkdir(parents=True)
    (tmp_path / "set" / ".hidden" / "gamma" / "TODO.txt").write_text("never\n")
    found = find_problems(tmp_path / "set")
    assert [(p.relative, p.format) for p in found] == [("alpha", "agentrig"), ("group/beta", "todo")]
    problems = load_problems([tmp_path / "set"])
    assert [(p.name, p.format, len(p.checkpoints)) for p in problems] == [("alpha", "agentrig", 2), ("beta", "todo", 3)]
    beta = problems[1]
    assert beta.prompt_text(beta.checkpoints[1]) == "second"
    assert isinstance(get_format("todo"), TodoFormat)


def test_problem_and_exclude_globs_select_by_name_or_relative_path(tmp_path: Path) -> None:
    for name in ("add_one", "add_two", "sub_one"):
        write_native(tmp_path / "ds" / name, name)
    names = lambda **kw: [p.name for p in load_problems([tmp_path / "ds"], **kw)]  # noqa: E731
    assert names() == ["add_one", "add_two", "sub_one"]
    assert names(include=["add_*"]) == ["add_one", "add_two"]
    assert names(include=["add_*", "sub_one"], exclude=["*two"]) == ["add_one", "sub_one"]
    with pytest.raises(ProblemError, match=r"--problem mul_\*: no problem of .* is selected \(its 3 problems: add_one"):
        load_problems([tmp_path / "ds"], include=["mul_*"])


def test_forced_format_and_errors(todo_format, tmp_path: Path) -> None:
    write_native(tmp_path / "p", "p")
    (tmp_path / "p" / "TODO.txt").write_text("")
    assert load_problem(tmp_path / "p").format == "agentrig"  # the core's format is asked first
    with pytest.raises(ProblemError, match=r"TODO.txt: empty"):
        load_problem(tmp_path / "p", "todo")
    (tmp_path / "nothing").mkdir()
    with pytest.raises(ProblemError, match=r"formats tried: agentrig \(problem.yaml\), .*todo \(TODO.txt\)"):
        load_problems([tmp_path / "nothing"])
    with pytest.raises(ProblemError, match=r"unknown problem format.*did you mean 'todo'"):
        load_problem(tmp_path / "p", "tod")


def test_duplicate_names_across_a_dataset_are_an_error(tmp_path: Path) -> None:
    write_native(tmp_path / "ds" / "a", "same")
    write_native(tmp_path / "ds" / "b", "same")
    with pytest.raises(ProblemError, match="2 problems are named 'same'"):
        load_problems([tmp_path / "ds"])


def test_a_loader_that_is_not_a_format_is_reported(plugin_registry, tmp_path: Path) -> None:
    class Broken:
        @agentrig.hookimpl
        def agentrig_problem_formats(self):
            return [agentrig.ProblemFormatSpec(name="broken", loader="agentrig.problem:Problem")]

    agentrig.plugins.register(Broken(), name="broken-plugin")
    with pytest.raises(ProblemError, match="problem format 'broken'"):
        get_format("broken")


def test_spec_validation() -> None:
    with pytest.raises(ValueError, match="loader"):
        agentrig.ProblemFormatSpec(name="x", loader="not a path")
    with pytest.raises(ValueError, match="needs_model"):
        agentrig.AgentSpec(name="x", config="a:B", agent="a:B", needs_model="yes")


def test_a_format_evaluates_through_the_context(tmp_path: Path) -> None:
    from agentrig.runtime.local import LocalRuntime

    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "answer.txt").write_text("42\n")
    runtime = LocalRuntime(workspace)
    try:
        context = EvaluationContext(runtime=runtime, workspace=workspace, report_dir=tmp_path / "reports")
        record = context.run_tests(TestCommand(command="grep -q 42 answer.txt && echo scribble > answer.txt"))
        assert record.passed is True and record.score == 1.0 and record.policy == "all"
        assert (workspace / "answer.txt").read_text() == "42\n"  # the tests ran on a copy
    finally:
        runtime.cleanup()
