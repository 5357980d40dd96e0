"""``--retries N``: a checkpoint that ended in a model error is tried again, every failed try kept.

The greeter example with the react agent against the fake OpenAI server, whose
handler fails the first requests of checkpoint 2 with HTTP 500 (each failure
outlasting the client's own retry): the real SDK, the real run loop, real files.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from agentrig.run.records import CheckpointResultLine, RunRecord, TryRecord
from agentrig.testing.fake_server import FakeReply, Fault
from agentrig.testing.greeter_retries import check_retries_side_by_side

REPO = Path(__file__).resolve().parents[1]
GREETER = REPO / "examples" / "greeter"
SECOND = "command line"  # words only checkpoint 2's prompt holds


def _greeter_replies():
    spec = importlib.util.spec_from_file_location("greeter_record_replay_retries", GREETER / "record_replay.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.reply


def _command(server, out: Path, *extra: str) -> tuple[list[str], dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "AGENTRIG_"))}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test-not-a-secret")
    argv = [str(Path(sys.executable).with_name("agentrig")), "run", str(GREETER), "--agent", "react",
            "--model", "openai/gpt-4o-mini", "-c", "model_options.retry.max_retries=1",
            "-c", "model_options.retry.initial_delay=0", "--output", str(out), "-q", *extra]
    return argv, env


def _agentrig(server, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    argv, env = _command(server, out, *extra)
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=180)


def _results(out: Path) -> list[CheckpointResultLine]:
    return [CheckpointResultLine.model_validate_json(x) for x in (out / "results.jsonl").read_text().splitlines()]


def _failing(server, failures: int):
    """Serve the greeter, answering the first ``failures`` requests of checkpoint 2 with HTTP 500."""
    reply = _greeter_replies()
    left = [failures]

    def handler(request):
        if left[0] > 0 and SECOND in str(request.body["messages"]):
            left[0] -= 1
            return Fault(status=500)
        return reply(request)

    server.respond_with(handler)
    return left


def _try(out: Path, n: int) -> TryRecord:
    return TryRecord.model_validate_json((out / "greeter" / "command_line" / "tries" / str(n) / "try.json").read_bytes())


def test_a_model_error_is_retried_and_the_failed_try_kept(tmp_path: Path, fake_openai_server) -> None:
    _failing(fake_openai_server, 2)  # one model call, with its one retry: try 1 fails
    out = tmp_path / "run"
    done = _agentrig(fake_openai_server, out, "--retries", "2", "--retry-backoff", "0.2")
    assert done.returncode == 0, done.stderr
    lines = _results(out)
    assert [(x.checkpoint, x.status, x.tries) for x in lines] == [("greet_function", "passed", None), ("command_line", "passed", 2)]
    assert '"tries"' not in (out / "results.jsonl").read_text().splitlines()[0]  # absent when one try did it
    kept = _try(out, 1)
    assert kept.reason == "retries" and kept.number == 1
    assert kept.cause.startswith("model error: ServerError") and "HTTP 500" in kept.cause
    assert kept.result is not None and kept.result.status == "error" and kept.result.stop_reason == "model_error"
    assert kept.delay is not None and 0.1 <= kept.delay <= 0.2  # base 0.2 s, jitter in [0.5, 1]
    try_dir = out / "greeter" / "command_line" / "tries" / "1"
    for name in ("prompt.txt", "inference_result.json", "evaluation.json", "trajectory.jsonl", "diff.json"):
        assert (try_dir / name).is_file(), name
    assert "model call failed" in (try_dir / "trajectory.jsonl").read_text()
    assert not (out / "greeter" / "command_line" / "tries" / "2").exists()  # the last try is the checkpoint itself
    assert "model call failed" not in (out / "greeter" / "command_line" / "trajectory.jsonl").read_text()
    run = RunRecord.model_validate_json((out / "run.json").read_bytes())
    assert run.status == "completed" and run.totals.passed == 2 and run.totals.errors == 0


def test_retries_used_up_keep_every_try_and_end_in_the_error(tmp_path: Path, fake_openai_server) -> None:
    _failing(fake_openai_server, 100)
    out = tmp_path / "run"
    done = _agentrig(fake_openai_server, out, "--retries", "2", "--retry-backoff", "0")
    assert done.returncode == 3, done.stderr
    last = _results(out)[-1]
    assert (last.status, last.tries, last.stop_reason) == ("error", 3, "model_error")
    assert [_try(out, n).number for n in (1, 2)] == [1, 2]
    assert not (out / "greeter" / "command_line" / "tries" / "3").exists()


def test_no_retries_by_default_and_with_zero(tmp_path: Path, fake_openai_server) -> None:
    _failing(fake_openai_server, 2)
    out = tmp_path / "run"
    assert _agentrig(fake_openai_server, out, "--retries", "0").returncode == 3
    last = _results(out)[-1]
    assert (last.status, last.tries) == ("error", None)
    assert not (out / "greeter" / "command_line" / "tries").exists()


def test_a_verdict_is_never_retried(tmp_path: Path, fake_openai_server) -> None:
    reply = _greeter_replies()

    def handler(request):
        if SECOND in str(request.body["messages"]):  # the agent gives up at once: its work fails the test
            return FakeReply(text="I will not do this one.")
        return reply(request)

    fake_openai_server.respond_with(handler)
    out = tmp_path / "run"
    done = _agentrig(fake_openai_server, out, "--retries", "3", "--retry-backoff", "0")
    assert done.returncode == 1, done.stderr
    last = _results(out)[-1]
    assert (last.status, last.passed, last.tries) == ("failed", False, None)
    assert not (out / "greeter" / "command_line" / "tries").exists()


def test_resume_retry_errors_keeps_the_errored_try(tmp_path: Path, fake_openai_server) -> None:
    left = _failing(fake_openai_server, 100)
    out = tmp_path / "run"
    assert _agentrig(fake_openai_server, out).returncode == 3
    errored = _results(out)[-1]
    trajectory = (out / "greeter" / "command_line" / "trajectory.jsonl").read_bytes()
    left[0] = 0
    again = _agentrig(fake_openai_server, out, "--resume", "--retry-errors")
    assert again.returncode == 0, again.stderr
    last = _results(out)[-1]
    assert (last.status, last.tries) == ("passed", 2)
    kept = _try(out, 1)
    assert kept.reason == "retry_errors" and kept.result == errored and "redone by --retry-errors" in kept.cause
    assert (out / "greeter" / "command_line" / "tries" / "1" / "trajectory.jsonl").read_bytes() == trajectory


def test_kill_during_a_retry_then_resume(tmp_path: Path, fake_openai_server) -> None:
    left = _failing(fake_openai_server, 2)
    out = tmp_path / "run"
    argv, env = _command(fake_openai_server, out, "--retries", "3", "--retry-backoff", "60", "--retry-backoff-max", "60")
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        kept = out / "greeter" / "command_line" / "tries" / "1" / "try.json"
        deadline = time.monotonic() + 120
        while not kept.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert kept.exists(), process.stderr.read().decode() if process.poll() is not None else "no try kept in time"
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # in the backoff: the run's own process group, nothing else
        process.wait()
        process.stderr.close()
    assert [x.checkpoint for x in _results(out)] == ["greet_function"]
    left[0] = 0
    resumed = _agentrig(fake_openai_server, out, "--resume", "--retries", "3", "--retry-backoff", "0")
    assert resumed.returncode == 0, resumed.stderr
    last = _results(out)[-1]
    assert (last.checkpoint, last.status, last.tries) == ("command_line", "passed", 2)
    assert _try(out, 1).reason == "retries"
    assert sorted(p.name for p in (out / "greeter" / "command_line" / "tries").iterdir()) == ["1"]


def test_retries_with_two_jobs_keep_each_try_and_count_its_cost(tmp_path: Path, fake_openai_server) -> None:
    # the scenario is the test kit's (the Ray executor's test plays it too); what is the local executor's own:
    # `--jobs 2`, and `agentrig show` reading the run back
    retried = check_retries_side_by_side(fake_openai_server, REPO, tmp_path, "--retries", "1", "--jobs", "2")
    out, env, run, spent_cost = retried.out, retried.env, retried.run, retried.spent_cost
    assert run.executor == "local" and run.totals.cost is not None
    agentrig = str(Path(sys.executable).with_name("agentrig"))
    shown = subprocess.run([agentrig, "show", str(out), "--json"], capture_output=True, text=True, timeout=60, env=env)
    totals = json.loads(shown.stdout)["totals"]
    assert abs(totals["cost"] - run.totals.cost) < 1e-12 and totals["tokens"] == run.totals.tokens.total
    assert totals["tries_spent"]["tries"] == 2 and abs(totals["tries_spent"]["cost"] - spent_cost) < 1e-12
    text = subprocess.run([agentrig, "show", str(out)], capture_output=True, text=True, timeout=60, env=env).stdout
    assert "(2 earlier tries cost $" in text
    detail = subprocess.run([agentrig, "show", str(out), "greeter_a/command_line"], capture_output=True, text=True,
                            timeout=60, env=env).stdout
    assert "tries: 2; 1 earlier try cost $" in detail
