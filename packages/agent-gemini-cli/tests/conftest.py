"""Fixtures of the agent-gemini-cli tests (the shared CLI-agent kit, :mod:`agentrig.testing.cli_agents`):
the pinned CLI, a local session, an agent on the fake Gemini API, the agent's Docker image."""

from __future__ import annotations

from agentrig import APIPricing
from agentrig.testing.cli_agents import CliAgentKit, agent_image_fixture, cli_agent_fixtures

KIT = CliAgentKit(
    agent="gemini_cli",
    config="agentrig_gemini_cli.config:GeminiCliConfig",
    cli_name="Gemini CLI",
    npm_package="@google/gemini-cli",
    version="0.61.0",
    executable="gemini",
    cache_dir="gemini-cli",
    binary_env="AGENTRIG_TEST_GEMINI_BIN",
    provider="gemini",
    key_env="GEMINI_API_KEY",
    api_key="AIza-test-gemini-secret-0123456789",
    model="gemini-2.5-pro",
    # Gemini 2.5 Pro list prices for prompts up to 200k tokens, USD per million tokens
    pricing=APIPricing(input=1.25, output=10.0, cache_read=0.125),
    server_fixture="fake_gemini_server",
)

cli_kit, gemini_bin, session, credential, model_def, make_agent = cli_agent_fixtures(KIT, binary="gemini_bin")
gemini_image = agent_image_fixture(KIT, name="gemini_image")
