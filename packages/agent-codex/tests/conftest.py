"""Fixtures of the agent-codex tests (the shared CLI-agent kit, :mod:`agentrig.testing.cli_agents`):
the pinned CLI, a local session, an agent on the fake Responses API, the agent's Docker image."""

from __future__ import annotations

from agentrig import APIPricing
from agentrig.testing.cli_agents import CliAgentKit, agent_image_fixture, cli_agent_fixtures

KIT = CliAgentKit(
    agent="codex",
    config="agentrig_codex.config:CodexConfig",
    cli_name="Codex CLI",
    npm_package="@openai/codex",
    version="0.169.0",
    executable="codex",
    cache_dir="codex",
    binary_env="AGENTRIG_TEST_CODEX_BIN",
    provider="openai",
    key_env="OPENAI_API_KEY",
    api_key="sk-test-codex-secret-0123456789",
    model="gpt-5",
    pricing=APIPricing(input=1.25, output=10.0, cache_read=0.125),  # GPT-5 list prices, USD per million tokens
    server_fixture="fake_openai_server",
)

cli_kit, codex_bin, session, credential, model_def, make_agent = cli_agent_fixtures(KIT, binary="codex_bin")
codex_image = agent_image_fixture(KIT, name="codex_image")
