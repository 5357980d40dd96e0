"""End to end: the real pinned ``claude`` CLI, run by the agent in a local session, against the fake Messages API."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentrig import AgentContext, AgentCostLimits, AgentSetupError
from agentrig.testing.cli_agents import CliAgentKit, live_processes, record_steps, sleeper_command
from agentrig.trajectory import ErrorStep, LLMCall, ToolUseStep, UserStep
from agentrig_claude_code.agent import ClaudeCodeAgent

pytestmark = pytest.mark.claude_cli


def bash(command: str, tool_id: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"name": "Bash", "arguments": {"command": command, "description": "run"}}
    if tool_id:
        call["id"] = tool_id
    return call


def test_bash_tool_creates_a_file_and_the_check_passes(
    make_agent: Callable[..., ClaudeCodeAgent], session: Any, fake_anthropic_server: Any, tmp_path: Path, cli_kit: CliAgentKit
) -> None:
    api_key, prices = cli_kit.api_key, cli_kit.pricing
    server = fake_anthropic_server
    server.add_reply("Creating it.", thinking="Use Bash.", tool_calls=[bash("printf 'hi\\n' > made.txt", "toolu_make")],
                     usage={"input": 1000, "output": 50, "cache_read": 200})
    server.add_reply("Done.", usage={"input": 1200, "output": 10})
    agent = make_agent()
    steps = record_steps(agent)
    agent.setup(session)
    assert agent.cli_version == "2.1.330"
    result = agent.run_checkpoint("Create made.txt containing hi.")
    assert not result.had_error, result.error_message
    assert result.stop_reason == "completed"
    assert (session.workspace.path / "made.txt").read_text() == "hi\n"
    check = session.runtime.exec("test \"$(cat made.txt)\" = hi")
    assert check.exit_code == 0
    # steps: the task, then per message its call and blocks, the tool paired with its result
    assert isinstance(steps[0], UserStep) and steps[0].content == "Create made.txt containing hi."
    assert [s.kind for s in steps[1:]] == ["llm_call", "thinking", "agent_text", "tool_use", "llm_call", "agent_text"]
    tool = next(s for s in steps if isinstance(s, ToolUseStep))
    assert tool.tool_call_id == "toolu_make" and tool.exit_code == 0 and not tool.is_error
    # usage and cost: exact, once per message
    expected = prices.get_cost(agent.usage.net_tokens)
    assert result.usage.steps == 2
    assert result.usage.net_tokens.input == 2200 and result.usage.net_tokens.output == 60
    assert result.usage.cost == pytest.approx(expected)
    assert sum(s.cost for s in steps if isinstance(s, LLMCall)) == pytest.approx(result.usage.cost)
    # the CLI talked only to the fake, streaming, with the key in a header, never on its command line
    calls = server.model_requests
    assert len(calls) == 2 and all(r.stream and r.query.get("beta") == "true" for r in calls)
    assert calls[0].headers.get("x-api-key") == api_key
    assert "Create made.txt containing hi." in calls[0].raw_body
    assert agent.launch is not None and all(api_key not in arg for arg in agent.launch.argv)
    assert "--resume" not in agent.launch.argv
    assert {"CLAUDE_CONFIG_DIR", "HOME", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "DISABLE_TELEMETRY",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"} <= set(agent.launch.env_names)
    if os.getuid() == 0:
        assert "IS_SANDBOX" in agent.launch.env_names
    # artifacts: the raw stream, stderr, the CLI's own transcript, the trajectory, the outcome
    out = tmp_path / "artifacts"
    agent.save_artifacts(out)
    names = {p.name for p in out.iterdir()}
    assert {"stdout.jsonl", "stderr.log", "session.jsonl", "trajectory.jsonl", "claude_outcome.json"} <= names
    stream = [json.loads(line) for line in (out / "stdout.jsonl").read_text().splitlines()]
    assert stream[0]["subtype"] == "init" and stream[-1]["type"] == "result"
    assert agent.claude_session_id and agent.claude_session_id in (out / "session.jsonl").read_text()
    assert len((out / "trajectory.jsonl").read_text().splitlines()) == len(steps)
    for path in out.iterdir():
        assert api_key.encode() not in path.read_bytes(), path.name
    # the CLI's state lives in the session's home, not the user's
    assert (session.home / ".claude" / "projects").is_dir()
    agent.cleanup()


def test_checkpoint_two_resumes_the_session(
    make_agent: Callable[..., ClaudeCodeAgent], session: Any, fake_anthropic_server: Any, cli_kit: CliAgentKit
) -> None:
    server = fake_anthropic_server
    server.add_reply("First answer.", usage={"input": 100, "output": 10})
    server.add_reply("Second answer.", usage={"input": 200, "output": 10})
    agent = make_agent(reset_context=False)
    agent.setup(session)
    first = agent.run_checkpoint("CHECKPOINT-ONE-MARKER: say hello")
    assert not first.had_error, first.error_message
    session_id = agent.claude_session_id
    first_cost = first.usage.cost
    agent.finish_checkpoint(reset_context=False)
    second = agent.run_checkpoint("CHECKPOINT-TWO-MARKER: say more")
    assert not second.had_error, second.error_message
    assert agent.launch is not None and agent.launch.argv[agent.launch.argv.index("--resume") + 1] == session_id
    assert agent.claude_session_id == session_id
    request = server.model_requests[-1]
    assert "CHECKPOINT-ONE-MARKER" in request.raw_body and "First answer." in request.raw_body
    # the resumed session's cumulative CLI total does not leak into checkpoint 2's cost
    assert second.prior_cost == pytest.approx(first_cost)
    assert second.usage.cost == pytest.approx(cli_kit.pricing.get_cost(second.usage.net_tokens))
    assert second.usage.net_tokens.input == 200
    agent.cleanup()


def test_reset_context_starts_a_fresh_session(
    make_agent: Callable[..., ClaudeCodeAgent], session: Any, fake_anthropic_server: Any
) -> None:
    server = fake_anthropic_server
    server.add_reply("First answer.")
    server.add_reply("Second answer.")
    agent = make_agent(reset_context=True)
    agent.setup(session)
    agent.run_checkpoint("CHECKPOINT-ONE-MARKER")
    first_session = agent.claude_session_id
    agent.finish_checkpoint(reset_context=True)
    agent.run_checkpoint("CHECKPOINT-TWO-MARKER")
    assert agent.launch is not None and "--resume" not in agent.launch.argv
    assert agent.claude_session_id != first_session
    assert "CHECKPOINT-ONE-MARKER" not in server.model_requests[-1].raw_body
    agent.cleanup()


def test_overloaded_then_recovery(
    make_agent: Callable[..., ClaudeCodeAgent], session: Any, fake_anthropic_server: Any
) -> None:
    server = fake_anthropic_server
    server.add_fault(529, retry_after=0)
    server.add_reply("Recovered.")
    agent = make_agent()
    steps = record_steps(agent)
    agent.setup(session)
    result = agent.run_checkpoint("say hi")
    assert not result.had_error, result.error_message
    assert result.stop_reason == "completed" and result.usage.steps == 1
    retries = [s for s in steps if isinstance(s, ErrorStep)]
    assert len(retries) == 1 and retries[0].error_type == "api_retry" and "529" in retries[0].message
    assert agent.outcome is not None and agent.outcome.api_retries[0].error_status == 529
    assert len(server.model_requests) == 2
    agent.cleanup()


def test_permanent_api_error_is_an_error_result(
    make_agent: Callable[..., ClaudeCodeAgent], session: Any, fake_anthropic_server: Any, cli_kit: CliAgentKit
) -> None:
    from agentrig.testing.fake_server import Fault

    # every call fails: the CLI may retry an authentication error once
    fake_anthropic_server.respond_with(
        lambda request: Fault(status=401, error_type="authentication_error", message="invalid x-api-key")
    )
    agent = make_agent(env={"CLAUDE_CODE_MAX_RETRIES": "0"})  # its default backs off for minutes
    agent.setup(session)
    result = agent.run_checkpoint("say hi")
    assert result.had_error and result.stop_reason == "api_error"
    assert result.error_message and "API status 401" in result.error_message
    assert cli_kit.api_key not in result.error_message
    agent.cleanup()


@pytest.mark.parametrize(
    ("fault", "says"),
    [
        ({"status": 529}, "model error: OverloadedError"),
        ({"status": 500}, "model error: ServerError"),
        ({"status": 429, "retry_after": 0}, "model error: RateLimitError"),
        ({"drop": True}, "model error: NetworkError"),
        ({"status": 400}, None),
        ({"status": 401, "error_type": "authentication_error"}, None),
    ],
)
def test_api_errors_are_classified_as_the_core_clients_classify_theirs(
    make_agent: Callable[..., ClaudeCodeAgent], session: Any, fake_anthropic_server: Any, cli_kit: CliAgentKit,
    fault: dict[str, Any], says: str | None,
) -> None:
    """What the CLI ends with after its own retries decides, as for the react agent's model errors, whether
    ``--retries`` tries the checkpoint again: a 5xx, 529, 429 or dropped connection is worth it, a 4xx never."""
    from agentrig.run.retries import error_cause
    from agentrig.testing.fake_server import Fault

    fake_anthropic_server.respond_with(lambda request: Fault(**fault))
    agent = make_agent(env={"CLAUDE_CODE_MAX_RETRIES": "0"})
    agent.setup(session)
    result = agent.run_checkpoint("say hi")
    assert result.had_error and result.stop_reason == "api_error", result.error_message
    cause = error_cause(agent.checkpoint_error)
    if says is None:
        assert cause is None
    else:
        assert cause is not None and cause.startswith(says), cause
        assert cli_kit.api_key not in cause
    agent.cleanup()


def test_max_turns_reached_stops_as_step_limit(
    make_agent: Callable[..., ClaudeCodeAgent], session: Any, fake_anthropic_server: Any
) -> None:
    server = fake_anthropic_server
    server.add_reply("Step 1.", tool_calls=[bash("echo one")])
    server.add_reply("Step 2.", tool_calls=[bash("echo two")])
    server.add_reply("Never.")
    agent = make_agent(cost_limits=AgentCostLimits(step_limit=1))
    agent.setup(session)
    result = agent.run_checkpoint("keep going")
    assert agent.launch is not None and agent.launch.argv[agent.launch.argv.index("--max-turns") + 1] == "1"
    assert not result.had_error, result.error_message
    assert result.stop_reason == "step_limit" and result.usage.steps == 1
    assert agent.outcome is not None and agent.outcome.result is not None
    assert agent.outcome.result.subtype == "error_max_turns" and agent.outcome.result.is_error
    assert len(server.model_requests) == 1
    agent.cleanup()


def test_cost_limit_kills_the_process_tree(
    make_agent: Callable[..., ClaudeCodeAgent], session: Any, fake_anthropic_server: Any
) -> None:
    server = fake_anthropic_server
    # one expensive call (USD 3 of input) whose tool would run for a minute
    server.add_reply("Working.", tool_calls=[bash(sleeper_command("TREE-SLEEPER"))], usage={"input": 1_000_000, "output": 10})
    server.add_reply("Never.")
    agent = make_agent(cost_limits=AgentCostLimits(cost_limit=1.0))
    agent.setup(session)
    result = agent.run_checkpoint("spend money")
    assert not result.had_error, result.error_message
    assert result.stop_reason == "cost_limit"
    assert result.usage.cost >= 1.0
    assert agent.outcome is not None and agent.outcome.killed and agent.outcome.result is None
    assert len(server.model_requests) == 1
    # nothing of the tree survives: the tool's sleeper is gone and never finishes its work
    assert live_processes("TREE-SLEEPER") == [], "processes of the killed CLI survive"
    assert not (session.workspace.path / "late.txt").exists()
    agent.cleanup()


def test_net_cost_limit_counts_earlier_checkpoints(
    make_agent: Callable[..., ClaudeCodeAgent], session: Any, fake_anthropic_server: Any
) -> None:
    server = fake_anthropic_server
    server.add_reply("Working.", tool_calls=[bash(sleeper_command("NET-COST-SLEEPER"))], usage={"input": 100_000, "output": 10})
    server.add_reply("Never.")
    agent = make_agent(cost_limits=AgentCostLimits(net_cost_limit=1.0))
    agent.prior_cost = 0.9  # what earlier checkpoints spent
    agent.setup(session)
    result = agent.run_checkpoint("spend a little")
    assert result.stop_reason == "net_cost_limit" and not result.had_error
    agent.cleanup()


def test_a_limit_in_one_checkpoint_does_not_mark_the_next(
    make_agent: Callable[..., ClaudeCodeAgent], session: Any, fake_anthropic_server: Any
) -> None:
    server = fake_anthropic_server
    server.add_reply("Working.", tool_calls=[bash(sleeper_command("NEXT-SLEEPER"))], usage={"input": 1_000_000, "output": 10})
    server.add_reply("Fine now.", usage={"input": 10, "output": 5})
    agent = make_agent(cost_limits=AgentCostLimits(cost_limit=1.0), reset_context=False)
    agent.setup(session)
    first = agent.run_checkpoint("spend money")
    assert first.stop_reason == "cost_limit"
    agent.finish_checkpoint(reset_context=False)  # no reset(): run() itself starts clean
    second = agent.run_checkpoint("cheap now")
    assert not second.had_error, second.error_message
    assert second.stop_reason == "completed"
    assert agent.outcome is not None and not agent.outcome.killed
    agent.reset()
    assert agent.outcome is None and agent.launch is None and agent.claude_session_id is None
    agent.cleanup()


def test_wall_clock_timeout_kills_the_cli(
    make_agent: Callable[..., ClaudeCodeAgent], session: Any, fake_anthropic_server: Any
) -> None:
    # (the CLI's Bash tool refuses a bare long `sleep`, so the tool waits in Python)
    # the limit leaves the CLI time to start and ask for its tool on a loaded machine; the tool's wait is longer still
    fake_anthropic_server.add_reply("Working.", tool_calls=[bash(sleeper_command("WALL-CLOCK-SLEEPER", 600))])
    agent = make_agent(timeout=30)
    agent.setup(session)
    result = agent.run_checkpoint("take forever")
    assert result.stop_reason == "wall_clock_limit" and not result.had_error, result.error_message
    assert not (session.workspace.path / "late.txt").exists()  # ended while the tool waited
    # the whole tree died, the tool's grandchild included
    assert fake_anthropic_server.pending == 0
    assert live_processes("WALL-CLOCK-SLEEPER") == [], "processes of the killed CLI survive"
    agent.cleanup()


def test_missing_cli_is_one_clear_setup_error(
    fake_anthropic_server: Any, session: Any, model_def: Any, credential: Any
) -> None:
    from agentrig import Agent
    from agentrig_claude_code.config import ClaudeCodeConfig

    config = ClaudeCodeConfig(binary="/nonexistent/claude", base_url=fake_anthropic_server.base_url)
    agent = Agent.from_config(config, AgentContext(model=model_def, credential=credential, problem_name="p"))
    with pytest.raises(AgentSetupError) as info:
        agent.setup(session)
    message = str(info.value)
    assert "\n" not in message and "/nonexistent/claude" in message and "npm install" in message
    agent.cleanup()


def test_version_mismatch_is_refused(
    make_agent: Callable[..., ClaudeCodeAgent], session: Any
) -> None:
    agent = make_agent(version="9.9.9")
    with pytest.raises(AgentSetupError, match=r"is version 2.1.330, the agent config pins 9.9.9"):
        agent.setup(session)
    make_agent(version=None, docker_template=None).setup(session)  # null accepts any version
