"""Configuration of the ``claude_code`` agent."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentrig import AgentConfigBase

DEFAULT_CLI_VERSION = "2.1.330"


class ClaudeCodeConfig(AgentConfigBase):
    """How to launch the ``claude`` CLI and what to allow it."""

    type: Literal["claude_code"] = "claude_code"
    version: str | None = Field(default=DEFAULT_CLI_VERSION, description="npm version of @anthropic-ai/claude-code.")
    binary: str | None = Field(default=None, description="Path of the claude executable; none: found on PATH.")
    base_url: str | None = Field(default=None, description="ANTHROPIC_BASE_URL; overrides the model's and the environment's.")
    append_system_prompt: str | None = None
    allowed_tools: list[str] = Field(default_factory=list)
    disallowed_tools: list[str] = Field(default_factory=list)
    permission_mode: str = Field(default="bypassPermissions")
    timeout: float | None = Field(default=None, gt=0, description="Wall-clock seconds per checkpoint.")
    idle_timeout: float | None = Field(default=None, gt=0, description="Seconds without output before the CLI is killed.")
