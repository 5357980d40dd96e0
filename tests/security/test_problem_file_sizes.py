"""Size and depth of problem files: a file larger than the cap (10 MB by default,
``AGENTRIG_MAX_PROBLEM_FILE_BYTES``) or nested deeper than 100 levels is refused with one line
naming the file, exit 2 (a deep YAML file of any kind: ``test_yaml_nesting.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from problem_kit import harbor_task, native_problem, one_error_line, run_cli


def test_deeply_nested_task_toml_is_one_line_not_a_recursion_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    task = harbor_task(tmp_path / "tasks" / "t1")
    with open(task / "task.toml", "a") as handle:
        handle.write("[metadata]\ndeep = " + "[" * 5000 + "]" * 5000 + "\n")
    status, _, err = run_cli(capsys, "problems", "list", str(task))
    assert status == 2
    assert f"{task / 'task.toml'}: nested more than 100 levels deep; not read" in one_error_line(err)


def test_huge_problem_yaml_is_refused_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A 97 MB problem.yaml was still loading after 120 s at 1.9 GB; past the 10 MB cap it is not read."""
    import agentrig.yaml_loader

    parsed: list[str] = []
    monkeypatch.setattr(agentrig.yaml_loader, "load_yaml", lambda text, where: parsed.append(where))
    problem = native_problem(tmp_path / "bench")
    with open(problem / "problem.yaml", "a") as handle:
        handle.write("# " + "x" * (11 * 1024 * 1024) + "\n")
    status, _, err = run_cli(capsys, "run", str(problem), "--agent", "oracle")
    line = one_error_line(err)
    assert status == 2 and parsed == []  # refused by its size, never handed to the YAML parser
    assert f"{problem / 'problem.yaml'}: problem file is larger than 10 MB" in line
    assert "AGENTRIG_MAX_PROBLEM_FILE_BYTES" in line


def test_the_problem_file_cap_is_overridable(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    problem = native_problem(tmp_path / "bench")
    monkeypatch.setenv("AGENTRIG_MAX_PROBLEM_FILE_BYTES", "64")
    status, _, err = run_cli(capsys, "problems", "list", str(problem))
    assert status == 2 and "problem file is larger than 64 bytes" in one_error_line(err)
    monkeypatch.setenv("AGENTRIG_MAX_PROBLEM_FILE_BYTES", "4096")
    assert run_cli(capsys, "problems", "list", str(problem))[0] == 0


def test_huge_prompt_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    problem = native_problem(tmp_path / "bench")
    (problem / "prompt.md").write_text("x" * 5000)
    monkeypatch.setenv("AGENTRIG_MAX_PROBLEM_FILE_BYTES", "4096")
    status, _, err = run_cli(capsys, "run", str(problem), "--agent", "oracle")
    line = one_error_line(err)
    assert status == 2 and f"{problem / 'prompt.md'}: prompt file is larger than 4 KB" in line

