"""Test kit: the greeter run with ``--attempts`` and ``--resume`` by a CLI agent, the real CLI and a fake server.

Every CLI agent's ``test_*_resume_attempts.py`` plays the same two scenarios through ``agentrig run``; what
differs is its CLI: the shell tool the model calls, how a request shows it follows a tool's result, where the
conversation's text is, the outcome file and its session key. An agent's test describes these once as a
:class:`GreeterCli` and calls :func:`check_two_attempts` and :func:`check_killed_then_resumed`, then checks
what is its own (a cost, a session id) on the run directory they return.

The fake model answers by what it is asked, not in a fixed order: a request following a tool's result gets
"Done."; otherwise it writes ``greet.py`` for the checkpoint its conversation names (checkpoint 2's prompt is
the only one mentioning ``--shout``).
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentrig.testing.cli_agents import (
    GREETER_SOLUTION,
    agentrig_executable,
    cli_run_env,
    live_processes,
    sleeper_command,
    write_file_command,
)
from agentrig.testing.fake_server import FakeUsage

if TYPE_CHECKING:
    from agentrig.run.records import CheckpointResultLine
    from agentrig.testing.fake_server import FakeReply, RecordedRequest

#: The usage of every scripted reply.
USAGE = FakeUsage(input=700, output=30)


@dataclass(frozen=True)
class GreeterCli:
    """One CLI agent as the greeter scenarios drive it."""

    #: The agent type (``codex``) and the ``--model`` it runs.
    agent: str
    model: str
    #: The pinned CLI's path (``-c binary=``).
    binary: str
    #: The API key the run is given: it must show nowhere in the run directory or the output.
    api_key: str
    #: The provider's variables (key, base URL) and the prefixes of this process's variables left out.
    env: dict[str, str]
    drop_prefixes: tuple[str, ...]
    #: The agent's outcome file under ``agent/`` and the key of its CLI session (``thread_id``).
    outcome_file: str
    session_key: str
    #: A reply calling the CLI's shell tool with a command.
    shell: Callable[[str], FakeReply]
    #: Whether a request is the model's turn after a tool's result.
    after_tool: Callable[[RecordedRequest], bool]
    #: The text of a request's conversation (where ``--shout`` names checkpoint 2).
    conversation: Callable[[RecordedRequest], str]
    #: Deadlines for a hang, not speed limits: the ``--attempts`` run, checkpoint 2's tool starting, the resume.
    run_timeout: float = 400
    start_deadline: float = 180
    resume_timeout: float = 300

    def solve(self, request: RecordedRequest) -> FakeReply:
        """The greeter's solver: write the checkpoint's ``greet.py``, then say done."""
        from agentrig.testing.fake_server import FakeReply

        if self.after_tool(request):
            return FakeReply(text="Done.", usage=USAGE)
        second = "--shout" in self.conversation(request)
        return self.shell(write_file_command("greet.py", GREETER_SOLUTION[1 if second else 0]))

    def argv(self, repo: Path, out: Path, *extra: str) -> list[str]:
        """``agentrig run`` of the greeter example by this agent into ``out``."""
        return [agentrig_executable(), "run", str(repo / "examples" / "greeter"), "--agent", self.agent,
                "--model", self.model, "-c", f"binary={self.binary}", "--output", str(out), "-q", *extra]

    def outcome(self, checkpoint_dir: Path) -> dict[str, Any]:
        """The agent's outcome file of a checkpoint."""
        loaded: dict[str, Any] = json.loads((checkpoint_dir / "agent" / self.outcome_file).read_text())
        return loaded


def results(out: Path) -> list[CheckpointResultLine]:
    """The run's ``results.jsonl``, in order."""
    from agentrig.run.records import CheckpointResultLine

    return [CheckpointResultLine.model_validate_json(x) for x in (out / "results.jsonl").read_text().splitlines()]


def inference_usage(checkpoint_dir: Path) -> dict[str, Any]:
    """The usage agentrig recorded for a checkpoint (``inference_result.json``)."""
    usage: dict[str, Any] = json.loads((checkpoint_dir / "inference_result.json").read_text())["usage"]
    return usage


