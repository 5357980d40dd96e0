"""``--retries N`` under ``--executor ray``: a checkpoint whose try fails with a model error (HTTP 500 after the
client's own retry) is tried again on the worker that runs its problem; the failed try is kept in
``<checkpoint>/tries/1/`` and its cost counted, as with the local executor.

The greeter example (two copies told apart by a tag in checkpoint 2's prompt) with the react agent, against the
fake OpenAI server in this process, on the session's real local Ray cluster (head + a second worker node).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agentrig.run.records import CheckpointResultLine, RunRecord, TryRecord
from agentrig.testing.fake_server import Fault

pytestmark = [pytest.mark.ray, pytest.mark.slow, pytest.mark.timeout(900), pytest.mark.xdist_group("ray_cluster")]

REPO = Path(__file__).resolve().parents[3]
GREETER = REPO / "examples" / "greeter"
SECOND = "command line"  # words only checkpoint 2's prompt holds
TAGS = ("r0", "r1")


def _greeter_reply():
    spec = importlib.util.spec_from_file_location("greeter_record_replay_ray", GREETER / "record_replay.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.reply


def _copies(root: Path) -> list[Path]:
    made = []
    for tag in TAGS:
        copy = root / f"greeter_{tag}"
        shutil.copytree(GREETER, copy, ignore=shutil.ignore_patterns("record_replay.py", "replay.jsonl"))
        (copy / "problem.yaml").write_text((copy / "problem.yaml").read_text().replace("name: greeter", f"name: greeter_{tag}"))
        (copy / "checkpoint_2.md").write_text((copy / "checkpoint_2.md").read_text() + f"\n(copy {tag})\n")
        made.append(copy)
    return made


def _fail_after_one_call(server) -> dict[str, int]:
    """Each copy's checkpoint 2: its first call answered, the next two (a call and the client's retry) HTTP 500."""
    reply = _greeter_reply()
    seen = dict.fromkeys(TAGS, 0)
    lock = threading.Lock()

    def handler(request):
        text = str(request.body["messages"])
        tag = next((t for t in TAGS if SECOND in text and f"(copy {t})" in text), None)
        if tag is not None:
            with lock:
                seen[tag] += 1
                number = seen[tag]
            if number in (2, 3):
                return Fault(status=500)
        return reply(request)

    server.respond_with(handler)
    return seen


def test_a_retry_under_ray_passes_and_keeps_the_failed_try(ray_cluster, agent_site: Path, fake_openai_server, tmp_path: Path) -> None:
    made = _copies(tmp_path / "problems")
    seen = _fail_after_one_call(fake_openai_server)
    out = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "AGENTRIG_", "RAY_"))}
    env.update(PYTHONPATH=str(agent_site), OPENAI_BASE_URL=fake_openai_server.base_url, OPENAI_API_KEY="sk-test-not-a-secret")
    argv = [
        str(Path(sys.executable).with_name("agentrig")), "run", *map(str, made), "--agent", "react",
        "--model", "openai/gpt-4o-mini", "-c", "model_options.retry.max_retries=1", "-c", "model_options.retry.initial_delay=0",
        "--executor", "ray", "-c", f"executor.address={ray_cluster.address}",
        "--retries", "2", "--retry-backoff", "0.2", "--output", str(out), "-q",
    ]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert all(count >= 4 for count in seen.values()), seen
    lines = [CheckpointResultLine.model_validate_json(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert sorted((x.problem, x.checkpoint, x.status, x.tries) for x in lines) == [
        (f"greeter_{t}", c, "passed", tries) for t in TAGS for c, tries in (("command_line", 2), ("greet_function", None))
    ]
    spent = 0.0
    for tag in TAGS:
        checkpoint = out / f"greeter_{tag}" / "command_line"
        kept = TryRecord.model_validate_json((checkpoint / "tries" / "1" / "try.json").read_bytes())
        assert kept.reason == "retries" and kept.cause.startswith("model error: ServerError")
        assert kept.result is not None and kept.result.status == "error" and kept.result.cost
        for name in ("prompt.txt", "inference_result.json", "evaluation.json", "trajectory.jsonl"):
            assert (checkpoint / "tries" / "1" / name).is_file(), name
        assert "model call failed" in (checkpoint / "tries" / "1" / "trajectory.jsonl").read_text()
        assert not (checkpoint / "tries" / "2").exists()
        spent += kept.result.cost
    run = RunRecord.model_validate_json((out / "run.json").read_bytes())
    assert run.status == "completed" and run.executor == "ray" and run.totals.passed == 4
    assert run.totals.cost is not None and abs(run.totals.cost - (sum(x.cost or 0.0 for x in lines) + spent)) < 1e-12
    assert run.totals.tries_spent is not None and run.totals.tries_spent.tries == 2
