"""The agentrig plugin of agentrig-openhands: the agent and its stream parser, by import path."""

from __future__ import annotations

import agentrig


@agentrig.hookimpl
def agentrig_agents() -> list[agentrig.AgentSpec]:
    """Declare the ``openhands`` agent type."""
    return [
        agentrig.AgentSpec(
            name="openhands",
            description="OpenHands (pinned openhands-sdk, Python 3.12 environment of its own), headless through its SDK.",
            config="agentrig_openhands.config:OpenHandsConfig",
            agent="agentrig_openhands.agent:OpenHandsAgent",
            needs_model=True,
        )
    ]


@agentrig.hookimpl
def agentrig_stream_parsers() -> list[agentrig.StreamParserSpec]:
    """Declare ``openhands-jsonl``: agentrig's OpenHands driver's JSON lines as trajectory steps."""
    return [
        agentrig.StreamParserSpec(
            name="openhands-jsonl",
            description="agentrig's OpenHands SDK driver: steps, usage and OpenHands' cost per model call, its totals.",
            parser="agentrig_openhands.events:create_parser",
        )
    ]
