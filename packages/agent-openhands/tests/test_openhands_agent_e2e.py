"""End to end: the real pinned OpenHands SDK, run by the agent in a local session, against the fake OpenAI API."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentrig import AgentCostLimits
from agentrig.pricing import APIPricing
from agentrig.testing.cli_agents import live_processes, record_steps, sleeper_command
from agentrig.testing.cli_checkpoints import check_api_error, check_pinned_version_refused, check_session_continued, check_step_limit
from agentrig.trajectory import AgentTextStep, LLMCall, ToolUseStep, UserStep
from agentrig_openhands.agent import OpenHandsAgent

#: The conftest's credential value and prices (conftest modules are not importable under importlib mode).
API_KEY = "sk-test-openhands-secret-0123456789"
PRICING = APIPricing(input=2.5, output=10.0, cache_read=1.25)

pytestmark = pytest.mark.openhands


def shell(command: str, call_id: str | None = None) -> dict[str, Any]:
    """A call of OpenHands' own shell tool, ``terminal`` taking ``command``."""
    call: dict[str, Any] = {"name": "terminal", "arguments": {"command": command}}
    if call_id:
        call["id"] = call_id
    return call


def test_tools_edit_the_workspace_with_steps_usage_and_both_costs(
    make_agent: Callable[..., OpenHandsAgent], session: Any, fake_openai_server: Any, tmp_path: Path
) -> None:
    server = fake_openai_server
    server.add_reply("Creating it.", tool_calls=[shell("printf 'hi\\n' > made.txt; echo made")],
                     usage={"input": 1000, "output": 50})
    server.add_reply("Writing notes.", tool_calls=[{"name": "file_editor", "arguments": {
        "command": "create", "path": str(session.workspace.path / "notes.md"), "file_text": "# notes\n"}}],
        usage={"input": 1200, "output": 30})
    server.add_reply("Done.", usage={"input": 1300, "output": 10})
    agent = make_agent()
    steps = record_steps(agent)
    agent.setup(session)
    assert agent.cli_version == "1.58.2"
    result = agent.run_checkpoint("Create made.txt containing hi, and notes.md.")
    assert not result.had_error, result.error_message
    assert result.stop_reason == "completed"
    assert (session.workspace.path / "made.txt").read_text() == "hi\n"
    assert (session.workspace.path / "notes.md").read_text() == "# notes\n"
    assert isinstance(steps[0], UserStep)
    # each model call is recorded before what it asked for
    assert [s.kind for s in steps[1:]] == ["llm_call", "agent_text", "tool_use", "llm_call", "agent_text", "tool_use",
                                           "llm_call", "agent_text"]
    assert [s.content for s in steps if isinstance(s, AgentTextStep)] == ["Creating it.", "Writing notes.", "Done."]
    terminal, editor = [s for s in steps if isinstance(s, ToolUseStep)]
    assert terminal.tool == "terminal" and terminal.arguments["command"] == "printf 'hi\\n' > made.txt; echo made"
    assert terminal.result is not None and "made" in terminal.result and terminal.exit_code == 0 and not terminal.is_error
    assert editor.tool == "file_editor" and "created" in (editor.result or "") and not editor.is_error
    calls = [s for s in steps if isinstance(s, LLMCall)]
    assert [c.usage.input for c in calls] == [1000, 1200, 1300] and [c.usage.output for c in calls] == [50, 30, 10]
    assert all(c.model == "gpt-4o" and c.request_id for c in calls)
    assert result.usage.steps == 3 and result.usage.net_tokens.input == 3500 and result.usage.net_tokens.output == 90
    # the cost is the catalog's price of exactly these tokens, and OpenHands itself reported the same (no cached input)
    outcome = agent.outcome
    assert outcome is not None and outcome.cli_usage == result.usage.net_tokens
    assert result.usage.cost == pytest.approx(PRICING.get_cost(result.usage.net_tokens))
    assert outcome.openhands_cost == pytest.approx(result.usage.cost, rel=1e-9)
    assert outcome.catalog_cost == pytest.approx(result.usage.cost, rel=1e-9)
    assert [c.openhands_cost for c in outcome.calls] == pytest.approx([c.cost for c in calls], rel=1e-9)
    # the SDK spoke chat completions to the fake only, the key in a header, never on its command line
    requests = server.model_requests
    assert [r.path for r in requests] == ["/v1/chat/completions"] * 3
    assert requests[0].headers.get("authorization") == f"Bearer {API_KEY}"
    assert {t["function"]["name"] for t in requests[0].body["tools"]} >= {"terminal", "file_editor"}
    assert server.requests == requests
    assert agent.launch is not None and all(API_KEY not in arg for arg in agent.launch.argv)
    out = tmp_path / "artifacts"
    agent.save_artifacts(out)
    for name in ("stdout.jsonl", "stderr.log", "trajectory.jsonl", "openhands_outcome.json", "openhands_launch.json",
                 "openhands_run.json"):
        text = (out / name).read_text()
        assert API_KEY not in text, name
    saved = json.loads((out / "openhands_outcome.json").read_text())
    assert saved["openhands_cost"] == pytest.approx(saved["catalog_cost"]) and saved["sdk_version"] == "1.58.2"
    agent.cleanup()


