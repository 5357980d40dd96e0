"""The agentrig plugin of agentrig-qwen-code: the agent and its stream parser, by import path."""

from __future__ import annotations

import agentrig


@agentrig.hookimpl
def agentrig_agents() -> list[agentrig.AgentSpec]:
    """Declare the ``qwen_code`` agent type."""
    return [
        agentrig.AgentSpec(
            name="qwen_code",
            description="Qwen Code (pinned npm version), an OpenAI-compatible CLI, driven through "
            "`qwen --output-format stream-json`.",
            config="agentrig_qwen_code.config:QwenCodeConfig",
            agent="agentrig_qwen_code.agent:QwenCodeAgent",
            needs_model=True,
        )
    ]


@agentrig.hookimpl
def agentrig_stream_parsers() -> list[agentrig.StreamParserSpec]:
    """Declare ``qwen-stream-json``: the CLI's stream JSON as trajectory steps with usage per model call."""
    return [
        agentrig.StreamParserSpec(
            name="qwen-stream-json",
            description="Qwen Code `--output-format stream-json`: steps, usage per model call, the run's totals.",
            parser="agentrig_qwen_code.stream_json:create_parser",
        )
    ]
