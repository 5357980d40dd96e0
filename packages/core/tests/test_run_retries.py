"""The retry decision, its backoff, ``--retries`` on the command line, and tries kept in a run directory.

The end-to-end runs (a fake model server failing with HTTP 500) are in ``tests/test_run_retries.py``.
"""

from __future__ import annotations

import random
from datetime import datetime, timezone
from pathlib import Path

import pytest

from agentrig.agents.result import CheckpointInferenceResult
from agentrig.errors import AgentStepError
from agentrig.evaluation.records import EvaluationRecord
from agentrig.llm.errors import AuthenticationError, ContextLengthError, LLMTimeoutError, ServerError
from agentrig.run.layout import RunDirectory
from agentrig.run.records import CheckpointResultLine, TryRecord
from agentrig.run.retries import RetryPolicy, error_cause, keep_retracted, next_try, retry_cause
from agentrig.usage import UsageTracker

NOW = datetime(2025, 1, 1, tzinfo=timezone.utc)


def _result(had_error: bool, stop_reason: str | None = None) -> CheckpointInferenceResult:
    return CheckpointInferenceResult(started=NOW, completed=NOW, elapsed=0.0, usage=UsageTracker(),
                                     had_error=had_error, stop_reason=stop_reason)


def _evaluation(passed: bool | None = False, infrastructure: bool = False, error: str | None = None) -> EvaluationRecord:
    return EvaluationRecord(command="sh t.sh", passed=passed, infrastructure_failure=infrastructure, error=error)


def _wrapped(inner: BaseException) -> AgentStepError:
    """What the react agent raises: its own error ``from None`` (the model's error only in ``__context__``)."""
    try:
        try:
            raise inner
        except Exception:
            raise AgentStepError("model call failed") from None
    except AgentStepError as exc:
        return exc


class _SDKError(Exception):
    def __init__(self, status_code: int) -> None:
        super().__init__(f"HTTP {status_code}")
        self.status_code = status_code


@pytest.mark.parametrize(
    ("error", "worth"),
    [
        (ServerError("boom", provider="openai", status=500, attempts=3), "model error: ServerError"),
        (LLMTimeoutError("slow", provider="openai"), "model error: LLMTimeoutError"),
        (_wrapped(ServerError("boom", status=502)), "model error: ServerError"),
        (_wrapped(AuthenticationError("bad key", status=401)), None),
        (ContextLengthError("too long", status=400), None),
        (_SDKError(503), "infrastructure error: _SDKError"),
        (_SDKError(429), "infrastructure error: _SDKError"),
        (_SDKError(404), None),
        (ConnectionResetError("reset by peer"), "infrastructure error: ConnectionResetError"),
        (TimeoutError("docker exec"), "infrastructure error: TimeoutError"),
        (ValueError("the agent's own bug"), None),
        (AgentStepError("Claude Code reported an error"), None),
        (None, None),
    ],
)
def test_which_agent_errors_are_worth_another_try(error: BaseException | None, worth: str | None) -> None:
    cause = error_cause(error)
    assert (cause is None) == (worth is None), cause
    if worth is not None:
        assert cause is not None and cause.startswith(worth)


def test_only_an_error_without_a_verdict_is_retried() -> None:
    server = ServerError("boom", status=500)
    assert retry_cause("error", _result(True, "model_error"), _evaluation(), server) is not None
    # a verdict, a skipped or untested checkpoint: never, whatever else went wrong
    for status in ("passed", "failed", "not_evaluated", "skipped"):
        assert retry_cause(status, _result(True), _evaluation(infrastructure=True, error="x"), server) is None
    # a limit is no error: the agent stopped, the line is a verdict (and had_error is False)
    assert retry_cause("error", _result(False, "step_limit"), _evaluation(), None) is None
    cause = retry_cause("error", _result(False), _evaluation(passed=False, infrastructure=True, error="report missing"), None)
    assert cause == "infrastructure failure: report missing"
    assert retry_cause("error", _result(True), _evaluation(), ValueError("bug")) is None


