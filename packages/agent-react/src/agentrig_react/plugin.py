"""The agentrig plugin of agentrig-react: declares the ``react`` agent, imports nothing heavy."""

from __future__ import annotations

import agentrig


@agentrig.hookimpl
def agentrig_agents() -> list[agentrig.AgentSpec]:
    """Declare the ``react`` agent type."""
    return [
        agentrig.AgentSpec(
            name="react",
            description="Tool-calling ReAct loop: bash, file tools and subagents over OpenAI or Anthropic.",
            config="agentrig_react.config:ReactConfig",
            agent="agentrig_react.agent:ReactAgent",
            needs_model=True,  # refused up front without --model
        )
    ]
