"""The agentrig plugin of agentrig-aider: the agent and its stream parser, by import path (nothing of aider)."""

from __future__ import annotations

import agentrig


@agentrig.hookimpl
def agentrig_agents() -> list[agentrig.AgentSpec]:
    """Declare the ``aider`` agent type."""
    return [
        agentrig.AgentSpec(
            name="aider",
            description="Aider (PyPI aider-chat, pinned), run non-interactively from its own environment.",
            config="agentrig_aider.config:AiderConfig",
            agent="agentrig_aider.agent:AiderAgent",
            needs_model=True,
        )
    ]


@agentrig.hookimpl
def agentrig_stream_parsers() -> list[agentrig.StreamParserSpec]:
    """Declare ``aider-events``: the launcher's events (model calls with usage, edits, reflections) as steps."""
    return [
        agentrig.StreamParserSpec(
            name="aider-events",
            description="Events of agentrig's aider launcher: steps and usage per model call.",
            parser="agentrig_aider.events:create_parser",
        )
    ]
