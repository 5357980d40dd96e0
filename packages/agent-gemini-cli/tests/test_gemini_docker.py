"""End to end in Docker: the ``gemini_cli`` agent's own image (the conftest's ``gemini_image``), built
by ``ensure_agent_image`` from the package's template over the Debian + Node.js test image (Node.js 18:
the template brings Node.js 22 from npm, then the pinned CLI), runs the real CLI in the session's
container against the fake Gemini API on the host (network mode ``host``, so 127.0.0.1 is the host's).

The image build (npm-installing Node.js and the CLI) happens once; later runs find the image
unchanged and skip it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from agentrig import Agent, AgentContext, AgentCostLimits, ModelDefinition, ProviderCredential
from agentrig.pricing import APIPricing
from agentrig.runtime.images import LABEL_VERSION, agent_image_tag
from agentrig.trajectory import ToolUseStep
from agentrig_gemini_cli.config import DEFAULT_CLI_VERSION, GeminiCliConfig

# One worker builds the agent image (a session fixture) and runs every test that uses it.
pytestmark = [pytest.mark.docker, pytest.mark.gemini_cli, pytest.mark.xdist_group("gemini_image")]

API_KEY = "AIza-test-gemini-docker-secret-42"
GEMINI_PRO = APIPricing(input=1.25, output=10.0, cache_read=0.125)


def _agent(server: Any, image: str, **fields: Any) -> Any:
    config = GeminiCliConfig(base_url=server.base_url, **fields)
    model = ModelDefinition(provider="gemini", name="gemini-2.5-pro", pricing=GEMINI_PRO)
    credential = ProviderCredential(provider="gemini", value=SecretStr(API_KEY), source="test", env_var="GEMINI_API_KEY")
    return Agent.from_config(config, AgentContext(model=model, credential=credential, problem_name="docker-e2e", image=image))


def test_image_holds_the_pinned_cli_on_node_20_or_later(docker_engine: Any, node_test_image: str, gemini_image: str) -> None:
    assert gemini_image == agent_image_tag("gemini_cli", DEFAULT_CLI_VERSION, node_test_image)
    assert docker_engine.images.get(gemini_image).labels[LABEL_VERSION] == DEFAULT_CLI_VERSION
    base_node = docker_engine.containers.run(node_test_image, ["node", "--version"], remove=True, network_mode="none")
    assert base_node.decode().startswith("v18.")  # bookworm's: the CLI does not start on it
    output = docker_engine.containers.run(
        gemini_image, ["sh", "-c", "node --version && gemini --version"], remove=True, network_mode="none"
    )
    node, cli = output.decode().split()
    assert int(node.lstrip("v").split(".")[0]) >= 20 and cli == DEFAULT_CLI_VERSION


def test_agent_runs_the_cli_in_its_image_and_the_shell_writes_to_the_workspace(
    tmp_path: Path, gemini_image: str, fake_gemini_server: Any
) -> None:
    from agentrig.agents import lifecycle
    from agentrig.agents.session import Session

    server = fake_gemini_server
    # /.dockerenv exists only inside a container, and the workspace is /workspace there
    command = "{ pwd; test -f /.dockerenv && echo in-container; } > made.txt"
    server.add_reply("Creating it.", tool_calls=[{"name": "run_shell_command", "arguments": {"command": command}}],
                     usage={"input": 1000, "output": 40})
    server.add_reply("Done.", usage={"input": 1100, "output": 5})
    agent = _agent(server, gemini_image)
    with Session.create(
        runtime="docker", base_dir=tmp_path, runtime_options={"image": gemini_image, "network": "host"}
    ) as session:
        lifecycle.setup_agent(agent, session)
        try:
            assert agent.cli_version == DEFAULT_CLI_VERSION  # probed inside the container
            result = agent.run_checkpoint("Create made.txt.")
            assert not result.had_error, result.error_message
            assert result.stop_reason == "completed" and result.usage.steps == 2
            made = session.workspace.path / "made.txt"
            assert made.read_text().splitlines() == ["/workspace", "in-container"]
            info = made.stat()
            assert (info.st_uid, info.st_gid) == (os.getuid(), os.getgid())
            launch = agent.launch
            assert launch is not None and launch.runtime == "docker" and launch.cwd == "/workspace"
            assert all(API_KEY not in arg for arg in launch.argv)
            calls = server.model_requests
            assert len(calls) == 2 and calls[0].headers.get("x-goog-api-key") == API_KEY
            # the CLI's state went to the session's isolated home, mounted from the host
            assert any((session.home / ".gemini-cli" / ".gemini" / "tmp").rglob("session-*.jsonl"))
            assert agent.outcome.cli_usage == result.usage.net_tokens
        finally:
            lifecycle.cleanup_agent(agent)


def test_cost_limit_kills_the_cli_mid_tool_in_its_container(
    tmp_path: Path, gemini_image: str, fake_gemini_server: Any, docker_engine: Any
) -> None:
    from agentrig.agents import lifecycle
    from agentrig.agents.session import Session

    server = fake_gemini_server
    command = "sleep 60; echo late > late.txt"
    server.add_reply("Working.", tool_calls=[{"name": "run_shell_command", "arguments": {"command": command}}],
                     usage={"input": 1_000_000, "output": 10})
    server.add_reply("Never.")
    agent = _agent(server, gemini_image, cost_limits=AgentCostLimits(cost_limit=1.0))
    steps: list[Any] = []
    agent.add_step_listener(steps.append)
    with Session.create(
        runtime="docker", base_dir=tmp_path, runtime_options={"image": gemini_image, "network": "host"}
    ) as session:
        lifecycle.setup_agent(agent, session)
        try:
            result = agent.run_checkpoint("spend money")
            assert result.stop_reason == "cost_limit" and not result.had_error and result.usage.steps == 1
            assert any(isinstance(s, ToolUseStep) and s.metadata == {"status": "interrupted"} for s in steps)
            assert len(server.model_requests) == 1
            container = docker_engine.containers.get(session.runtime.container_id)
            processes = container.top()["Processes"] or []
            assert not [p for p in processes if "sleep 60" in " ".join(p)], processes  # the tool's tree is gone
            assert not (session.workspace.path / "late.txt").exists()
        finally:
            lifecycle.cleanup_agent(agent)
