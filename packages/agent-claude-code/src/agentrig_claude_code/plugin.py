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
        )
    ]