def check_two_attempts(cli: GreeterCli, server: Any, repo: Path, tmp_path: Path) -> Path:
    """``--attempts 2``: each attempt solves both checkpoints in its own CLI session; the run's directory."""
    from agentrig.run.records import RunRecord

    server.respond_with(cli.solve)
    out = tmp_path / "run"
    env = cli_run_env(*cli.drop_prefixes, **cli.env)
    done = subprocess.run(cli.argv(repo, out, "--attempts", "2"), env=env, capture_output=True, text=True,
                          timeout=cli.run_timeout, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    got = sorted((x.attempt, x.checkpoint, x.status, x.steps) for x in results(out))
    assert got == [(a, c, "passed", 2) for a in (1, 2) for c in ("command_line", "greet_function")]
    for attempt in (1, 2):
        for checkpoint in ("greet_function", "command_line"):
            where = out / "greeter" / f"attempt_{attempt}" / checkpoint
            recorded = inference_usage(where)["net_tokens"]
            assert cli.outcome(where)["cli_usage"] == recorded and recorded["input"] == 1400
    sessions = {cli.outcome(out / "greeter" / f"attempt_{a}" / "greet_function")[cli.session_key] for a in (1, 2)}
    assert len(sessions) == 2  # each attempt its own CLI session
    record = RunRecord.model_validate_json((out / "run.json").read_bytes())
    assert record.pass_at_k is not None
    solved = record.pass_at_k.problems["greeter"].solved
    assert (solved.n, solved.c, solved.pass_at_1) == (2, 2, 1.0)
    assert len(server.model_requests) == 8
    return out


def check_killed_then_resumed(cli: GreeterCli, server: Any, repo: Path, tmp_path: Path) -> Path:
    """Killed (SIGKILL) while checkpoint 2's tool runs, then ``--resume``: only checkpoint 2 is redone, the
    killed CLI's tree swept, nothing left in the temporary directory, the key nowhere; the run's directory."""
    from agentrig.run.records import RunRecord

    tag = f"{cli.agent.upper()}-RESUME-{time.monotonic_ns()}"  # names this test's tool among the machine's processes
    phase = {"resumed": False}

    def handler(request: RecordedRequest) -> FakeReply:
        if not phase["resumed"] and "--shout" in cli.conversation(request) and not cli.after_tool(request):
            return cli.shell(sleeper_command(tag, 300))  # checkpoint 2's tool runs until agentrig is killed
        return cli.solve(request)

    server.respond_with(handler)
    out, tmpdir = tmp_path / "run", tmp_path / "tmp"
    tmpdir.mkdir()
    env = cli_run_env(*cli.drop_prefixes, **cli.env, TMPDIR=str(tmpdir))
    argv = cli.argv(repo, out)
    runner = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        deadline = time.monotonic() + cli.start_deadline
        while not live_processes(tag):
            assert runner.poll() is None and time.monotonic() < deadline, "checkpoint 2's tool never started"
            time.sleep(0.1)
        first = results(out)
        assert [(x.checkpoint, x.status) for x in first] == [("greet_function", "passed")]
        runner.send_signal(signal.SIGKILL)  # nothing of agentrig can clean up: the CLI and its tool live on
        runner.wait(10)
        phase["resumed"] = True
        before = len(server.model_requests)
        resumed = subprocess.run([*argv, "--resume"], env=env, capture_output=True, text=True,
                                 timeout=cli.resume_timeout, cwd=tmp_path)
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
    again = server.model_requests[before:]
    assert len(again) == 2 and all("--shout" in x.raw_body for x in again)  # only checkpoint 2 asked the model
    where = out / "greeter" / "command_line"
    assert cli.outcome(where)["cli_usage"] == inference_usage(where)["net_tokens"]
    record = RunRecord.model_validate_json((out / "run.json").read_bytes())
    assert record.status == "completed" and len(record.resumed) == 1
    everything = "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())
    assert cli.api_key not in everything + resumed.stdout + resumed.stderr
    return out