def test_cached_input_is_priced_by_the_catalog_and_openhands_own_cost_is_kept(
    make_agent: Callable[..., OpenHandsAgent], session: Any, fake_openai_server: Any
) -> None:
    """OpenHands' custom prices have no cache price: its own cost charges cached input at the input price."""
    fake_openai_server.add_reply("Done.", usage={"input": 1000, "output": 10, "cache_read": 4000})
    agent = make_agent()
    agent.setup(session)
    result = agent.run_checkpoint("hi")
    assert not result.had_error, result.error_message
    assert result.usage.net_tokens.cache_read == 4000 and result.usage.net_tokens.input == 1000
    assert result.usage.cost == pytest.approx((1000 * 2.5 + 4000 * 1.25 + 10 * 10.0) / 1e6)
    assert agent.outcome is not None
    assert agent.outcome.openhands_cost == pytest.approx((5000 * 2.5 + 10 * 10.0) / 1e6)
    agent.cleanup()


def test_cost_limit_kills_openhands_mid_tool(
    make_agent: Callable[..., OpenHandsAgent], session: Any, fake_openai_server: Any
) -> None:
    server = fake_openai_server
    tag = f"OPENHANDS-SLEEPER-{time.monotonic_ns()}"
    # one expensive call (USD 2.50 of input) whose tool would run for a minute
    server.add_reply("Working.", tool_calls=[shell(sleeper_command(tag))], usage={"input": 1_000_000, "output": 10})
    server.add_reply("Never.")
    agent = make_agent(cost_limits=AgentCostLimits(cost_limit=1.0))
    steps = record_steps(agent)
    agent.setup(session)
    result = agent.run_checkpoint("spend money")
    assert not result.had_error, result.error_message
    assert result.stop_reason == "cost_limit"
    assert result.usage.cost >= 1.0 and result.usage.steps == 1
    assert len(server.model_requests) == 1
    # the driver reports a call's usage before what the call asked for: the kill comes as the tool starts, so the
    # trajectory holds the tool call without a result, or (killed before its line was read) not at all
    tools = [s for s in steps if isinstance(s, ToolUseStep)]
    assert all(tag in t.arguments["command"] and t.result is None for t in tools), tools
    time.sleep(0.3)
    assert live_processes(tag) == [], "processes of the killed driver survive"
    assert not (session.workspace.path / "late.txt").exists()
    agent.cleanup()