def test_the_backoff_doubles_is_capped_and_jittered() -> None:
    policy = RetryPolicy(retries=5, base=2.0, cap=5.0)
    rng = random.Random(7)
    waits = [[policy.delay(n, rng) for _ in range(200)] for n in (1, 2, 3, 4)]
    for ceiling, samples in zip((2.0, 4.0, 5.0, 5.0), waits, strict=True):
        assert all(ceiling * 0.5 <= w <= ceiling for w in samples)
        assert max(samples) - min(samples) > ceiling * 0.3  # jitter spreads the tries
    assert RetryPolicy(retries=1, base=0.0).delay(1) == 0.0


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--retries", "-1"], "--retries -1: must be a whole number from 0 to 100"),
        (["--retries", "101"], "--retries 101: must be a whole number from 0 to 100"),
        (["--retries", "2", "--retry-backoff", "-3"], "--retry-backoff -3.0: must be a number of seconds, 0 or more"),
        (["--retries", "2", "--retry-backoff-max", "nan"], "--retry-backoff-max nan: must be a number of seconds, 0 or more"),
    ],
)
def test_bad_retry_flags_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    from agentrig.cli import main

    greeter = Path(__file__).resolve().parents[3] / "examples" / "greeter"
    out = tmp_path / "run"
    assert main(["run", str(greeter), "--agent", "oracle", "--output", str(out), *flags]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"agentrig: error: {message}"] or err[-1].endswith(message), err
    assert "Traceback" not in "\n".join(err) and not out.exists()


def _checkpoint_dir(root: Path) -> Path:
    cp = root / "p" / "c1"
    (cp / "snapshot").mkdir(parents=True)
    (cp / "snapshot" / "a.py").write_text("print(1)\n")
    for name in ("prompt.txt", "inference_result.json", "evaluation.json", "trajectory.jsonl"):
        (cp / name).write_text(name)
    return cp


def _line(status: str = "error") -> CheckpointResultLine:
    return CheckpointResultLine(problem="p", checkpoint="c1", index=0, status=status, had_error=status == "error",
                                stop_reason="model_error")


def test_a_try_is_moved_whole_and_numbered_after_the_kept_ones(tmp_path: Path) -> None:
    directory = RunDirectory(tmp_path)
    cp = _checkpoint_dir(tmp_path)
    paths = directory.checkpoint("p", "c1")
    assert next_try(directory, "p", "c1") == 1
    directory.keep_try(paths, TryRecord(number=1, reason="retries", cause="model error: x", result=_line(), delay=1.5))
    assert sorted(p.name for p in cp.iterdir()) == ["tries"]
    assert (cp / "tries" / "1" / "snapshot" / "a.py").read_text() == "print(1)\n"
    _checkpoint_dir(tmp_path)  # the next try's files
    keep_retracted(directory, [_line()])
    kept = directory.kept_tries(paths)
    assert [(k.number, k.reason) for k in kept] == [(1, "retries"), (2, "retry_errors")]
    assert kept[1].result == _line() and "--retry-errors" in kept[1].cause
    keep_retracted(directory, [_line()])  # nothing but tries left: done already, not an empty try
    assert next_try(directory, "p", "c1") == 3


def test_a_try_half_moved_when_the_run_was_killed_is_completed(tmp_path: Path) -> None:
    directory = RunDirectory(tmp_path)
    cp = _checkpoint_dir(tmp_path)
    paths = directory.checkpoint("p", "c1")
    staging = cp / "tries" / ".1.partial"
    staging.mkdir(parents=True)
    record = TryRecord(number=1, reason="retries", cause="model error: x", result=_line())
    (staging / "try.json").write_text(record.model_dump_json())
    (cp / "prompt.txt").rename(staging / "prompt.txt")  # killed after moving one file
    (cp / "tries" / ".2.partial").mkdir()  # killed before writing a record: nothing moved into it
    directory.clear_checkpoint(paths)
    assert sorted(p.name for p in cp.iterdir()) == ["tries"]
    assert sorted(p.name for p in (cp / "tries").iterdir()) == ["1"]
    assert sorted(p.name for p in (cp / "tries" / "1").iterdir()) == [
        "evaluation.json", "inference_result.json", "prompt.txt", "snapshot", "trajectory.jsonl", "try.json"
    ]
    assert directory.kept_tries(paths)[0].cause == "model error: x"


