"""``agentrig run --agent gemini_cli`` with ``--attempts`` and ``--resume``: the real CLI, the fake Gemini API.

The fake model answers by what it is asked, not in a fixed order: a request whose last content is a
tool's response gets "Done."; otherwise it writes ``greet.py`` for the checkpoint its contents name
(checkpoint 2's prompt is the only one mentioning ``--shout``).
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

pytestmark = pytest.mark.gemini_cli

API_KEY = "AIza-test-gemini-attempts-0123456789"
USAGE = {"input": 700, "output": 30}


def shell(command: str) -> FakeReply:
    """A reply calling the CLI's shell tool (``run_shell_command`` taking ``command``)."""
    return FakeReply(text="On it.", tool_calls=[FakeToolCall(name="run_shell_command", arguments={"command": command})], usage=USAGE)


def answers_a_tool(request: Any) -> bool:
    """Whether the request's last content carries a tool's response (the model's turn after a tool)."""
    contents = request.body.get("contents") or []
    parts = contents[-1].get("parts") if contents else []
    return any("functionResponse" in part for part in parts or [])


def solve(request: Any) -> FakeReply:
    """The greeter's solver: write the checkpoint's ``greet.py``, then say done."""
    if answers_a_tool(request):
        return FakeReply(text="Done.", usage=USAGE)
    second = "--shout" in json.dumps(request.body.get("contents") or [])
    return shell(write_file_command("greet.py", GREETER_SOLUTION[1 if second else 0]))


def greeter_run(repo: Path, out: Path, gemini_bin: str, *extra: str) -> list[str]:
    return [agentrig_executable(), "run", str(repo / "examples" / "greeter"), "--agent", "gemini_cli",
            "--model", "gemini/gemini-2.5-pro", "-c", f"binary={gemini_bin}", "--output", str(out), "-q", *extra]


def results(out: Path) -> list[CheckpointResultLine]:
    return [CheckpointResultLine.model_validate_json(x) for x in (out / "results.jsonl").read_text().splitlines()]


def cli_usage(checkpoint_dir: Path) -> dict[str, Any]:
    """The CLI's own total for the checkpoint and what agentrig recorded."""
    outcome = json.loads((checkpoint_dir / "agent" / "gemini_outcome.json").read_text())
    inference = json.loads((checkpoint_dir / "inference_result.json").read_text())
    return {"cli": outcome["cli_usage"], "recorded": inference["usage"]["net_tokens"]}


def test_two_attempts_each_solve_the_greeter_in_their_own_session(
    request: pytest.FixtureRequest, fake_gemini_server: Any, gemini_bin: str, tmp_path: Path
) -> None:
    fake_gemini_server.respond_with(solve)
    out = tmp_path / "run"
    env = cli_run_env("GEMINI_", "GOOGLE_", GEMINI_API_KEY=API_KEY, GOOGLE_GEMINI_BASE_URL=fake_gemini_server.base_url)
    argv = greeter_run(Path(request.config.rootpath), out, gemini_bin, "--attempts", "2")
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=400, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    got = sorted((x.attempt, x.checkpoint, x.status, x.steps) for x in results(out))
    assert got == [(a, c, "passed", 2) for a in (1, 2) for c in ("command_line", "greet_function")]
    for attempt in (1, 2):
        for checkpoint in ("greet_function", "command_line"):
            usage = cli_usage(out / "greeter" / f"attempt_{attempt}" / checkpoint)
            assert usage["cli"] == usage["recorded"] and usage["recorded"]["input"] == 1400
    sessions = {json.loads((out / "greeter" / f"attempt_{a}" / "greet_function" / "agent" / "gemini_outcome.json")
                           .read_text())["session_id"] for a in (1, 2)}
    assert len(sessions) == 2  # each attempt its own CLI session
    record = RunRecord.model_validate_json((out / "run.json").read_bytes())
    assert record.pass_at_k is not None
    solved = record.pass_at_k.problems["greeter"].solved
    assert (solved.n, solved.c, solved.pass_at_1) == (2, 2, 1.0)
    assert len(fake_gemini_server.model_requests) == 8


def test_killed_in_checkpoint_2_mid_tool_then_resumed_redoes_only_checkpoint_2(
    request: pytest.FixtureRequest, fake_gemini_server: Any, gemini_bin: str, tmp_path: Path
) -> None:
    tag = f"GEMINI-RESUME-{time.monotonic_ns()}"  # names this test's tool among every process of the machine
    phase = {"resumed": False}

    def handler(req: Any) -> FakeReply:
        if not phase["resumed"] and "--shout" in json.dumps(req.body.get("contents") or []) and not answers_a_tool(req):
            return shell(sleeper_command(tag, 300))  # checkpoint 2's tool runs until agentrig is killed
        return solve(req)

    fake_gemini_server.respond_with(handler)
    out, tmpdir = tmp_path / "run", tmp_path / "tmp"
    tmpdir.mkdir()
    env = cli_run_env("GEMINI_", "GOOGLE_", GEMINI_API_KEY=API_KEY, GOOGLE_GEMINI_BASE_URL=fake_gemini_server.base_url,
                      TMPDIR=str(tmpdir))
    argv = greeter_run(Path(request.config.rootpath), out, gemini_bin)
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
        before = len(fake_gemini_server.model_requests)
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
    again = fake_gemini_server.model_requests[before:]
    assert len(again) == 2 and all("--shout" in x.raw_body for x in again)  # only checkpoint 2 asked the model
    usage = cli_usage(out / "greeter" / "command_line")
    assert usage["cli"] == usage["recorded"]
    record = RunRecord.model_validate_json((out / "run.json").read_bytes())
    assert record.status == "completed" and len(record.resumed) == 1
    everything = "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())
    assert API_KEY not in everything + resumed.stdout + resumed.stderr
