"""The miniswe agent against the fake OpenAI server: solving, submitting, format errors, limits, timeouts."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentrig import AgentContext, AgentCostLimits

NO_RETRY = {"retry": {"max_retries": 0}}


def block(command: str, thought: str = "THOUGHT: next step.") -> str:
    """A text-format reply running ``command``."""
    return f"{thought}\n\n```mswea_bash_command\n{command}\n```"


def bash(command: str, call_id: str | None = None) -> dict[str, Any]:
    """A tool call of mini's bash tool."""
    call: dict[str, Any] = {"name": "bash", "arguments": {"command": command}}
    if call_id:
        call["id"] = call_id
    return call


SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat hello.txt"


def test_text_format_multi_step_task_is_solved_and_submitted(fake_openai_server, drive, session) -> None:
    for command in ("cat hello.txt", "echo world >> hello.txt", SUBMIT):
        fake_openai_server.add_reply(block(command))
    run = drive("Append world to hello.txt.", config_file="default.yaml", model_options=NO_RETRY)

    assert run.result.had_error is False, run.result.error_message
    assert run.result.stop_reason == "submitted"
    assert run.agent.exit_status == "Submitted" and run.agent.submission == "hello\nworld\n"
    assert (session.workspace.path / "hello.txt").read_text() == "hello\nworld\n"
    assert run.commands() == ["cat hello.txt", "echo world >> hello.txt", SUBMIT]
    # Counted the agentrig way: three calls, priced from the catalog.
    assert run.result.usage.steps == 3 and run.result.usage.cost > 0
    assert run.result.usage.net_tokens.input > 0
    # mini's own prompts, no tools offered in the text format.
    first = fake_openai_server.model_requests[0].body
    assert "tools" not in first
    assert first["messages"][0]["role"] == "system" and "mswea_bash_command" in first["messages"][0]["content"]
    assert "Please solve this issue: Append world to hello.txt." in first["messages"][1]["content"]
    second = fake_openai_server.model_requests[1].body["messages"]
    assert second[-1]["role"] == "user" and "<returncode>0</returncode>" in second[-1]["content"]
    assert "hello" in second[-1]["content"]
    assert run.kinds()[:4] == ["user", "llm_call", "agent_text", "tool_use"]


def test_artifacts_hold_mini_swe_agents_trajectory_and_no_secret(fake_openai_server, drive, api_key) -> None:
    fake_openai_server.add_reply(block("echo hi"))
    fake_openai_server.add_reply(block(SUBMIT))
    run = drive(config_file="default.yaml", model_options=NO_RETRY)
    traj = json.loads((run.artifacts / "miniswe.traj.json").read_text())
    assert traj["trajectory_format"] == "mini-swe-agent-1.1"
    assert traj["info"]["exit_status"] == "Submitted" and traj["info"]["submission"] == "hello\n"
    assert traj["info"]["model_stats"]["api_calls"] == 2
    assert traj["info"]["config"]["environment_type"] == "agentrig_miniswe.environment.RuntimeEnvironment"
    assert [m["role"] for m in traj["messages"]] == ["system", "user", "assistant", "user", "assistant", "exit"]
    outcome = json.loads((run.artifacts / "miniswe_outcome.json").read_text())
    assert outcome["stop_reason"] == "submitted" and outcome["commands"] == 2
    for path in run.artifacts.iterdir():
        assert api_key not in path.read_text()


