"""Fixtures of the agent-opencode tests (the shared CLI-agent kit, :mod:`agentrig.testing.cli_agents`):
the pinned CLI, a local session, an agent on the fake OpenAI server, the agent's Docker image."""

from __future__ import annotations

from agentrig import APIPricing
from agentrig.testing.cli_agents import CliAgentKit, agent_image_fixture, cli_agent_fixtures

KIT = CliAgentKit(
    agent="opencode",
    config="agentrig_opencode.config:OpenCodeConfig",
    cli_name="OpenCode CLI",
    npm_package="opencode-ai",
    version="1.18.33",
    executable="opencode",
    cache_dir="opencode",
    binary_env="AGENTRIG_TEST_OPENCODE_BIN",
    provider="openai",
    key_env="OPENAI_API_KEY",
    api_key="sk-test-opencode-secret-0123456789",
    model="gpt-5",
    pricing=APIPricing(input=1.25, output=10.0, cache_read=0.125),  # GPT-5 list prices, USD per million tokens
    server_fixture="fake_openai_server",
)

cli_kit, opencode_bin, session, credential, model_def, make_agent = cli_agent_fixtures(KIT, binary="opencode_bin")
opencode_image = agent_image_fixture(KIT, name="opencode_image")
