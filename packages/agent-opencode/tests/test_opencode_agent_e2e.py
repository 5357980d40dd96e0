"""End to end: the real pinned ``opencode`` CLI, run by the agent in a local session, against the fake OpenAI server."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentrig import AgentCostLimits
from agentrig.pricing import APIPricing
from agentrig.testing.cli_checkpoints import check_api_error, check_pinned_version_refused, check_session_continued
from agentrig.testing.fake_server import Fault
from agentrig.testing.prerequisites import require
from agentrig.trajectory import LLMCall, ToolUseStep, UserStep
from agentrig_opencode.agent import OpenCodeAgent

#: The conftest's credential value and prices (conftest modules are not importable under importlib mode).
API_KEY = "sk-test-opencode-secret-0123456789"
GPT5 = APIPricing(input=1.25, output=10.0, cache_read=0.125)

pytestmark = pytest.mark.opencode_cli


def bash(command: str, call_id: str | None = None) -> dict[str, Any]:
    """A call of OpenCode's own shell tool, ``bash`` taking ``command``."""
    call: dict[str, Any] = {"name": "bash", "arguments": {"command": command, "description": "run it"}}
    if call_id:
        call["id"] = call_id
    return call


def run_steps(agent: OpenCodeAgent) -> list[Any]:
    steps: list[Any] = []
    agent.add_step_listener(steps.append)
    return steps


