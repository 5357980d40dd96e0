"""Configuration of the ``miniswe`` agent."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from agentrig import AgentConfigBase


class MiniSweConfig(AgentConfigBase):
    """Which mini-swe-agent config to start from, and what to override in it."""

    type: Literal["miniswe"] = "miniswe"
    config_file: str = Field(
        default="default.yaml",
        description="A config shipped with mini-swe-agent (default.yaml, mini.yaml, ...) or a path to one.",
    )
    agent_overrides: dict[str, Any] = Field(
        default_factory=dict, description="Keys of mini-swe-agent's agent config (templates, limits) to override."
    )
    model_backend: Literal["agentrig", "litellm"] = Field(
        default="agentrig", description="agentrig: models through agentrig.llm; litellm: mini-swe-agent's own model."
    )
    command_timeout: int | None = Field(default=None, gt=0, description="Seconds per command; none: the config's.")
