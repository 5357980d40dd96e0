"""``agentrig replay`` on a run, a problem or a checkpoint, and what it says when there is nothing to compare."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.cli import main

REPO = Path(__file__).resolve().parents[1]
GREETER = REPO / "examples" / "greeter"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("replay") / "run"
    status = main(["run", str(GREETER), "--agent", "react", "--model", f"replay/{GREETER / 'replay.jsonl'}",
                   "--output", str(out), "-q"])
    assert status == 0
    return out


@pytest.mark.parametrize("where", ["", "greeter"], ids=["run", "problem"])
def test_replaying_a_run_or_a_problem_replays_each_checkpoint(
    run_dir: Path, where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(run_dir / where if where else run_dir), "--output", str(tmp_path / "kept")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "greeter/greet_function: replay passed, matches the recorded result (passed)",
        "greeter/command_line: replay passed, matches the recorded result (passed)",
        "2 checkpoints replayed: 2 match, 0 differ",
    ]
    assert (tmp_path / "kept" / "greeter" / "command_line" / "evaluation.json").is_file()


def test_a_directory_outside_any_run_names_what_replay_expects(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert main(["replay", str(tmp_path / "a" / "b")]) == 2
    err = capsys.readouterr().err
    assert err.count("agentrig: error:") == 1
    assert "give RUN_DIR, RUN_DIR/PROBLEM or RUN_DIR/PROBLEM/CHECKPOINT" in err
    assert "run.json: not found" not in err  # no file two levels up named as if it were the problem
