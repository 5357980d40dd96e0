"""``agentrig run --agent opencode`` with ``--attempts`` and ``--resume``: the real CLI, the fake OpenAI server.

The fake model answers by what it is asked, not in a fixed order: a request whose last message is a tool's
result gets "Done."; otherwise it writes ``greet.py`` for the checkpoint its messages name (checkpoint 2's
prompt is the only one mentioning ``--shout``) with OpenCode's ``bash`` tool.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from agentrig.run.records import CheckpointResultLine, RunRecord
from agentrig.testing.cli_agents import (
    GREETER_SOLUTION,
    agentrig_executable,
    cli_run_env,
    live_processes,
    sleeper_command,
    write_file_command,
)
from agentrig.testing.fake_server import FakeReply, FakeToolCall

pytestmark = pytest.mark.opencode_cli

API_KEY = "sk-test-opencode-attempts-0123456789"
USAGE = {"input": 700, "output": 30}


def shell(command: str) -> FakeReply:
    """A reply calling OpenCode's shell tool (``bash`` taking ``command`` and ``description``)."""
    call = FakeToolCall(name="bash", arguments={"command": command, "description": "run it"})
    return FakeReply(text="On it.", tool_calls=[call], usage=USAGE)


def solve(request: Any) -> FakeReply:
    """The greeter's solver: write the checkpoint's ``greet.py``, then say done."""
    messages = request.body.get("messages") or []
    if messages and messages[-1].get("role") == "tool":
        return FakeReply(text="Done.", usage=USAGE)
    second = "--shout" in json.dumps(messages)
    return shell(write_file_command("greet.py", GREETER_SOLUTION[1 if second else 0]))


def greeter_run(repo: Path, out: Path, opencode_bin: str, *extra: str) -> list[str]:
    return [agentrig_executable(), "run", str(repo / "examples" / "greeter"), "--agent", "opencode",
            "--model", "openai/gpt-5", "-c", f"binary={opencode_bin}", "--output", str(out), "-q", *extra]


def results(out: Path) -> list[CheckpointResultLine]:
    return [CheckpointResultLine.model_validate_json(x) for x in (out / "results.jsonl").read_text().splitlines()]


def cli_usage(checkpoint_dir: Path) -> dict[str, Any]:
    """The CLI's own total for the checkpoint and what agentrig recorded."""
    outcome = json.loads((checkpoint_dir / "agent" / "opencode_outcome.json").read_text())
    inference = json.loads((checkpoint_dir / "inference_result.json").read_text())
    return {"cli": outcome["cli_usage"], "recorded": inference["usage"]["net_tokens"],
            "cli_cost": outcome["cli_cost"], "cost": inference["usage"]["cost"]}


def test_two_attempts_each_solve_the_greeter_in_their_own_workspace(
    request: pytest.FixtureRequest, fake_openai_server: Any, opencode_bin: str, tmp_path: Path
) -> None:
    fake_openai_server.respond_with(solve)
    out = tmp_path / "run"
    env = cli_run_env("OPENAI_", OPENAI_API_KEY=API_KEY, OPENAI_BASE_URL=fake_openai_server.base_url)
    argv = greeter_run(Path(request.config.rootpath), out, opencode_bin, "--attempts", "2")
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=400, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    got = sorted((x.attempt, x.checkpoint, x.status, x.steps) for x in results(out))
    assert got == [(a, c, "passed", 2) for a in (1, 2) for c in ("command_line", "greet_function")]
    for attempt in (1, 2):
        for checkpoint in ("greet_function", "command_line"):
            usage = cli_usage(out / "greeter" / f"attempt_{attempt}" / checkpoint)
            assert usage["cli"] == usage["recorded"] and usage["recorded"]["input"] == 1400
            assert usage["cost"] == pytest.approx(usage["cli_cost"]) and usage["cost"] > 0
    sessions = {json.loads((out / "greeter" / f"attempt_{a}" / "greet_function" / "agent" / "opencode_outcome.json")
                           .read_text())["session_id"] for a in (1, 2)}
    assert len(sessions) == 2 and None not in sessions  # each attempt its own OpenCode session
    record = RunRecord.model_validate_json((out / "run.json").read_bytes())
    assert record.pass_at_k is not None
    solved = record.pass_at_k.problems["greeter"].solved
    assert (solved.n, solved.c, solved.pass_at_1) == (2, 2, 1.0)
    assert len(fake_openai_server.model_requests) == 8


def test_killed_in_checkpoint_2_mid_tool_then_resumed_redoes_only_checkpoint_2(
    request: pytest.FixtureRequest, fake_openai_server: Any, opencode_bin: str, tmp_path: Path
) -> None:
    tag = f"OPENCODE-RESUME-{time.monotonic_ns()}"  # names this test's tool among every process of the machine
    phase = {"resumed": False}

    def handler(req: Any) -> FakeReply:
        messages = req.body.get("messages") or []
        if not phase["resumed"] and "--shout" in json.dumps(messages) and messages[-1].get("role") != "tool":
            return shell(sleeper_command(tag, 300))  # checkpoint 2's tool runs until agentrig is killed
        return solve(req)

    fake_openai_server.respond_with(handler)
    out, tmpdir = tmp_path / "run", tmp_path / "tmp"
    tmpdir.mkdir()
    env = cli_run_env("OPENAI_", OPENAI_API_KEY=API_KEY, OPENAI_BASE_URL=fake_openai_server.base_url, TMPDIR=str(tmpdir))
    argv = greeter_run(Path(request.config.rootpath), out, opencode_bin)
    runner = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 180  # a deadline for a hang, not a speed limit
        while not live_processes(tag):
            assert runner.poll() is None and time.monotonic() < deadline, "checkpoint 2's tool never started"
            time.sleep(0.1)
        first = results(out)
        assert [(x.checkpoint, x.status) for x in first] == [("greet_function", "passed")]
        runner.send_signal(signal.SIGKILL)  # nothing of agentrig can clean up: the CLI and its tool live on
        runner.wait(10)
        phase["resumed"] = True
        before = len(fake_openai_server.model_requests)
        resumed = subprocess.run([*argv, "--resume"], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        # the killed run's CLI tree is swept, the temporary directory left clean
        assert live_processes(tag) == []
        assert sorted(p.name for p in tmpdir.iterdir() if p.name.startswith("agentrig")) == []
    finally:
        if runner.poll() is None:
            runner.kill()
        for line in live_processes(tag):
            print("left running:", line)
    lines = results(out)
    assert [(x.checkpoint, x.status) for x in lines] == [("greet_function", "passed"), ("command_line", "passed")]
    assert lines[0] == first[0]  # checkpoint 1's record is kept as it was, not redone
    again = fake_openai_server.model_requests[before:]
    assert len(again) == 2 and all("--shout" in x.raw_body for x in again)  # only checkpoint 2 asked the model
    usage = cli_usage(out / "greeter" / "command_line")
    assert usage["cli"] == usage["recorded"] and usage["cost"] == pytest.approx(usage["cli_cost"])
    record = RunRecord.model_validate_json((out / "run.json").read_bytes())
    assert record.status == "completed" and len(record.resumed) == 1
    everything = "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())
    assert API_KEY not in everything + resumed.stdout + resumed.stderr
