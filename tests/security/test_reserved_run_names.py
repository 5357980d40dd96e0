"""A problem or checkpoint named after one of the run directory's own files (``run.json``,
``results.jsonl``, ``problem.json``) used to collide with it: ``FileExistsError`` or
``IsADirectoryError``, exit 3, ``run.json`` left "running". Such names are refused when the
problem loads, in one line naming the file and the name, exit 2, before a run directory exists."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from problem_kit import SLOPCODE_CONFIG, native_problem, one_error_line, run_cli, slopcode_problem


@pytest.mark.parametrize("name", ["run.json", "results.jsonl", "retried.jsonl", "exports", "RUN.JSON"])
def test_problem_named_like_a_run_file_cannot_collide_with_it(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    problem = native_problem(tmp_path / "bench", name=name)
    status, _, err = run_cli(capsys, "run", str(problem), "--agent", "oracle", "--output", str(tmp_path / "out"))
    line = one_error_line(err)
    assert status == 2, err
    assert str(problem) in line and f"'{name}' is reserved" in line and "rename the problem" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["problem.json", "attempt_1"])
def test_checkpoint_named_like_a_problem_file_cannot_collide_with_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    problem = native_problem(tmp_path / "bench", name="p", checkpoint=name)
    status, _, err = run_cli(capsys, "run", str(problem), "--agent", "oracle", "--output", str(tmp_path / "out"))
    line = one_error_line(err)
    assert status == 2, err
    assert f"checkpoint name: '{name}' is reserved" in line and "rename the checkpoint" in line
    assert not (tmp_path / "out").exists()


def test_problems_list_refuses_a_slopcode_problem_named_results_jsonl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    problem = slopcode_problem(tmp_path / "bench", SLOPCODE_CONFIG.format(name="results.jsonl", entry="main", assets="{}"))
    status, _, err = run_cli(capsys, "problems", "list", str(problem))
    assert status == 2 and "'results.jsonl' is reserved" in one_error_line(err)


def test_a_problem_named_run_json_in_a_directory_of_problems_is_skipped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """In a directory of problems the bad one is left out with a warning naming it (as a bad name is);
    the others run and the run's own ``run.json`` stays the run's."""
    native_problem(tmp_path / "bench" / "good", name="good")
    native_problem(tmp_path / "bench" / "bad", name="run.json")
    status, _, err = run_cli(capsys, "run", str(tmp_path / "bench"), "--agent", "oracle", "--output", str(tmp_path / "out"))
    assert status != 0  # a problem was left out
    assert "'run.json' is reserved" in err and "Traceback" not in err
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    assert run["status"] == "completed" and sorted(p.name for p in (tmp_path / "out").iterdir()) == ["good", "results.jsonl", "run.json"]
