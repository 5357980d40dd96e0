"""End to end: the real pinned ``gemini`` CLI, run by the agent in a local session, against the fake Gemini API."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentrig import AgentCostLimits
from agentrig.model_definition import ThinkingPreset
from agentrig.pricing import APIPricing
from agentrig.testing.cli_agents import live_processes, record_steps, sleeper_command
from agentrig.testing.cli_checkpoints import (
    check_api_error,
    check_connects_only_to_the_model,
    check_pinned_version_refused,
    check_session_continued,
    check_step_limit,
)
from agentrig.trajectory import AgentTextStep, LLMCall, ThinkingStep, ToolUseStep, UserStep
from agentrig_gemini_cli.agent import GeminiCliAgent

#: The conftest's credential value and prices (conftest modules are not importable under importlib mode).
API_KEY = "AIza-test-gemini-secret-0123456789"
GEMINI_PRO = APIPricing(input=1.25, output=10.0, cache_read=0.125)

pytestmark = pytest.mark.gemini_cli


def shell(command: str, call_id: str | None = None) -> dict[str, Any]:
    """A call of the CLI's own shell tool, ``run_shell_command`` taking ``command``."""
    call: dict[str, Any] = {"name": "run_shell_command", "arguments": {"command": command}}
    if call_id:
        call["id"] = call_id
    return call


def test_shell_tool_creates_a_file_with_steps_usage_and_cost(
    make_agent: Callable[..., GeminiCliAgent], session: Any, fake_gemini_server: Any, tmp_path: Path
) -> None:
    server = fake_gemini_server
    server.add_reply("Creating it.", thinking="Use the shell.", tool_calls=[shell("printf 'hi\\n' > made.txt; echo made")],
                     usage={"input": 1000, "output": 50, "cache_read": 200, "reasoning": 20})
    server.add_reply("Done.", usage={"input": 1300, "output": 10})
    agent = make_agent()
    steps = record_steps(agent)
    agent.setup(session)
    assert agent.cli_version == "0.61.0"
    result = agent.run_checkpoint("Create made.txt containing hi.")
    assert not result.had_error, result.error_message
    assert result.stop_reason == "completed"
    assert (session.workspace.path / "made.txt").read_text() == "hi\n"
    assert isinstance(steps[0], UserStep) and steps[0].content == "Create made.txt containing hi."
    # an LLMCall is recorded when the CLI logs the reply (at its end, while its tool may already run):
    # its place among the stream's steps depends on that timing, not its content
    kinds = [s.kind for s in steps[1:]]
    assert [k for k in kinds if k not in ("llm_call", "thinking")] == ["agent_text", "tool_use", "agent_text"]
    assert kinds.count("llm_call") == 2
    texts = [s.content for s in steps if isinstance(s, AgentTextStep)]
    assert texts == ["Creating it.", "Done."]
    tool = next(s for s in steps if isinstance(s, ToolUseStep))
    assert tool.tool == "run_shell_command" and tool.arguments == {"command": "printf 'hi\\n' > made.txt; echo made"}
    assert tool.result == "made" and not tool.is_error and tool.elapsed is not None and tool.tool_call_id
    # the model's thought summary comes from the CLI's session log
    assert any(isinstance(s, ThinkingStep) and "Use the shell." in s.content for s in steps)
    # usage per model call, exact (Gemini's prompt counts cached input; thoughts are output)
    calls = [s for s in steps if isinstance(s, LLMCall)]
    assert [c.usage.input for c in calls] == [1000, 1300] and [c.usage.cache_read for c in calls] == [200, 0]
    assert [c.usage.output for c in calls] == [50, 10] and calls[0].usage.reasoning == 20
    assert all(c.model == "gemini-2.5-pro" and c.request_id for c in calls)
    assert result.usage.steps == 2
    assert result.usage.net_tokens.input == 2300 and result.usage.net_tokens.output == 60
    # the tracker equals the CLI's own total (its result event), and cost is the pricing of exactly that
    assert agent.outcome is not None and agent.outcome.cli_usage == result.usage.net_tokens
    assert agent.outcome.stats is not None and agent.outcome.stats.total_tokens == 1200 + 50 + 1300 + 10
    assert result.usage.cost == pytest.approx(GEMINI_PRO.get_cost(result.usage.net_tokens))
    assert sum(c.cost or 0 for c in calls) == pytest.approx(result.usage.cost)
    # the CLI spoke the Gemini API to the fake only, the key in a header, never on its command line
    requests = server.model_requests
    assert [r.path for r in requests] == ["/v1beta/models/gemini-2.5-pro:streamGenerateContent"] * 2
    assert all(r.query == {"alt": "sse"} for r in requests)
    assert requests[0].headers.get("x-goog-api-key") == API_KEY
    answer = requests[1].body["contents"][-1]["parts"][0]["functionResponse"]
    assert answer["name"] == "run_shell_command" and "made" in json.dumps(answer["response"])
    assert server.requests == requests  # nothing else was asked of the fake either
    assert agent.launch is not None and all(API_KEY not in arg for arg in agent.launch.argv)
    # artifacts: the raw stream, the session log, the outcome; no secret anywhere
    out = tmp_path / "artifacts"
    agent.save_artifacts(out)
    for name in ("stdout.jsonl", "session.jsonl", "trajectory.jsonl", "gemini_outcome.json", "gemini_launch.json",
                 "gemini_settings.json"):
        text = (out / name).read_text()
        assert text and API_KEY not in text, name
    assert json.loads((out / "gemini_outcome.json").read_text())["session_id"] == agent.session_id
    agent.cleanup()


