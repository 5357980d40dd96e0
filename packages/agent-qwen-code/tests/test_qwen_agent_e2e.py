"""End to end: the real pinned ``qwen`` CLI, run by the agent in a local session, against the fake OpenAI API."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentrig.pricing import APIPricing
from agentrig.testing.cli_agents import record_steps
from agentrig.testing.cli_checkpoints import (
    check_api_error,
    check_connects_only_to_the_model,
    check_cost_limit,
    check_pinned_version_refused,
    check_session_continued,
    check_step_limit,
    check_time_limit,
)
from agentrig.trajectory import AgentTextStep, LLMCall, ToolUseStep, UserStep
from agentrig_qwen_code.agent import QwenCodeAgent

#: The conftest's credential value and prices (conftest modules are not importable under importlib mode).
API_KEY = "sk-test-qwen-secret-0123456789"
GPT5 = APIPricing(input=1.25, output=10.0, cache_read=0.125)

pytestmark = [pytest.mark.qwen_cli, pytest.mark.usefixtures("node_22_first_on_path")]


def shell(command: str, call_id: str | None = None) -> dict[str, Any]:
    """A call of the CLI's own shell tool, ``run_shell_command`` taking ``command``."""
    call: dict[str, Any] = {"name": "run_shell_command", "arguments": {"command": command}}
    if call_id:
        call["id"] = call_id
    return call


def test_shell_tool_creates_a_file_with_steps_usage_and_cost(
    make_agent: Callable[..., QwenCodeAgent], session: Any, fake_openai_server: Any, tmp_path: Path
) -> None:
    server = fake_openai_server
    server.add_reply("Creating it.", tool_calls=[shell("printf 'hi\\n' > made.txt; echo made")],
                     usage={"input": 1000, "output": 50, "cache_read": 200})
    server.add_reply("Done.", usage={"input": 1300, "output": 10})
    agent = make_agent()
    steps = record_steps(agent)
    agent.setup(session)
    assert agent.cli_version == "0.24.4"
    result = agent.run_checkpoint("Create made.txt containing hi.")
    assert not result.had_error, result.error_message
    assert result.stop_reason == "completed"
    assert (session.workspace.path / "made.txt").read_text() == "hi\n"
    assert isinstance(steps[0], UserStep) and steps[0].content == "Create made.txt containing hi."
    # the call's text, its usage (on the message carrying the tool call), the tool, the last call
    assert [s.kind for s in steps[1:]] == ["agent_text", "llm_call", "tool_use", "agent_text", "llm_call"]
    assert [s.content for s in steps if isinstance(s, AgentTextStep)] == ["Creating it.", "Done."]
    tool = next(s for s in steps if isinstance(s, ToolUseStep))
    assert tool.tool == "run_shell_command" and tool.arguments == {"command": "printf 'hi\\n' > made.txt; echo made"}
    assert tool.result is not None and "made" in tool.result and not tool.is_error and tool.tool_call_id
    # usage per model call, exact (the OpenAI prompt count includes its cached part)
    calls = [s for s in steps if isinstance(s, LLMCall)]
    assert [c.usage.input for c in calls] == [1000, 1300] and [c.usage.cache_read for c in calls] == [200, 0]
    assert [c.usage.output for c in calls] == [50, 10]
    assert all(c.model == "gpt-5" and c.request_id for c in calls)
    assert result.usage.steps == 2
    assert result.usage.net_tokens.input == 2300 and result.usage.net_tokens.cache_read == 200
    # the tracker equals the CLI's own total (its result event), and cost is the pricing of exactly that
    assert agent.outcome is not None and agent.outcome.cli_usage == result.usage.net_tokens
    assert result.usage.cost == pytest.approx(GPT5.get_cost(result.usage.net_tokens))
    assert sum(c.cost or 0 for c in calls) == pytest.approx(result.usage.cost)
    # the CLI spoke chat completions to the fake only, the key in a header, never on its command line
    requests = server.model_requests
    assert [r.path for r in requests] == ["/v1/chat/completions"] * 2
    assert requests[0].headers.get("authorization") == f"Bearer {API_KEY}"
    assert requests[0].body["model"] == "gpt-5"
    answer = [m for m in requests[1].body["messages"] if m["role"] == "tool"]
    assert answer and "made" in json.dumps(answer[-1]["content"])
    assert server.requests == requests  # nothing else was asked of the fake either
    assert agent.launch is not None and all(API_KEY not in arg for arg in agent.launch.argv)
    # artifacts: the raw stream, the session log, the outcome; no secret anywhere
    out = tmp_path / "artifacts"
    agent.save_artifacts(out)
    for name in ("stdout.jsonl", "session.jsonl", "trajectory.jsonl", "qwen_outcome.json", "qwen_launch.json",
                 "qwen_settings.json"):
        text = (out / name).read_text()
        assert text and API_KEY not in text, name
    assert json.loads((out / "qwen_outcome.json").read_text())["session_id"] == agent.session_id
    agent.cleanup()


