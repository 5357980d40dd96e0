"""Every command's exit status follows one scheme (``agentrig.cli.exits.ExitStatus``): 0 done (every
checkpoint passed), 1 a checkpoint failed, 2 usage or bad input, 3 an error, 130/143 interrupted.

Real runs of the core's ``oracle`` agent on real problem directories, in-process through ``main`` and,
for signals, as a real ``agentrig`` process.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentrig.cli import main
from agentrig.cli.exits import EPILOG, ExitStatus
from agentrig.run.layout import RunDirectory

AGENTRIG = str(Path(sys.executable).with_name("agentrig"))
README = Path(__file__).resolve().parents[3] / "README.md"


def problem(root: Path, name: str, *checkpoints: tuple[str | None, str | None]) -> Path:
    """A ``problem.yaml`` problem whose checkpoint i has the reference solution ``out.txt`` holding
    the given text (``None``: no solution) and the given test command (``None``: no test)."""
    path = root / name
    lines = [f"name: {name}", "checkpoints:"]
    for i, (solution, test) in enumerate(checkpoints, 1):
        (path / f"c{i}.md").parent.mkdir(parents=True, exist_ok=True)
        (path / f"c{i}.md").write_text(f"write out.txt for checkpoint {i}\n")
        lines += [f"  - name: c{i}", f"    prompt: c{i}.md"]
        if test is not None:
            lines.append(f"    test: {test}")
        if solution is not None:
            (path / f"sol{i}").mkdir()
            (path / f"sol{i}" / "out.txt").write_text(solution + "\n")
            lines.append(f"    solution: sol{i}")
    (path / "problem.yaml").write_text("\n".join(lines) + "\n")
    return path


GOOD = ("right", "grep -qx right out.txt")
WRONG = ("wrong", "grep -qx right out.txt")
NO_SOLUTION = (None, "grep -qx right out.txt")
NO_TEST = ("right", None)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def oracle(capsys: pytest.CaptureFixture[str], out: Path, *problems: Path) -> tuple[int, str, str]:
    return run(capsys, "run", *map(str, problems), "--agent", "oracle", "--output", str(out), "-q")


@pytest.mark.parametrize(
    ("checkpoints", "expected"),
    [
        ([GOOD, GOOD], ExitStatus.OK),
        ([GOOD, NO_TEST], ExitStatus.OK),  # nothing to fail: not evaluated
        ([GOOD, WRONG], ExitStatus.FAILED),
        ([GOOD, NO_SOLUTION], ExitStatus.ERROR),
        ([WRONG, NO_SOLUTION], ExitStatus.ERROR),  # an error outranks a failure
    ],
    ids=["passed", "not-evaluated", "failed", "error", "failed-and-error"],
)
def test_a_finished_run_exits_by_its_checkpoints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], checkpoints: list[tuple[str | None, str | None]], expected: int
) -> None:
    status, _, err = oracle(capsys, tmp_path / "run", problem(tmp_path / "p", "two", *checkpoints))
    assert status == expected, err
    assert "Traceback" not in err


def test_the_oracle_without_a_solution_ends_in_an_error_as_the_readme_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = oracle(capsys, tmp_path / "run", problem(tmp_path / "p", "gap", GOOD, NO_SOLUTION))
    assert status == ExitStatus.ERROR
    first, second = RunDirectory(tmp_path / "run").results()
    assert (first.status, first.had_error) == ("passed", False)
    assert (second.status, second.stop_reason, second.had_error) == ("error", "no_solution", True)
    assert "1 passed, 0 failed, 1 error " in out  # the totals count it as the error it is
    shown, text, _ = run(capsys, "show", str(tmp_path / "run"))
    assert shown == ExitStatus.OK and re.search(r"gap\s+c2\s+error\s+no_solution", text)
    # the README says so, in the words the behaviour has
    readme = " ".join(README.read_text().split())
    assert "a checkpoint without one ends in an error" in readme


def test_a_problem_that_cannot_be_loaded_is_an_error_for_run_and_problems_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = tmp_path / "set"
    problem(dataset, "fine", GOOD)
    (dataset / "broken").mkdir()
    (dataset / "broken" / "problem.yaml").write_text("name: broken\ncheckpoints: 3\n")
    status, _, err = run(capsys, "problems", "list", str(dataset))
    assert status == ExitStatus.ERROR and "broken: cannot be loaded" in err
    status, _, err = oracle(capsys, tmp_path / "run", dataset)
    assert status == ExitStatus.ERROR and "skipping 1 problem that cannot be loaded" in err
    assert [line.status for line in RunDirectory(tmp_path / "run").results()] == ["passed"]


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "{p}", "--agent", "oracle", "--jobs", "0"],
        ["run", "{p}", "--agent", "no_such_agent"],
        ["run", "{tmp}/nowhere", "--agent", "oracle"],
        ["run", "{p}", "--agent", "oracle", "--pass-policy", "most"],
        ["evaluate", "{tmp}"],
        ["replay", "{tmp}"],
        ["show", "{tmp}"],
        ["compare", "{tmp}"],
        ["view", "{tmp}", "--out", "{tmp}/report"],
        ["export", "{tmp}", "--format", "jsonl"],
        ["problems", "list", "{tmp}/nowhere"],
        ["datasets", "show", "no_such_dataset"],
        ["agents", "show", "no_such_agent"],
        ["new", "agent", "Not A Name", "-o", "{tmp}/new"],
    ],
    ids=lambda argv: "-".join(a for a in argv[:3] if not a.startswith("{")),
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    p = problem(tmp_path / "problems", "one", GOOD)
    status, _, err = run(capsys, *(a.format(p=p, tmp=tmp_path) for a in argv))
    assert status == ExitStatus.USAGE, err
    errors = [line for line in err.splitlines() if line.startswith("agentrig: error:")]
    assert len(errors) == 1 and "Traceback" not in err, err


@pytest.mark.parametrize("argv", [["run", "--no-such-option"], ["show"], ["export", "x", "--format", "xml"], ["nope"]])
def test_a_usage_error_argparse_finds_exits_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == ExitStatus.USAGE
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("agentrig") and " error: " in err, err
    assert "--help lists the options" in err


def test_evaluate_exits_by_the_new_verdicts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = problem(tmp_path / "problems", "judged", GOOD)
    out = tmp_path / "run"
    assert oracle(capsys, out, p)[0] == ExitStatus.OK
    assert run(capsys, "evaluate", str(out))[0] == ExitStatus.OK
    (p / "problem.yaml").write_text((p / "problem.yaml").read_text().replace("grep -qx right", "grep -qx other"))
    status, printed, _ = run(capsys, "evaluate", str(out))
    assert status == ExitStatus.FAILED and "judged/c1: passed -> failed" in printed
    # a report the test never writes: the tests could not be read, an error
    (p / "problem.yaml").write_text((p / "problem.yaml").read_text() + "    report: junit:missing.xml\n")
    status, printed, _ = run(capsys, "evaluate", str(out))
    assert status == ExitStatus.ERROR and "evaluation failed" in printed
    assert run(capsys, "evaluate", str(out), "judged/nope")[0] == ExitStatus.USAGE


def test_replay_exits_by_whether_the_verdicts_match(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = problem(tmp_path / "problems", "again", GOOD)
    out = tmp_path / "run"
    assert oracle(capsys, out, p)[0] == ExitStatus.OK
    assert run(capsys, "replay", str(out / "again" / "c1"))[0] == ExitStatus.OK
    (p / "sol1" / "out.txt").write_text("changed\n")  # the oracle now applies a wrong solution: the verdict differs
    status, printed, _ = run(capsys, "replay", str(out / "again" / "c1"))
    assert status == ExitStatus.FAILED and "DIFFERS from the recorded result (passed)" in printed

    gap = problem(tmp_path / "problems", "gap", NO_SOLUTION)
    assert oracle(capsys, tmp_path / "gap-run", gap)[0] == ExitStatus.ERROR
    status, printed, _ = run(capsys, "replay", str(tmp_path / "gap-run" / "gap" / "c1"))
    assert status == ExitStatus.ERROR and "no verdict to compare with" in printed


def test_reading_commands_exit_0_on_a_run_with_failures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """show, compare, view and export describe a run: its failed checkpoints are no failure of theirs."""
    out = tmp_path / "run"
    assert oracle(capsys, out, problem(tmp_path / "p", "mixed", GOOD, WRONG))[0] == ExitStatus.FAILED
    for argv in (["show", str(out)], ["show", str(out), "mixed/c2"], ["compare", str(out), str(out)],
                 ["view", str(out), "--out", str(tmp_path / "report")], ["export", str(out), "--format", "atif"]):
        status, _, err = run(capsys, *argv)
        assert status == ExitStatus.OK, (argv, err)


def test_export_atif_to_stdout_is_a_usage_error_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "run"
    assert oracle(capsys, out, problem(tmp_path / "p", "one", GOOD))[0] == ExitStatus.OK
    monkeypatch.chdir(tmp_path)
    status, printed, err = run(capsys, "export", str(out), "--format", "atif", "-o", "-")
    assert status == ExitStatus.USAGE and printed == ""
    assert err.strip() == (
        "agentrig: error: --output -: ATIF is one file per checkpoint, it cannot go to standard output; name a "
        "directory (or use --format jsonl -o - for one stream of records)"
    )
    assert not (tmp_path / "-").exists() and not (out / "exports").exists()
    # jsonl: - is standard output
    status, printed, _ = run(capsys, "export", str(out), "--format", "jsonl", "-o", "-")
    assert status == ExitStatus.OK and printed.startswith("{") and not (tmp_path / "-").exists()


def test_an_interrupted_evaluate_exits_130(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = problem(tmp_path / "problems", "slow", GOOD)
    out = tmp_path / "run"
    assert oracle(capsys, out, p)[0] == ExitStatus.OK
    started = tmp_path / "started"
    (p / "problem.yaml").write_text((p / "problem.yaml").read_text().replace(
        "grep -qx right out.txt", f"touch {started} && sleep 60"))
    proc = subprocess.Popen([AGENTRIG, "evaluate", str(out), "--runtime", "local"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists(), "the test command never started"
        os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == ExitStatus.INTERRUPTED, err
    assert "Traceback" not in err


def test_help_and_readme_list_the_same_scheme(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    assert EPILOG.splitlines()[0] in capsys.readouterr().out
    codes = {int(code) for code in re.findall(r"^\s+(\d+)\s", EPILOG, re.MULTILINE)} | {143}
    assert codes == {int(s) for s in ExitStatus}
    readme = README.read_text()
    section = readme[readme.index("| exit status |"):]
    section = section[: section.index("\n\n")]
    assert {int(code) for code in re.findall(r"^\| `(\d+)` \|", section, re.MULTILINE)} == {int(s) for s in ExitStatus}