def test_thinking_preset_becomes_the_clis_thinking_budget(
    make_agent: Callable[..., GeminiCliAgent], session: Any, fake_gemini_server: Any, model_def: Any, credential: Any
) -> None:
    from agentrig.agents.interface import Agent, AgentContext
    from agentrig_gemini_cli.config import GeminiCliConfig

    fake_gemini_server.add_reply("Fine.")
    config = GeminiCliConfig(binary=make_agent().config.binary, base_url=fake_gemini_server.base_url)
    context = AgentContext(model=model_def, credential=credential, problem_name="t", thinking_preset=ThinkingPreset.LOW)
    agent = Agent.from_config(config, context)
    agent.setup(session)
    result = agent.run_checkpoint("hi")
    assert not result.had_error, result.error_message
    (request,) = fake_gemini_server.model_requests
    thinking = request.body["generationConfig"]["thinkingConfig"]
    assert thinking["thinkingBudget"] == ThinkingPreset.LOW.budget_tokens() == 2048
    agent.cleanup()


def test_cost_limit_kills_the_cli_mid_tool(
    make_agent: Callable[..., GeminiCliAgent], session: Any, fake_gemini_server: Any
) -> None:
    server = fake_gemini_server
    # one expensive call (USD 1.25 of input) whose tool would run for a minute
    command = sleeper_command("GEMINI-SLEEPER")
    server.add_reply("Working.", tool_calls=[shell(command)], usage={"input": 1_000_000, "output": 10})
    server.add_reply("Never.")
    agent = make_agent(cost_limits=AgentCostLimits(cost_limit=1.0))
    steps = record_steps(agent)
    agent.setup(session)
    result = agent.run_checkpoint("spend money")
    assert not result.had_error, result.error_message
    assert result.stop_reason == "cost_limit"
    assert result.usage.cost >= 1.0 and result.usage.steps == 1
    assert len(server.model_requests) == 1
    # the tool the CLI was running when it was killed is in the trajectory, marked interrupted
    tool = next(s for s in steps if isinstance(s, ToolUseStep))
    assert "GEMINI-SLEEPER" in tool.arguments["command"] and tool.is_error and tool.metadata == {"status": "interrupted"}
    time.sleep(0.3)
    leftover = live_processes("GEMINI-SLEEPER")
    assert leftover == [], f"processes of the killed CLI survive: {leftover}"
    assert not (session.workspace.path / "late.txt").exists()
    agent.cleanup()


def test_step_limit_kills_the_cli_after_that_many_model_calls(
    make_agent: Callable[..., GeminiCliAgent], session: Any, fake_gemini_server: Any
) -> None:
    check_step_limit(make_agent, session, fake_gemini_server, shell=shell)


def test_next_checkpoint_resumes_the_session(
    make_agent: Callable[..., GeminiCliAgent], session: Any, fake_gemini_server: Any
) -> None:
    # the CLI counts one process's calls: the resumed run's total is its own (the kit checks it is recorded as such)
    check_session_continued(make_agent, session, fake_gemini_server, session_attr="session_id",
                            launch_field="resumed_session", conversation=lambda request: json.dumps(request.body["contents"]))


def test_api_error_is_one_clear_error(
    make_agent: Callable[..., GeminiCliAgent], session: Any, fake_gemini_server: Any
) -> None:
    check_api_error(make_agent, session, fake_gemini_server, status=400,
                    message="API key not valid. Please pass a valid API key.", api_key=API_KEY, max_attempts=1)


def test_wrong_pinned_version_is_refused(make_agent: Callable[..., GeminiCliAgent], session: Any) -> None:
    check_pinned_version_refused(make_agent, session, installed="0.61.0", pinned="0.1.0")


def test_the_cli_connects_to_nothing_but_the_model_endpoint(
    make_agent: Callable[..., GeminiCliAgent], session: Any, fake_gemini_server: Any, gemini_bin: str, tmp_path: Path
) -> None:
    """Every socket the CLI (and what it starts) connects is the fake's: no DNS lookup, no usage statistics
    (without the settings agentrig writes, the CLI resolves play.googleapis.com for Clearcut), no update check."""
    check_connects_only_to_the_model(make_agent, session, fake_gemini_server, binary=gemini_bin, shell=shell, trace_dir=tmp_path)