def test_cost_limit_kills_the_cli_mid_tool(
    make_agent: Callable[..., QwenCodeAgent], session: Any, fake_openai_server: Any
) -> None:
    _, steps = check_cost_limit(make_agent, session, fake_openai_server, shell=shell)
    # the tool the CLI was running when it was killed is in the trajectory, marked interrupted
    tool = next(s for s in steps if isinstance(s, ToolUseStep))
    assert "SLEEPER" in tool.arguments["command"] and tool.is_error and tool.metadata == {"status": "interrupted"}


def test_time_limit_kills_the_cli_while_its_tool_runs(
    make_agent: Callable[..., QwenCodeAgent], session: Any, fake_openai_server: Any
) -> None:
    # the CLI takes seconds to start (tens of seconds on a loaded machine): the limit leaves it the time to reach
    # its tool (5 s did not, 30 s once did not under CI-like load)
    check_time_limit(make_agent, session, fake_openai_server, shell=shell, time_limit=60.0)


def test_step_limit_kills_the_cli_after_that_many_model_calls(
    make_agent: Callable[..., QwenCodeAgent], session: Any, fake_openai_server: Any
) -> None:
    check_step_limit(make_agent, session, fake_openai_server, shell=shell)


def test_next_checkpoint_resumes_the_session(
    make_agent: Callable[..., QwenCodeAgent], session: Any, fake_openai_server: Any
) -> None:
    # the CLI's result counts the whole session: the resumed run's own part is what is recorded (the kit checks it)
    check_session_continued(make_agent, session, fake_openai_server, session_attr="session_id",
                            launch_field="resumed_session", conversation=lambda request: json.dumps(request.body["messages"]))


def test_api_error_is_one_clear_error(
    make_agent: Callable[..., QwenCodeAgent], session: Any, fake_openai_server: Any
) -> None:
    check_api_error(make_agent, session, fake_openai_server, status=401, message="Incorrect API key provided.", api_key=API_KEY)


def test_wrong_pinned_version_is_refused(make_agent: Callable[..., QwenCodeAgent], session: Any) -> None:
    check_pinned_version_refused(make_agent, session, installed="0.24.4", pinned="0.1.0")


def test_the_cli_connects_to_nothing_but_the_model_endpoint(
    make_agent: Callable[..., QwenCodeAgent], session: Any, fake_openai_server: Any, qwen_bin: str, tmp_path: Path
) -> None:
    """Every socket the CLI (and what it starts) connects is the fake's: no DNS lookup, no usage statistics
    (without the settings agentrig writes, the CLI resolves ``*.rum.aliyuncs.com`` for them), no update check."""
    check_connects_only_to_the_model(make_agent, session, fake_openai_server, binary=qwen_bin, shell=shell, trace_dir=tmp_path)