def test_time_limit_kills_openhands_mid_tool(
    make_agent: Callable[..., OpenHandsAgent], session: Any, fake_openai_server: Any
) -> None:
    """A checkpoint's ``time_limit`` ends the driver while the tool it runs waits (ten minutes): a limit, not an error.
    The limit leaves the SDK's start (tens of seconds on a loaded machine) room before the tool begins."""
    tag = f"OPENHANDS-TIMER-{time.monotonic_ns()}"
    # with a timeout the terminal blocks (without one it hands control back after 30 s without output)
    call = {"name": "terminal", "arguments": {"command": sleeper_command(tag, seconds=600), "timeout": 600}}
    fake_openai_server.add_reply("Waiting.", tool_calls=[call])
    fake_openai_server.add_reply("Never.")
    agent = make_agent(cost_limits=AgentCostLimits(time_limit=120))
    steps = record_steps(agent)
    agent.setup(session)
    result = agent.run_checkpoint("wait")
    assert not result.had_error, result.error_message
    assert result.stop_reason == "time_limit" and result.usage.steps == 1
    tool = next(s for s in steps if isinstance(s, ToolUseStep))
    assert tag in tool.arguments["command"] and tool.result is None  # killed while it ran
    time.sleep(0.3)
    assert live_processes(tag) == [], "processes of the killed driver survive"
    assert not (session.workspace.path / "late.txt").exists()
    agent.cleanup()


def test_step_limit_kills_openhands_after_that_many_model_calls(
    make_agent: Callable[..., OpenHandsAgent], session: Any, fake_openai_server: Any
) -> None:
    check_step_limit(make_agent, session, fake_openai_server, shell=shell)


def test_next_checkpoint_continues_the_conversation(
    make_agent: Callable[..., OpenHandsAgent], session: Any, fake_openai_server: Any
) -> None:
    check_session_continued(make_agent, session, fake_openai_server, session_attr="conversation_id",
                            launch_field="conversation_id", conversation=lambda request: json.dumps(request.body["messages"]))


def test_api_error_is_one_clear_error(
    make_agent: Callable[..., OpenHandsAgent], session: Any, fake_openai_server: Any
) -> None:
    check_api_error(make_agent, session, fake_openai_server, status=401, message="Incorrect API key provided.", api_key=API_KEY)


def test_wrong_pinned_version_is_refused(make_agent: Callable[..., OpenHandsAgent], session: Any) -> None:
    check_pinned_version_refused(make_agent, session, installed="1.58.2", pinned="1.0.0")


def test_openhands_connects_to_nothing_but_the_model_endpoint(
    make_agent: Callable[..., OpenHandsAgent], session: Any, fake_openai_server: Any, openhands_python: str,
    tmp_path: Path,
) -> None:
    """Every socket the driver (the SDK, LiteLLM, the tools' shell) connects is the fake's: no price-list download,
    no tracing, no DNS lookup."""
    import shutil
    import stat

    from agentrig.testing.prerequisites import require

    strace = shutil.which("strace")
    require(None if strace else "strace is not installed (apt-get install strace)", "strace is missing")
    trace = tmp_path / "connect.trace"
    wrapper = tmp_path / "python-traced"
    wrapper.write_text(f'#!/bin/sh\nexec {strace} -f -qq -o {trace} -e trace=connect {openhands_python} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    fake_openai_server.add_reply("Looking.", tool_calls=[shell("echo ok")])
    fake_openai_server.add_reply("Done.")
    agent = make_agent(binary=str(wrapper))
    agent.setup(session)
    result = agent.run_checkpoint("look around")
    assert not result.had_error, result.error_message
    connects = [line for line in trace.read_text().splitlines() if "AF_INET" in line]
    targets = {re.search(r"sin6?_port=htons\((\d+)\).*?addr(?:=inet_addr|\(AF_INET6)?\(?\"?([0-9a-f.:]+)", line).groups()
               for line in connects}
    assert targets == {(str(fake_openai_server.port), "127.0.0.1")}, connects
    agent.cleanup()
