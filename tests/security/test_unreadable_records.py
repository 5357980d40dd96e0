"""Issue 20, section 2: unreadable records in a run directory someone sent (deeply nested JSON, a
binary ``results.jsonl``, a NUL in a name, an over-long name) ended in ``agentrig: error:
RecursionError|UnicodeDecodeError|ValueError|OSError ...``, exit 1.

Now: ``show``, ``view``, ``view --out``, ``export`` and ``compare``, which show what they can,
leave the record out with one warning line naming the file (and line) and what is wrong, and
exit 0; ``evaluate`` and ``replay``, which need the record, refuse with one error line naming the
file, exit 2 (bad input), or warn and go on with the records they can read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentrig.cli import main
from agentrig.testing.runs import outcome_run

DEEP = "[" * 100_000 + "]" * 100_000
BINARY = bytes(range(255, -1, -1)) * 4  # starts with 0xff: no UTF-8


def _first_line(run: Path) -> dict:
    return json.loads((run / "results.jsonl").read_text().splitlines()[0])


def _append(run: Path, data: bytes) -> None:
    with open(run / "results.jsonl", "ab") as handle:
        handle.write(data + b"\n")


def _named(run: Path, problem: str | None = None, checkpoint: str | None = None) -> bytes:
    line = _first_line(run)
    if problem is not None:
        line["problem"] = problem
    if checkpoint is not None:
        line["checkpoint"] = checkpoint
    return json.dumps(line).encode()


CASES = {
    "deeply_nested_json": lambda run: _append(run, DEEP.encode()),
    "binary_results_jsonl": lambda run: (run / "results.jsonl").write_bytes(BINARY + b"\n"),
    "nul_in_a_name": lambda run: _append(run, _named(run, problem="a\x00b")),
    "over_long_name": lambda run: _append(run, _named(run, checkpoint="x" * 5000)),
}
WHAT = {
    "deeply_nested_json": "nested too deeply",
    "binary_results_jsonl": "not UTF-8 text",
    "nul_in_a_name": "'a\\x00b' is not a valid name",
    "over_long_name": "is not a valid name",
}


def _one_warning(err: str, what: str) -> str:
    assert "Traceback" not in err and "agentrig: error" not in err, err
    lines = [line for line in err.splitlines() if what in line]
    assert len(lines) == 1, err
    assert lines[0].startswith("agentrig: warning:") and "results.jsonl line" in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("command", ["show", "view-out", "export", "compare"])
def test_unreadable_results_line_is_named_and_the_rest_is_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, command: str
) -> None:
    run = outcome_run(tmp_path / "sent")
    CASES[case](run)
    args = {
        "show": ["show", str(run)],
        "view-out": ["view", str(run), "--out", str(tmp_path / "report")],
        "export": ["export", str(run), "--format", "jsonl", "-o", str(tmp_path / "steps.jsonl")],
        "compare": ["compare", str(run), str(outcome_run(tmp_path / "mine"))],
    }[command]

    assert main(args) == 0
    captured = capsys.readouterr()
    _one_warning(captured.err, WHAT[case])
    if case != "binary_results_jsonl":  # the records before the bad line are all there
        assert "alpha" in captured.out or (tmp_path / "report" / "runs" / "1" / "alpha" / "first.html").is_file() or \
            '"problem":"alpha"' in (tmp_path / "steps.jsonl").read_text()


@pytest.mark.parametrize("file", ["run.json", "alpha/first/evaluation.json", "alpha/first/trajectory.jsonl"])
def test_deeply_nested_records_of_a_checkpoint_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], file: str
) -> None:
    run = outcome_run(tmp_path / "sent")
    (run / file).write_text(DEEP + "\n")
    for args in (["show", str(run), "alpha/first"], ["view", str(run), "--out", str(tmp_path / "report")],
                 ["export", str(run), "--format", "atif", "-o", str(tmp_path / "atif")]):
        assert main(args) == 0, args
        captured = capsys.readouterr()
        assert "Traceback" not in captured.err and "agentrig: error" not in captured.err, captured.err
        shown = captured.out + captured.err
        if args[0] == "view" and file == "alpha/first/trajectory.jsonl":
            continue  # the page's script reads the trajectory and names the line: test_view_trajectory_js.py
        if args[0] == "view" and file != "run.json":  # a checkpoint's notices are on its page
            shown = (tmp_path / "report" / "runs" / "1" / "alpha" / "first.html").read_text()
        named = [line for line in shown.splitlines() if "nested too deeply" in line]
        assert named and all(Path(file).name in line for line in named), (args, captured)


def _error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("agentrig: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("command", ["evaluate", "replay"])
def test_binary_results_jsonl_is_named_by_evaluate_and_replay(
    greeter_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    run = tmp_path / "sent"
    shutil.copytree(greeter_run, run, symlinks=True)
    (run / "results.jsonl").write_bytes(BINARY + b"\n")

    assert main([command, str(run)]) == 2
    error = _error(capsys.readouterr().err)
    assert "results.jsonl" in error and "not a result record" in error and "Invalid JSON" in error


@pytest.mark.parametrize("command", ["evaluate", "replay"])
def test_a_nul_in_a_name_is_named_by_evaluate_and_replay(
    greeter_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    run = tmp_path / "sent"
    shutil.copytree(greeter_run, run, symlinks=True)
    lines = (run / "results.jsonl").read_text().splitlines()
    bad = [json.dumps(dict(json.loads(line), checkpoint=json.loads(line)["checkpoint"] + "\x00x")) for line in lines]
    (run / "results.jsonl").write_text("\n".join(bad) + "\n")

    assert main([command, str(run)]) == 2
    error = _error(capsys.readouterr().err)
    assert "results.jsonl line 1: 'greet_function\\x00x' is not a valid name" in error


def test_a_deeply_nested_evaluation_is_named_by_evaluate(
    greeter_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "sent"
    shutil.copytree(greeter_run, run, symlinks=True)
    evaluation = run / "greeter" / "greet_function" / "evaluation.json"
    evaluation.write_text(DEEP)

    assert main(["evaluate", str(run), "greeter/greet_function"]) == 2
    error = _error(capsys.readouterr().err)
    assert f"{evaluation}: not an evaluation record" in error and "recursion" in error.lower()
    assert not (evaluation.parent / "evaluations").exists()

