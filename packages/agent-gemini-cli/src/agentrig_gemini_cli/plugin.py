"""The agentrig plugin of agentrig-gemini-cli: the agent and its stream parser, by import path."""

from __future__ import annotations

import agentrig


@agentrig.hookimpl
def agentrig_agents() -> list[agentrig.AgentSpec]:
    """Declare the ``gemini_cli`` agent type."""
    return [
        agentrig.AgentSpec(
            name="gemini_cli",
            description="Google's Gemini CLI (pinned npm version), driven through `gemini --output-format stream-json`.",
            config="agentrig_gemini_cli.config:GeminiCliConfig",
            agent="agentrig_gemini_cli.agent:GeminiCliAgent",
            needs_model=True,
        )
    ]


@agentrig.hookimpl
def agentrig_stream_parsers() -> list[agentrig.StreamParserSpec]:
    """Declare ``gemini-stream-json``: the CLI's stream JSON (and its session log's usage) as trajectory steps."""
    return [
        agentrig.StreamParserSpec(
            name="gemini-stream-json",
            description="Gemini CLI `--output-format stream-json`: steps, usage per model call, the run's totals.",
            parser="agentrig_gemini_cli.stream_json:create_parser",
        )
    ]
