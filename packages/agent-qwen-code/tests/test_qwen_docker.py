"""End to end in Docker: the ``qwen_code`` agent's own image (the conftest's ``qwen_image``), built by
``ensure_agent_image`` from the package's template over the Debian + Node.js test image (Node.js 18: the
template brings Node.js 22 from npm, then the pinned CLI), runs the real CLI in the session's container
against the fake OpenAI API on the host (network mode ``host``, so 127.0.0.1 is the host's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentrig import Agent, AgentContext, AgentCostLimits
from agentrig.runtime.images import LABEL_VERSION, agent_image_tag
from agentrig.testing.cli_agents import CliAgentKit
from agentrig.trajectory import ToolUseStep
from agentrig_qwen_code.config import DEFAULT_CLI_VERSION, QwenCodeConfig

# One worker builds the agent image (a module fixture) and runs every test that uses it.
pytestmark = [pytest.mark.docker, pytest.mark.qwen_cli, pytest.mark.xdist_group("qwen_image")]


def test_image_holds_the_pinned_cli_on_node_22(docker_engine: Any, node_test_image: str, qwen_image: str) -> None:
    assert qwen_image == agent_image_tag("qwen_code", DEFAULT_CLI_VERSION, node_test_image)
    assert docker_engine.images.get(qwen_image).labels[LABEL_VERSION] == DEFAULT_CLI_VERSION
    output = docker_engine.containers.run(
        qwen_image, ["sh", "-c", "node --version && qwen --version"], remove=True, network_mode="none"
    )
    node, cli = output.decode().split()
    assert int(node.lstrip("v").split(".")[0]) >= 22 and cli == DEFAULT_CLI_VERSION


def test_cost_limit_kills_the_cli_mid_tool_in_its_container(
    tmp_path: Path, cli_kit: CliAgentKit, qwen_image: str, fake_openai_server: Any, docker_engine: Any
) -> None:
    from agentrig.agents import lifecycle
    from agentrig.agents.session import Session

    server = fake_openai_server
    command = "sleep 60; echo late > late.txt"
    server.add_reply("Working.", tool_calls=[{"name": "run_shell_command", "arguments": {"command": command}}],
                     usage={"input": 1_000_000, "output": 10})
    server.add_reply("Never.")
    config = QwenCodeConfig(base_url=server.base_url, cost_limits=AgentCostLimits(cost_limit=1.0))
    context = AgentContext(model=cli_kit.model_definition(), credential=cli_kit.credential(), problem_name="docker-e2e",
                           image=qwen_image)
    agent = Agent.from_config(config, context)
    steps: list[Any] = []
    agent.add_step_listener(steps.append)
    with Session.create(
        runtime="docker", base_dir=tmp_path, runtime_options={"image": qwen_image, "network": "host"}
    ) as session:
        lifecycle.setup_agent(agent, session)
        try:
            assert agent.cli_version == DEFAULT_CLI_VERSION  # probed inside the container
            result = agent.run_checkpoint("spend money")
            assert result.stop_reason == "cost_limit" and not result.had_error and result.usage.steps == 1
            assert any(isinstance(s, ToolUseStep) and s.metadata == {"status": "interrupted"} for s in steps)
            assert len(server.model_requests) == 1
            container = docker_engine.containers.get(session.runtime.container_id)
            processes = container.top()["Processes"] or []
            assert not [p for p in processes if "sleep 60" in " ".join(p)], processes  # the tool's tree is gone
            assert not (session.workspace.path / "late.txt").exists()
            # the CLI's state went to the session's isolated home, mounted from the host
            assert (session.home / ".qwen" / "settings.json").exists()
            assert all(cli_kit.api_key not in arg for arg in agent.launch.argv)
        finally:
            lifecycle.cleanup_agent(agent)
