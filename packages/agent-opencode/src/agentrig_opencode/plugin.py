"""The agentrig plugin of agentrig-opencode: the agent and its stream parser, by import path."""

from __future__ import annotations

import agentrig


@agentrig.hookimpl
def agentrig_agents() -> list[agentrig.AgentSpec]:
    """Declare the ``opencode`` agent type."""
    return [
        agentrig.AgentSpec(
            name="opencode",
            description="OpenCode (pinned npm version of opencode-ai), driven through `opencode run --format json`.",
            config="agentrig_opencode.config:OpenCodeConfig",
            agent="agentrig_opencode.agent:OpenCodeAgent",
            needs_model=True,
        )
    ]


@agentrig.hookimpl
def agentrig_stream_parsers() -> list[agentrig.StreamParserSpec]:
    """Declare ``opencode-run-json``: ``opencode run --format json`` events as trajectory steps."""
    return [
        agentrig.StreamParserSpec(
            name="opencode-run-json",
            description="OpenCode `run --format json` output: steps, tool calls, usage and cost per model call.",
            parser="agentrig_opencode.run_json:create_parser",
        )
    ]
