"""The run's thinking settings and the runner's limits, with the real pinned ``claude`` CLI on the fake Messages API."""

from __future__ import annotations

from typing import Any

import pytest

from agentrig import Agent, AgentContext, AgentCostLimits, ModelDefinition, ProviderCredential, ThinkingPreset, lifecycle
from agentrig.problem import Checkpoint
from agentrig.testing.cli_agents import live_processes, sleeper_command
from agentrig.trajectory import ErrorStep
from agentrig_claude_code.config import ClaudeCodeConfig

pytestmark = pytest.mark.claude_cli


def build(claude_bin: str, server: Any, model_def: ModelDefinition, credential: ProviderCredential,
          preset: ThinkingPreset | None = None, budget: int | None = None, **fields: Any) -> Any:
    config = ClaudeCodeConfig(binary=claude_bin, base_url=server.base_url, **fields)
    context = AgentContext(
        model=model_def, credential=credential, problem_name="settings", thinking_preset=preset, thinking_max_tokens=budget
    )
    return Agent.from_config(config, context)


@pytest.mark.parametrize(("preset", "budget", "expected"), [
    (ThinkingPreset.LOW, None, 2048),
    (ThinkingPreset.HIGH, 5000, 5000),
])
def test_thinking_settings_reach_the_cli(claude_bin: str, fake_anthropic_server: Any, model_def: ModelDefinition,
                                         credential: ProviderCredential, session: Any, preset: ThinkingPreset,
                                         budget: int | None, expected: int) -> None:
    fake_anthropic_server.add_reply("Done.", usage={"input": 10, "output": 5})
    agent = build(claude_bin, fake_anthropic_server, model_def, credential, preset, budget)
    agent.setup(session)
    try:
        result = agent.run_checkpoint("Say done.")
    finally:
        agent.cleanup()
    assert not result.had_error, result.error_message
    (request,) = fake_anthropic_server.model_requests
    assert request.body.get("thinking", {}).get("budget_tokens") == expected, request.body.get("thinking")


def test_runner_time_limit_ends_the_cli_process(claude_bin: str, fake_anthropic_server: Any, model_def: ModelDefinition,
                                                credential: ProviderCredential, session: Any) -> None:
    fake_anthropic_server.add_reply("Waiting.", tool_calls=[
        {"name": "Bash", "arguments": {"command": sleeper_command("RUN-SETTINGS-SLEEPER", 120), "description": "wait"},
         "id": "toolu_wait"}])
    fake_anthropic_server.add_reply("Done.")
    agent = build(claude_bin, fake_anthropic_server, model_def, credential,
                  cost_limits=AgentCostLimits(time_limit=4.0))
    steps: list[Any] = []
    agent.add_step_listener(steps.append)
    lifecycle.setup_agent(agent, session)
    try:
        result = lifecycle.run_checkpoint(agent, Checkpoint(name="c1", prompt="c1.md"), "Wait.", session.runtime)
    finally:
        lifecycle.cleanup_agent(agent)
    assert not (session.workspace.path / "late.txt").exists(), "the CLI (and its sleep) outlived the limit"
    assert result.stop_reason == "time_limit" and not result.had_error, result.error_message
    errors = [s for s in steps if isinstance(s, ErrorStep) and s.error_type == "time_limit"]
    assert errors and "time_limit of 4 s reached" in errors[-1].message
    # nothing of the CLI is left running: no process on this machine runs the tool's command
    assert not [cmd for cmd in live_processes("time.sleep(120)") if "pytest" not in cmd]
