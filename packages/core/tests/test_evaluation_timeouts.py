"""How long tests may run, as each benchmark's own harness lets them, and what a timeout keeps.

SlopCodeBench gives each test its own timeout (pytest-timeout ``--timeout``, from ``config.yaml``) and no
limit to the session: its ``pytest_runner.py`` runs pytest with timeout ``None``. A session limit is opt-in
(``--test-session-timeout``); when it is up pytest is interrupted (``SIGINT``) and the tests it finished are
kept. A native problem's test command keeps its bound (a checkpoint's ``timeout``, else ``--test-timeout``),
and a timeout there keeps the report it wrote too. Real pytest, real processes, the real fixture
``tests/fixtures/slopcode/slowbuffer`` (a later checkpoint's tests wait for the program, as a rate limit asks).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentrig.evaluation.engine import ReportSpec, TestCommand, run_limited, run_test_command
from agentrig.evaluation.parsers import parse_pytest_json_run
from agentrig.formats.interface import EvaluationContext
from agentrig.formats.slopcode import PYTHON_ENV, SlopCodeFormat
from agentrig.runtime.local import LocalRuntime

pytest.importorskip("pytest_jsonreport", reason="the slopcode format's tests write pytest-json-report's report")
pytest.importorskip("pytest_timeout", reason="SlopCodeBench times each test with pytest-timeout")

SLOWBUFFER = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "slopcode" / "slowbuffer"

#: A solution that never finishes a rate-limited drain (what pytest-timeout must stop, one test at a time).
HANGS_ON_A_RATE = (SLOWBUFFER.parent / "hangs_on_a_rate.py").read_text()
#: The reference solution of checkpoint 2, except that it hangs on batches of three at a limited rate.
HANGS_ON_BATCHES_OF_THREE = (SLOWBUFFER / "solutions" / "checkpoint_2" / "buffer.py").read_text().replace(
    "        if args.rate:\n", "        if args.rate and args.batch == 3:\n            time.sleep(3600)\n        if args.rate:\n"
)


@pytest.fixture(autouse=True)
def _python(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PYTHON_ENV, sys.executable)  # the tests run with this interpreter, not uv


@pytest.fixture
def evaluate(tmp_path: Path):
    """Evaluate a checkpoint of slowbuffer on a workspace holding ``code`` as ``buffer.py``."""
    runtimes: list[LocalRuntime] = []
    problem = SlopCodeFormat().load(SLOWBUFFER)

    def run(checkpoint: str, code: str | None, **limits: float | None):
        workspace = tmp_path / f"ws-{len(runtimes)}"
        workspace.mkdir()
        if code is not None:
            (workspace / "buffer.py").write_text(code)
        runtime = LocalRuntime(workspace)
        runtimes.append(runtime)
        context = EvaluationContext(runtime=runtime, workspace=workspace, report_dir=tmp_path / f"report-{len(runtimes)}",
                                    **limits)
        chosen = next(c for c in problem.checkpoints if c.name == checkpoint)
        return SlopCodeFormat().evaluate(problem, chosen, context)

    yield run
    for runtime in runtimes:
        runtime.cleanup()


def solution(checkpoint: str) -> str:
    return (SLOWBUFFER / "solutions" / checkpoint / "buffer.py").read_text()


def outcomes(record) -> dict[str, str]:
    return {t.id.split("::")[1]: t.outcome for t in record.tests}


def test_slow_tests_within_their_per_test_timeout_pass_whatever_the_test_timeout(evaluate) -> None:
    # checkpoint 2's two rate-limited tests take 1.5 s each (each checks it itself): together more than the
    # whole --test-timeout of 2 s, and all 7 pass: no session limit, as SlopCodeBench runs it
    record = evaluate("checkpoint_2", solution("checkpoint_2"), timeout=2.0)
    assert (record.passed, record.timed_out, record.score, record.not_run) == (True, False, 1.0, None), record.output_tail
    assert record.counts is not None and (record.counts.passed, record.counts.total) == (7, 7)
    assert "--timeout=4 " in (record.command or "")  # checkpoint_2's per-test timeout from config.yaml


def test_a_per_test_timeout_fails_that_test_only(evaluate) -> None:
    record = evaluate("checkpoint_2", HANGS_ON_BATCHES_OF_THREE)
    assert outcomes(record) == {
        "test_batches_of_two": "passed", "test_batch_option": "passed", "test_empty_file": "passed",
        "test_missing_file": "passed", "test_a_fast_rate_keeps_the_batches": "passed",
        "test_six_lines_at_four_a_second": "passed", "test_batches_of_three_at_four_a_second": "failed",
    }
    hung = next(t for t in record.tests if t.outcome == "failed")
    assert "Timeout" in (hung.message or "") and (hung.duration or 0) >= 3.5  # its own 4 s, as the report says
    assert (record.passed, record.timed_out, record.infrastructure_failure) == (False, False, False)
    assert record.score == pytest.approx(6 / 7) and record.not_run is None


def test_a_session_limit_keeps_the_tests_that_finished(evaluate) -> None:
    # the five fast tests finish; then each rate-limited test hangs until its 4 s per-test timeout,
    # and the 8 s session limit interrupts pytest, which writes the report of what ran
    record = evaluate("checkpoint_2", HANGS_ON_A_RATE, session_timeout=8.0)
    assert record.timed_out and record.passed is False and not record.infrastructure_failure, record.error
    assert record.exit_code == 2  # pytest's own "interrupted": it wrote its report
    done = outcomes(record)
    fast = ["test_batches_of_two", "test_batch_option", "test_empty_file", "test_missing_file",
            "test_a_fast_rate_keeps_the_batches"]
    assert all(done[name] == "passed" for name in fast), done
    assert "test_batches_of_three_at_four_a_second" not in done  # never ran: not a pass
    assert record.not_run is not None and record.not_run >= 1 and len(done) + record.not_run == 7
    assert record.score == pytest.approx(5 / 7)  # the tests that never finished are not passes
    assert "the test command's 8 s were up" in record.output_tail


def test_a_session_limit_before_any_test_finished_gives_no_results(evaluate) -> None:
    # the first test hangs until its 10 s per-test timeout: the 6 s session limit comes first
    record = evaluate("checkpoint_3", HANGS_ON_A_RATE, session_timeout=6.0)
    assert record.timed_out and record.passed is False and not record.infrastructure_failure
    assert record.tests == [] and record.counts is None and record.not_run == 2
    assert record.score is None  # nothing to grade: every total counts it as failed


def test_the_oracle_and_nothing_at_all(evaluate) -> None:
    record = evaluate("checkpoint_3", solution("checkpoint_3"))
    assert (record.passed, record.score, record.timed_out) == (True, 1.0, False)
    record = evaluate("checkpoint_3", None)  # the do-nothing agent: every test fails, in no time
    assert (record.passed, record.score, record.timed_out, record.infrastructure_failure) == (False, 0.0, False, False)
    assert outcomes(record) == {"test_a_long_drain_with_a_prefix": "failed", "test_a_prefix": "failed"}


# -- native problems keep their bound, and keep what their tests wrote ---------------------------------------


@pytest.fixture
def runtime(tmp_path: Path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "test_work.py").write_text(
        "import time\n\ndef test_quick():\n    pass\n\ndef test_also_quick():\n    pass\n\n"
        "def test_slow():\n    time.sleep(60)\n"
    )
    runtime = LocalRuntime(workspace)
    yield runtime
    runtime.cleanup()


def test_a_native_timeout_keeps_the_junit_report_of_what_ran(runtime: LocalRuntime, tmp_path: Path) -> None:
    command = f"{sys.executable} -m pytest -p no:cacheprovider -q --junitxml=report.xml test_work.py"
    test = TestCommand(command=command, timeout=4.0, report=ReportSpec.parse("junit:report.xml"),
                       env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})  # junitxml is pytest's own: starts in no time
    record = run_test_command(runtime, test, report_dir=tmp_path / "reports")
    assert record.timed_out and record.passed is False and not record.infrastructure_failure, record.error
    assert [(t.id, t.outcome) for t in record.tests] == [("test_work::test_quick", "passed"), ("test_work::test_also_quick", "passed")]
    # the test pytest was interrupted in is no pass (its report names it without a name)
    assert record.not_run == 1 and record.score == pytest.approx(2 / 3)
    assert (tmp_path / "reports" / "report.xml").is_file()


def test_the_run_limits_bound_a_native_command_and_the_session_limit_caps_it(runtime: LocalRuntime) -> None:
    # `sleep 30` would end (exit 0) under any other limit: the one that stops it is the one named
    record = run_test_command(runtime, TestCommand(command="sleep 30"), default_timeout=0.5)
    assert record.timed_out and record.score is None  # --test-timeout bounds it
    assert "the test command's 0.5 s were up" in record.output_tail
    record = run_test_command(runtime, TestCommand(command="sleep 30", timeout=600.0), session_timeout=0.5)
    assert record.timed_out  # --test-session-timeout caps the problem's own limit
    assert "the test command's 0.5 s were up" in record.output_tail
    assert TestCommand(command="x", session_unbounded=True).session_limit(600.0) is None
    assert TestCommand(command="x", session_unbounded=True).session_limit(600.0, 30.0) == 30.0
    assert TestCommand(command="x", timeout=50).session_limit(600.0, 30.0) == 30.0
    assert TestCommand(command="x").session_limit(600.0) == 600.0


def test_a_command_that_ignores_the_interrupt_is_killed_after_the_grace(runtime: LocalRuntime) -> None:
    result, timed_out = run_limited(runtime, "trap '' INT; sleep 30", cwd=runtime.workdir, env={}, limit=0.5, grace=0.5)
    assert timed_out and result.killed  # (a `sleep 30` that ended on its own would be neither)
    result, timed_out = run_limited(runtime, "sleep 30", cwd=runtime.workdir, env={}, limit=0.5, grace=5)
    # the shell waits for its child: sleep got SIGINT, the shell did not, and reports its child's end (130)
    assert timed_out and result.exit_code == 130 and not result.killed


def test_an_interrupted_test_is_not_a_pass() -> None:
    # pytest-json-report lists the test pytest was interrupted in with its setup's outcome and no call
    report = (b'{"summary": {"passed": 2, "total": 2, "collected": 5}, "tests": ['
              b'{"nodeid": "t.py::a", "outcome": "passed", "setup": {"outcome": "passed"}, "call": {"outcome": "passed"}},'
              b'{"nodeid": "t.py::b", "outcome": "passed", "setup": {"outcome": "passed"}}]}')
    tests, not_run = parse_pytest_json_run(report)
    assert [t.id for t in tests] == ["t.py::a"] and not_run == 4


@pytest.mark.parametrize("command", ["run", "evaluate"])
@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_a_session_limit_that_is_no_limit_is_refused(command: str, value: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from agentrig.cli import main

    argv = [str(SLOWBUFFER), "--agent", "oracle", "-o", str(tmp_path / "run")] if command == "run" else [str(tmp_path)]
    assert main([command, *argv, f"--test-session-timeout={value}"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("agentrig: error: --test-session-timeout "), err
    assert err.endswith(": must be a finite number above 0, at most 604800 seconds (7 days)"), err
    assert not (tmp_path / "run").exists()