def test_tool_call_format_with_mini_yaml(fake_openai_server, drive, session) -> None:
    fake_openai_server.add_reply("Looking.", tool_calls=[bash("ls", "call_a")])
    fake_openai_server.add_reply("", tool_calls=[bash("echo new > new.txt", "call_b"), bash("cat new.txt", "call_c")])
    fake_openai_server.add_reply("Done.", tool_calls=[bash("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "call_d")])
    run = drive(config_file="mini.yaml", model_options=NO_RETRY)

    assert run.result.stop_reason == "submitted", run.result.error_message
    assert (session.workspace.path / "new.txt").read_text() == "new\n"
    assert run.commands() == ["ls", "echo new > new.txt", "cat new.txt", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"]
    requests = fake_openai_server.model_requests
    assert [t["function"]["name"] for t in requests[0].body["tools"]] == ["bash"]
    tool_messages = [m for m in requests[2].body["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_a", "call_b", "call_c"]
    assert json.loads(tool_messages[-1]["content"])["output"] == "new\n"  # mini.yaml's JSON observation


def test_format_errors_are_fed_back_then_stop_after_three(fake_openai_server, drive) -> None:
    fake_openai_server.add_reply("I will not use a code block.")
    fake_openai_server.add_reply(block("echo recovered"))
    for _ in range(3):
        fake_openai_server.add_reply(block("echo one") + "\n" + block("echo two"))
    run = drive(config_file="default.yaml", model_options=NO_RETRY)

    assert run.result.stop_reason == "format_errors"
    assert run.result.had_error is False
    assert run.agent.exit_status == "RepeatedFormatError"
    assert run.commands() == ["echo recovered"]
    errors = [s for s in run.steps if s.kind == "error"]
    assert [e.error_type for e in errors] == ["FormatError"] * 4 + ["RepeatedFormatError"]
    feedback = fake_openai_server.model_requests[1].body["messages"][-1]
    assert feedback["role"] == "user" and "found 0 actions" in feedback["content"]
    assert run.result.usage.steps == 5  # failed calls are billed and counted too


def test_tool_call_format_errors(fake_openai_server, drive) -> None:
    fake_openai_server.add_reply("No tool call at all.")
    fake_openai_server.add_reply("", tool_calls=[{"name": "bash", "raw_arguments": "{not json"}])
    fake_openai_server.add_reply("", tool_calls=[{"name": "python", "arguments": {"code": "1"}}])
    run = drive(config_file="mini.yaml", model_options=NO_RETRY)

    assert run.result.stop_reason == "format_errors"
    messages = fake_openai_server.model_requests[2].body["messages"]
    assert "No tool calls found" in messages[-2]["content"]
    assert "Error parsing tool call arguments" in messages[-1]["content"]


def test_step_limit_becomes_minis(fake_openai_server, drive) -> None:
    fake_openai_server.respond_with(lambda request: _reply(block("echo again")))
    run = drive(config_file="default.yaml", limits=AgentCostLimits(step_limit=2), model_options=NO_RETRY)

    assert run.result.stop_reason == "step_limit" and run.result.had_error is False
    assert run.agent.exit_status == "LimitsExceeded"
    assert len(fake_openai_server.model_requests) == 2
    traj = json.loads((run.artifacts / "miniswe.traj.json").read_text())
    assert traj["info"]["config"]["agent"]["step_limit"] == 2


def test_cost_limit_stops_after_the_call_that_reached_it(fake_openai_server, drive) -> None:
    fake_openai_server.respond_with(lambda request: _reply(block("echo again"), usage={"input": 1000, "output": 500}))
    # One call costs (1000 * 1 + 500 * 2) / 1e6 = 0.002 USD.
    run = drive(config_file="default.yaml", limits=AgentCostLimits(cost_limit=0.003), model_options=NO_RETRY)

    assert run.result.stop_reason == "cost_limit"
    assert len(fake_openai_server.model_requests) == 2
    assert run.result.usage.cost == pytest.approx(0.004)


def test_a_spent_problem_budget_makes_no_call(fake_openai_server, drive, model_def, credential, session) -> None:
    from agentrig.agents import lifecycle
    from agentrig.problem import Checkpoint
    from agentrig_miniswe.agent import MiniSweAgent
    from agentrig_miniswe.config import MiniSweConfig

    config = MiniSweConfig(cost_limits=AgentCostLimits(net_cost_limit=1.0), base_url=fake_openai_server.base_url)
    agent = MiniSweAgent.from_config(config, AgentContext(model=model_def, credential=credential, problem_name="sample"))
    agent.prior_cost = 1.5
    lifecycle.setup_agent(agent, session)
    try:
        result = lifecycle.run_checkpoint(agent, Checkpoint(name="c2", prompt="p.md"), "more")
    finally:
        lifecycle.cleanup_agent(agent)
    assert result.stop_reason == "net_cost_limit"
    assert fake_openai_server.model_requests == []


def test_a_command_timeout_is_reported_to_the_model(fake_openai_server, drive) -> None:
    fake_openai_server.add_reply(block("echo begun; sleep 10"))
    fake_openai_server.add_reply(block(SUBMIT))
    run = drive(config_file="default.yaml", command_timeout=1, model_options=NO_RETRY)

    assert run.result.stop_reason == "submitted"
    observation = fake_openai_server.model_requests[1].body["messages"][-1]["content"]
    assert "timed out after 1 seconds" in observation and "begun" in observation
    timed_out = next(s for s in run.steps if s.kind == "tool_use")
    assert timed_out.exit_code == -1 and timed_out.is_error and timed_out.elapsed is not None


def test_wall_clock_limit(fake_openai_server, drive) -> None:
    fake_openai_server.respond_with(lambda request: _reply(block("sleep 1.2")))
    run = drive(config_file="default.yaml", wall_clock_limit=1, model_options=NO_RETRY)
    assert run.result.stop_reason == "wall_clock_limit"
    assert run.agent.exit_status == "TimeExceeded"


def test_a_model_failure_is_an_error_with_mini_exit_recorded(fake_openai_server, drive, api_key) -> None:
    fake_openai_server.add_fault(401)
    run = drive(config_file="default.yaml", model_options=NO_RETRY)
    assert run.result.had_error is True and run.result.stop_reason == "error"
    assert api_key not in (run.result.error_message or "")
    traj = json.loads((run.artifacts / "miniswe.traj.json").read_text())
    assert traj["messages"][-1]["role"] == "exit"
    assert traj["info"]["exit_status"] not in ("", "Submitted")
    assert run.steps[-1].kind == "error"


def test_continuing_the_conversation_across_checkpoints(fake_openai_server, drive, session) -> None:
    from agentrig.agents import lifecycle
    from agentrig.problem import Checkpoint

    fake_openai_server.add_reply(block("echo one > one.txt"))
    fake_openai_server.add_reply(block(SUBMIT))
    run = drive("First task.", config_file="default.yaml", reset_context=False, model_options=NO_RETRY)
    run.agent.finish_checkpoint(reset_context=False)
    fake_openai_server.add_reply(block(SUBMIT))
    lifecycle.run_checkpoint(run.agent, Checkpoint(name="checkpoint_2", prompt="p.md"), "Second task.")

    messages = fake_openai_server.model_requests[2].body["messages"]
    assert [m["role"] for m in messages].count("system") == 1
    assert "First task." in messages[1]["content"] and "Second task." in messages[-1]["content"]
    assert len(messages) == 6  # system, task 1, reply, observation, reply (submitted), task 2


def test_reset_starts_each_checkpoint_fresh(fake_openai_server, drive) -> None:
    from agentrig.agents import lifecycle
    from agentrig.problem import Checkpoint

    fake_openai_server.add_reply(block(SUBMIT))
    run = drive("First task.", config_file="default.yaml", model_options=NO_RETRY)
    run.agent.finish_checkpoint(reset_context=True)
    fake_openai_server.add_reply(block(SUBMIT))
    result = lifecycle.run_checkpoint(run.agent, Checkpoint(name="checkpoint_2", prompt="p.md"), "Second task.")
    assert result.usage.steps == 1 and result.prior_cost > 0
    messages = fake_openai_server.model_requests[1].body["messages"]
    assert len(messages) == 2 and "Second task." in messages[1]["content"]


def test_bad_settings_fail_setup_with_one_line(drive) -> None:
    from agentrig import AgentSetupError

    with pytest.raises(AgentSetupError, match=r"environment_overrides\): timeout"):
        drive(environment_overrides={"timeout": 0})
    with pytest.raises(AgentSetupError, match=r"model_overrides\): .*model_kwargs \['top_k'\]"):
        drive(model_overrides={"model_kwargs": {"top_k": 3}})
    with pytest.raises(AgentSetupError, match=r"unknown model option 'retires'"):
        drive(model_options={"retires": 1})


def _reply(text: str, **fields: Any) -> Any:
    from agentrig.testing.fake_server import FakeReply, FakeUsage

    usage = fields.pop("usage", None)
    return FakeReply(text=text, usage=FakeUsage(**usage) if usage else None, **fields)
