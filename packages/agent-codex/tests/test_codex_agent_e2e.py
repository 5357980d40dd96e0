"""End to end: the real pinned ``codex`` CLI, run by the agent in a local session, against the fake Responses API."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentrig import AgentSetupError
from agentrig.testing.cli_agents import CliAgentKit, record_steps
from agentrig.testing.cli_checkpoints import check_cost_limit, check_session_continued, check_step_limit, check_time_limit
from agentrig.trajectory import ErrorStep, LLMCall, ToolUseStep, UserStep
from agentrig_codex.agent import CodexAgent

pytestmark = pytest.mark.codex_cli


def shell(command: str, call_id: str | None = None) -> dict[str, Any]:
    """A call of the CLI's own shell tool, ``exec_command`` taking ``cmd``."""
    call: dict[str, Any] = {"name": "exec_command", "arguments": {"cmd": command}}
    if call_id:
        call["id"] = call_id
    return call


def test_shell_tool_creates_a_file_with_steps_usage_and_cost(
    make_agent: Callable[..., CodexAgent], session: Any, fake_openai_server: Any, tmp_path: Path, cli_kit: CliAgentKit
) -> None:
    api_key = cli_kit.api_key
    server = fake_openai_server
    server.add_reply("Creating it.", thinking="Use the shell.", tool_calls=[shell("printf 'hi\\n' > made.txt", "call_make")],
                     usage={"input": 1000, "output": 50, "cache_read": 200, "reasoning": 20})
    server.add_reply("Done.", usage={"input": 1300, "output": 10})
    agent = make_agent()
    steps = record_steps(agent)
    agent.setup(session)
    assert agent.cli_version == "0.169.0"
    result = agent.run_checkpoint("Create made.txt containing hi.")
    assert not result.had_error, result.error_message
    assert result.stop_reason == "completed"
    assert (session.workspace.path / "made.txt").read_text() == "hi\n"
    assert isinstance(steps[0], UserStep) and steps[0].content == "Create made.txt containing hi."
    kinds = [s.kind for s in steps[1:] if not (isinstance(s, ErrorStep) and s.error_type == "codex_warning")]
    # an LLMCall is recorded when the CLI logs its usage (at the end of its response, while its tool may
    # already run): its place among the stream's items depends on that timing, not its content
    assert [k for k in kinds if k != "llm_call"] == ["thinking", "agent_text", "tool_use", "agent_text"]
    assert kinds.count("llm_call") == 2
    tool = next(s for s in steps if isinstance(s, ToolUseStep))
    command = tool.arguments["command"]  # as the CLI ran it: `/bin/bash -lc "..."`
    assert command.startswith("/bin/bash -lc") and "printf" in command and "> made.txt" in command
    assert tool.exit_code == 0 and not tool.is_error and tool.elapsed is not None
    # usage per model call, exact; the tracker equals the CLI's own total
    calls = [s for s in steps if isinstance(s, LLMCall)]
    assert [c.usage.input for c in calls] == [1000, 1300] and [c.usage.cache_read for c in calls] == [200, 0]
    assert calls[0].usage.reasoning == 20
    assert result.usage.steps == 2
    assert result.usage.net_tokens.input == 2300 and result.usage.net_tokens.output == 60
    assert agent.outcome is not None and agent.outcome.cli_usage == result.usage.net_tokens
    assert result.usage.cost == pytest.approx(cli_kit.pricing.get_cost(result.usage.net_tokens))
    assert sum(c.cost or 0 for c in calls) == pytest.approx(result.usage.cost)
    # the CLI spoke the Responses API to the fake only, the key in a header, never on its command line
    requests = server.model_requests
    assert len(requests) == 2 and all(r.path == "/v1/responses" and r.stream for r in requests)
    assert requests[0].headers.get("authorization") == f"Bearer {api_key}"
    outputs = [i for i in requests[1].body["input"] if i.get("type") == "function_call_output"]
    assert outputs and outputs[0]["call_id"] == "call_make"
    assert agent.launch is not None and all(api_key not in arg for arg in agent.launch.argv)
    # artifacts: the raw stream, the session log, the outcome; no secret anywhere
    out = tmp_path / "artifacts"
    agent.save_artifacts(out)
    for name in ("stdout.jsonl", "session.jsonl", "trajectory.jsonl", "codex_outcome.json", "codex_launch.json"):
        text = (out / name).read_text()
        assert text and api_key not in text, name
    assert json.loads((out / "codex_outcome.json").read_text())["thread_id"] == agent.thread_id
    agent.cleanup()


def test_cost_limit_kills_the_cli_mid_tool(
    make_agent: Callable[..., CodexAgent], session: Any, fake_openai_server: Any
) -> None:
    check_cost_limit(make_agent, session, fake_openai_server, shell=shell)


def test_time_limit_kills_the_cli_while_its_tool_runs(
    make_agent: Callable[..., CodexAgent], session: Any, fake_openai_server: Any
) -> None:
    check_time_limit(make_agent, session, fake_openai_server, shell=shell)


def test_step_limit_kills_the_cli_after_that_many_model_calls(
    make_agent: Callable[..., CodexAgent], session: Any, fake_openai_server: Any
) -> None:
    check_step_limit(make_agent, session, fake_openai_server, shell=shell)


def test_next_checkpoint_resumes_the_thread(
    make_agent: Callable[..., CodexAgent], session: Any, fake_openai_server: Any
) -> None:
    # the CLI's turn total counts the whole thread: only this run's share is recorded (the kit checks it)
    check_session_continued(make_agent, session, fake_openai_server, session_attr="thread_id",
                            launch_field="resumed_thread", conversation=lambda request: json.dumps(request.body["input"]))


def test_api_error_is_one_clear_error(
    make_agent: Callable[..., CodexAgent], session: Any, fake_openai_server: Any, cli_kit: CliAgentKit
) -> None:
    fake_openai_server.add_fault(401, message="bad key")
    agent = make_agent(request_max_retries=0, stream_max_retries=0)
    agent.setup(session)
    result = agent.run_checkpoint("hi")
    assert result.had_error and result.stop_reason == "api_error"
    assert result.error_message is not None and cli_kit.api_key not in result.error_message
    agent.cleanup()


def test_wrong_pinned_version_is_refused(make_agent: Callable[..., CodexAgent], session: Any) -> None:
    agent = make_agent(version="0.1.0")
    with pytest.raises(AgentSetupError, match=re.escape("version 0.169.0, the agent config pins 0.1.0")):
        agent.setup(session)
    agent.cleanup()
