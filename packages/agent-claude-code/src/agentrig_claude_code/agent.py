"""The ``claude_code`` agent (implementation pending: its own issue)."""

from __future__ import annotations

from pathlib import Path

from agentrig import Agent, AgentSetupError


class ClaudeCodeAgent(Agent):
    """Placeholder until the agent's issue lands: refuses to set up."""

    @classmethod
    def _from_config(cls, config, model, credential, problem_name, verbose, image, thinking_preset=None, thinking_max_tokens=None):  # type: ignore[no-untyped-def]
        return cls("claude_code", problem_name, config.cost_limits, model.pricing, verbose)

    def setup(self, session) -> None:  # type: ignore[no-untyped-def]
        raise AgentSetupError("the claude_code agent is not implemented yet")

    def run(self, task: str) -> None:
        raise AgentSetupError("the claude_code agent is not implemented yet")

    def reset(self) -> None:
        pass

    def save_artifacts(self, path: Path) -> None:
        pass

    def cleanup(self) -> None:
        pass