def strace_wrapper(tmp_path: Path, binary: str) -> tuple[str, Path]:
    """An executable running ``binary`` under strace, and the trace file (every network and file-writing call)."""
    strace = shutil.which("strace")
    require(None if strace else "strace is not installed (apt-get install strace)", "strace is missing")
    trace = tmp_path / "strace.txt"
    wrapper = tmp_path / "opencode-traced"
    calls = "connect,openat,open,creat,mkdir,mkdirat,rename,renameat,renameat2,unlink,unlinkat,rmdir,link,symlink"
    wrapper.write_text(f'#!/bin/sh\nexec {strace} -f -qq -y -o {trace} -e trace={calls} {binary} "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper), trace


_DIRFD_PATH = re.compile(r'\d+<([^>]*)>, "([^"]*)"')
_PATH = re.compile(r'"([^"]*)"')
_WRITES = ("mkdir", "mkdirat", "rename", "renameat", "renameat2", "unlink", "unlinkat", "rmdir", "link", "symlink")


def written_paths(call: str) -> list[str]:
    """The paths a traced call names (a name relative to a directory descriptor joined to it; strace -y)."""
    paths = [f"{d.rstrip('/')}/{name}" for d, name in _DIRFD_PATH.findall(call) if not name.startswith("/")]
    return paths + [p for p in _PATH.findall(call) if p.startswith("/")]


def outside_writes(trace: Path, allowed: list[Path]) -> list[str]:
    """The successful writes (creating opens, mkdir, rename, unlink, ...) of the trace outside ``allowed``.

    A name relative to the working directory is in the workspace (the CLI runs there).
    """
    bad = []
    for line in trace.read_text().splitlines():
        call = line.split(" ", 1)[1].lstrip() if " " in line else line
        if re.search(r"= -1 E", call):
            continue
        name = call.split("(", 1)[0]
        if name.startswith("open") or name == "creat":
            if not re.search(r"O_WRONLY|O_RDWR|O_CREAT", call):
                continue
        elif name not in _WRITES:
            continue
        for path in written_paths(call):
            if not path.startswith("/dev/") and not any(path == str(a) or path.startswith(f"{a}/") for a in allowed):
                bad.append(line)
    return bad


def test_bash_tool_creates_a_file_with_usage_and_cost_equal_to_the_cli_and_no_outside_traffic_or_writes(
    make_agent: Callable[..., OpenCodeAgent], session: Any, fake_openai_server: Any, opencode_bin: str, tmp_path: Path
) -> None:
    server = fake_openai_server
    server.add_reply("Creating it.", thinking="Use bash.", tool_calls=[bash("printf 'hi\\n' > made.txt", "call_make")],
                     usage={"input": 1000, "output": 50, "cache_read": 200, "reasoning": 20})
    server.add_reply("Done.", usage={"input": 1300, "output": 10})
    traced, trace = strace_wrapper(tmp_path, opencode_bin)
    agent = make_agent(binary=traced)
    steps = run_steps(agent)
    agent.setup(session)
    assert agent.cli_version == "1.18.33"
    result = agent.run_checkpoint("Create made.txt containing hi.")
    assert not result.had_error, result.error_message
    assert result.stop_reason == "completed"
    assert (session.workspace.path / "made.txt").read_text() == "hi\n"
    assert isinstance(steps[0], UserStep) and steps[0].content == "Create made.txt containing hi."
    assert [s.kind for s in steps[1:]] == ["thinking", "agent_text", "tool_use", "llm_call", "agent_text", "llm_call"]
    tool = next(s for s in steps if isinstance(s, ToolUseStep))
    assert tool.tool == "bash" and tool.arguments["command"] == "printf 'hi\\n' > made.txt"
    assert tool.exit_code == 0 and not tool.is_error and tool.tool_call_id == "call_make"
    # usage per model call, exact; cost equal to the CLI's own figure, per call and in total
    calls = [s for s in steps if isinstance(s, LLMCall)]
    assert [c.usage.input for c in calls] == [1000, 1300] and [c.usage.cache_read for c in calls] == [200, 0]
    assert calls[0].usage.output == 50 and calls[0].usage.reasoning == 20
    assert result.usage.steps == 2
    outcome = agent.outcome
    assert outcome is not None and outcome.cli_usage == result.usage.net_tokens
    assert result.usage.cost == pytest.approx(outcome.cli_cost) and outcome.cli_cost > 0
    assert result.usage.cost == pytest.approx(GPT5.get_cost(result.usage.net_tokens))
    # the CLI spoke chat completions to the fake only (no title call), the key in a header, never on its command line
    requests = server.model_requests
    assert len(requests) == 2 and all(r.path == "/v1/chat/completions" and r.stream for r in requests)
    assert requests[0].headers.get("authorization") == f"Bearer {API_KEY}"
    assert '"call_make"' in requests[1].raw_body
    assert agent.launch is not None and all(API_KEY not in arg for arg in agent.launch.argv)
    # no connection but to the fake server on 127.0.0.1; no write outside the session (home, workspace) and /dev
    inet = [line for line in trace.read_text().splitlines() if "connect(" in line and "AF_INET" in line]
    assert inet and all('inet_addr("127.0.0.1")' in line or "inet_pton(AF_INET6, \"::1\"" in line for line in inet), inet
    session_dir = session.workspace.path.parent
    assert outside_writes(trace, [session_dir, tmp_path, Path(os.path.realpath(session_dir))]) == []
    # artifacts: the raw stream, the outcome, the launch, the CLI's config; no secret anywhere
    out = tmp_path / "artifacts"
    agent.save_artifacts(out)
    for name in ("stdout.jsonl", "trajectory.jsonl", "opencode_outcome.json", "opencode_launch.json", "opencode_config.json"):
        text = (out / name).read_text()
        assert text and API_KEY not in text, name
    assert json.loads((out / "opencode_outcome.json").read_text())["session_id"] == agent.session_id
    assert json.loads((out / "opencode_config.json").read_text())["provider"]["agentrig"]["options"]["apiKey"] == (
        "{env:OPENAI_API_KEY}"
    )
    agent.cleanup()


def test_cost_limit_kills_the_cli_while_its_next_model_call_runs(
    make_agent: Callable[..., OpenCodeAgent], session: Any, fake_openai_server: Any
) -> None:
    server = fake_openai_server
    # one expensive call (USD 1.25 of input); the next call's answer never comes (the run returns only
    # if the limit kills the CLI: else pytest-timeout ends the test)
    server.add_reply("Working.", tool_calls=[bash("echo one > one.txt")], usage={"input": 1_000_000, "output": 10})
    server.enqueue(Fault(stall=float("inf")))
    agent = make_agent(cost_limits=AgentCostLimits(cost_limit=1.0))
    agent.setup(session)
    result = agent.run_checkpoint("spend money")
    assert not result.had_error, result.error_message
    assert result.stop_reason == "cost_limit"
    assert result.usage.cost >= 1.0 and result.usage.steps == 1
    assert (session.workspace.path / "one.txt").exists()
    agent.cleanup()


def test_time_limit_kills_the_cli_mid_tool(
    make_agent: Callable[..., OpenCodeAgent], session: Any, fake_openai_server: Any
) -> None:
    server = fake_openai_server
    command = "touch started.txt; python3 -c 'import time; time.sleep(600)' OPENCODE-SLEEPER; echo late > late.txt"
    server.add_reply("Working.", tool_calls=[bash(command)])
    server.add_reply("Never.")
    agent = make_agent(cost_limits=AgentCostLimits(time_limit=60))
    agent.setup(session)
    result = agent.run_checkpoint("wait")
    assert result.stop_reason == "time_limit" and not result.had_error, result.error_message
    assert (session.workspace.path / "started.txt").exists(), "the limit struck before the tool ran"
    time.sleep(0.3)
    leftover = os.popen("pgrep -f 'OPENCODE-[S]LEEPER'").read().strip()
    assert leftover == "", f"processes of the killed CLI survive: {leftover}"
    assert not (session.workspace.path / "late.txt").exists()
    assert len(server.model_requests) == 1
    agent.cleanup()


def test_next_checkpoint_continues_the_session(
    make_agent: Callable[..., OpenCodeAgent], session: Any, fake_openai_server: Any
) -> None:
    check_session_continued(make_agent, session, fake_openai_server, session_attr="session_id",
                            launch_field="continued_session", conversation=lambda request: request.raw_body)


def test_api_error_is_one_clear_error(
    make_agent: Callable[..., OpenCodeAgent], session: Any, fake_openai_server: Any
) -> None:
    check_api_error(make_agent, session, fake_openai_server, status=401, message="bad key", api_key=API_KEY)


def test_wrong_pinned_version_is_refused(make_agent: Callable[..., OpenCodeAgent], session: Any) -> None:
    check_pinned_version_refused(make_agent, session, installed="1.18.33", pinned="0.1.0")
