"""``--resume`` keeps a run directory consistent: torn tails, finished records, replays, leftovers.

Every test runs the README's greeter example with the react agent over its
recorded replies (offline), in this process.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.cli import main
from agentrig.run.layout import LOCK_FILE, WORKSPACES_DIR
from agentrig.run.records import CheckpointResultLine, ProblemRecord, RunRecord

REPO = Path(__file__).resolve().parents[1]
GREETER = REPO / "examples" / "greeter"
REPLAY = GREETER / "replay.jsonl"


def run_greeter(out: Path, *extra: str) -> int:
    return main(["run", str(GREETER), "--agent", "react", "--model", f"replay/{REPLAY}", "--output", str(out), "-q", *extra])


def results(out: Path) -> list[CheckpointResultLine]:
    return [CheckpointResultLine.model_validate_json(x) for x in (out / "results.jsonl").read_text().splitlines()]


def run_record(out: Path) -> RunRecord:
    return RunRecord.model_validate_json((out / "run.json").read_bytes())


def keep_first_result(out: Path) -> None:
    """What a run killed right after checkpoint 1 leaves: one result line, checkpoint 2's partial artifacts."""
    first = (out / "results.jsonl").read_text().splitlines()[0]
    (out / "results.jsonl").write_text(first + "\n")


def test_a_torn_last_result_line_is_cut_off_and_the_checkpoint_redone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert run_greeter(out) == 0
    data = (out / "results.jsonl").read_bytes()
    lines = data.split(b"\n")
    (out / "results.jsonl").write_bytes(lines[0] + b"\n" + lines[1][: len(lines[1]) // 2])  # a crash mid-append

    assert run_greeter(out, "--resume") == 0
    text = (out / "results.jsonl").read_text()
    assert text.endswith("\n")
    assert [(x.checkpoint, x.status) for x in results(out)] == [("greet_function", "passed"), ("command_line", "passed")]
    record = run_record(out)
    assert record.status == "completed"
    assert record.problems["greeter"].finished == 2 and record.totals.checkpoints == 2

    # a second resume finds everything finished and redoes nothing
    assert run_greeter(out, "--resume") == 0
    assert (out / "results.jsonl").read_text() == text


def test_resuming_a_replay_continues_with_the_replies_of_the_next_checkpoint(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run_greeter(out) == 0
    keep_first_result(out)
    assert run_greeter(out, "--resume") == 0
    assert [(x.checkpoint, x.status, x.stop_reason) for x in results(out)] == [
        ("greet_function", "passed", "submitted"), ("command_line", "passed", "submitted")
    ]


def test_resume_of_a_finished_run_rewrites_no_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert run_greeter(out) == 0
    before = {name: (out / name).read_bytes() for name in ("run.json", "results.jsonl", "greeter/problem.json")}
    assert run_greeter(out, "--resume") == 0
    after = {name: (out / name).read_bytes() for name in before}
    assert after == before
    assert "2 checkpoints: 2 passed" in capsys.readouterr().out


def test_resume_keeps_the_timings_of_a_finished_problem(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run_greeter(out) == 0
    finished = ProblemRecord.model_validate_json((out / "greeter" / "problem.json").read_bytes())
    record = run_record(out)
    record.status = "interrupted"  # killed after the problem finished, before the run did
    (out / "run.json").write_text(record.model_dump_json())
    assert run_greeter(out, "--resume") == 0
    assert ProblemRecord.model_validate_json((out / "greeter" / "problem.json").read_bytes()) == finished
    resumed = run_record(out)
    assert resumed.status == "completed"
    assert (resumed.problems["greeter"].started, resumed.problems["greeter"].ended) == (finished.started, finished.ended)


def test_a_finished_run_leaves_no_lock_and_no_workspaces(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run_greeter(out) == 0
    assert not (out / LOCK_FILE).exists()
    assert not (out / WORKSPACES_DIR).exists()
    keep_first_result(out)
    assert run_greeter(out, "--resume") == 0
    assert sorted(p.name for p in out.iterdir()) == ["greeter", "results.jsonl", "run.json"]
