"""The agentrig plugin of agentrig-claude-code: the agent and its stream parser, by import path."""

from __future__ import annotations

import agentrig


@agentrig.hookimpl
def agentrig_agents() -> list[agentrig.AgentSpec]:
    """Declare the ``claude_code`` agent type."""
    return [
        agentrig.AgentSpec(
            name="claude_code",
            description="Anthropic's Claude Code CLI (pinned npm version), driven through stream-json.",
            config="agentrig_claude_code.config:ClaudeCodeConfig",
            agent="agentrig_claude_code.agent:ClaudeCodeAgent",
            needs_model=True,  # refused up front without --model
        )
    ]


@agentrig.hookimpl
def agentrig_stream_parsers() -> list[agentrig.StreamParserSpec]:
    """Declare ``claude-stream-json``: Claude Code's ``--output-format stream-json`` as trajectory steps."""
    return [
        agentrig.StreamParserSpec(
            name="claude-stream-json",
            description="Claude Code CLI stream-json output: steps, live usage and cost, the final result.",
            parser="agentrig_claude_code.stream_json:create_parser",
        )
    ]
