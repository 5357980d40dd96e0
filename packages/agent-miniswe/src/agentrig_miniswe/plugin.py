"""The agentrig plugin of agentrig-miniswe: imports neither minisweagent nor litellm."""

from __future__ import annotations

import agentrig


@agentrig.hookimpl
def agentrig_agents() -> list[agentrig.AgentSpec]:
    """Declare the ``miniswe`` agent type."""
    return [
        agentrig.AgentSpec(
            name="miniswe",
            description="mini-swe-agent's DefaultAgent (bash-only loop), run in agentrig's runtimes.",
            config="agentrig_miniswe.config:MiniSweConfig",
            agent="agentrig_miniswe.agent:MiniSweAgent",
            needs_model=True,  # refused up front without --model
        )
    ]
