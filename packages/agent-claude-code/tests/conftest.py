"""Fixtures of the agent-claude-code tests (the shared CLI-agent kit, :mod:`agentrig.testing.cli_agents`):
the pinned CLI, a local session, an agent on the fake Messages API, the agent's Docker image."""

from __future__ import annotations

from agentrig import APIPricing
from agentrig.testing.cli_agents import CliAgentKit, agent_image_fixture, cli_agent_fixtures

KIT = CliAgentKit(
    agent="claude_code",
    config="agentrig_claude_code.config:ClaudeCodeConfig",
    cli_name="Claude Code CLI",
    npm_package="@anthropic-ai/claude-code",
    version="2.1.330",
    executable="claude",
    cache_dir="claude-code",
    binary_env="AGENTRIG_TEST_CLAUDE_BIN",
    provider="anthropic",
    key_env="ANTHROPIC_API_KEY",
    api_key="sk-ant-test-claude-secret-0123456789",
    model="claude-sonnet-4-5",
    # Claude Sonnet 4.5 list prices, USD per million tokens
    pricing=APIPricing(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75),
    server_fixture="fake_anthropic_server",
)

cli_kit, claude_bin, session, credential, model_def, make_agent = cli_agent_fixtures(KIT, binary="claude_bin")
claude_image = agent_image_fixture(KIT, name="claude_image")