def test_an_interrupted_try_is_removed_and_the_kept_ones_stay(tmp_path: Path) -> None:
    directory = RunDirectory(tmp_path)
    cp = _checkpoint_dir(tmp_path)
    paths = directory.checkpoint("p", "c1")
    directory.keep_try(paths, TryRecord(number=1, reason="retries", cause="c"))
    (cp / "trajectory.jsonl").write_text("{}\n")  # the try the kill interrupted
    (cp / "tries" / "notes").write_text("not a try")
    directory.clear_checkpoint(paths)
    assert sorted(p.name for p in cp.iterdir()) == ["tries"]
    assert [k.number for k in directory.kept_tries(paths)] == [1]


def test_a_shipped_checkpoint_keeps_the_tries_the_run_directory_kept(tmp_path: Path) -> None:
    """A worker without the run directory's storage ships the checkpoint whole: the tries
    ``--retry-errors`` kept on the dispatcher's side stay, the worker's own come after them."""
    from agentrig.run.shipping import pack_checkpoint, unpack_checkpoint

    run, worker = RunDirectory(tmp_path / "run"), RunDirectory(tmp_path / "worker")
    _checkpoint_dir(run.root)
    run.keep_try(run.checkpoint("p", "c1"), TryRecord(number=1, reason="retry_errors", cause="dispatcher's"))
    _checkpoint_dir(worker.root)
    worker.keep_try(worker.checkpoint("p", "c1"), TryRecord(number=1, reason="retries", cause="worker's"))
    _checkpoint_dir(worker.root)
    unpack_checkpoint(run.root, "p", "c1", pack_checkpoint(worker.root, "p", "c1"))
    kept = run.kept_tries(run.checkpoint("p", "c1"))
    assert [(k.number, k.cause) for k in kept] == [(1, "dispatcher's"), (2, "worker's")]
    assert (run.root / "p" / "c1" / "trajectory.jsonl").is_file()


def _spent_line(cost: float | None, tokens: int, *, tries_spent=None, checkpoint: str = "c") -> CheckpointResultLine:
    from agentrig.usage import TokenUsage

    return CheckpointResultLine(problem="p", checkpoint=checkpoint, index=0, status="error", cost=cost,
                                cost_known=cost is not None, tokens=TokenUsage(input=tokens), steps=1,
                                tries_spent=tries_spent)


def test_what_earlier_tries_spent_is_counted_in_the_totals() -> None:
    from agentrig.run.records import Totals, TriesSpent

    spent = TriesSpent.of([_spent_line(0.25, 100), _spent_line(0.5, 50)])
    assert spent is not None and (spent.tries, spent.cost, spent.tokens.input, spent.steps) == (2, 0.75, 150, 2)
    assert TriesSpent.of([]) is None
    # a try whose record is unreadable, or whose cost is unknown: the money spent is unknown, never 0
    assert TriesSpent.of([_spent_line(0.25, 100), None]).cost is None
    assert TriesSpent.of([_spent_line(None, 100)]).cost is None
    totals = Totals.of([_spent_line(1.0, 10, tries_spent=spent), _spent_line(2.0, 20, checkpoint="d")])
    assert totals.cost == 3.75 and totals.tokens.input == 180 and totals.steps == 2
    assert totals.tries_spent == spent
    merged = Totals()
    merged.merge(totals)
    merged.merge(Totals.of([_spent_line(1.0, 1, tries_spent=TriesSpent.of([_spent_line(0.5, 5)]))]))
    assert merged.cost == 5.25 and merged.tries_spent is not None and merged.tries_spent.tries == 3


def test_records_of_runs_without_tries_or_cache_read_and_write_as_before() -> None:
    import json

    from agentrig.run.records import RunRecord, Totals

    line = _spent_line(1.0, 10)
    assert "tries_spent" not in json.loads(line.model_dump_json())
    assert "tries_spent" not in json.loads(Totals.of([line]).model_dump_json())
    older = {"run_id": "r", "identity": {"agent": {"type": "x", "config": {}}, "runtime": {"name": "local"}, "problems": []}}
    record = RunRecord.model_validate(older)  # a run.json written before the cache was recorded
    assert record.cache is None and "cache" not in json.loads(record.model_dump_json())
