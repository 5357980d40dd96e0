"""Configuration of the ``react`` agent."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentrig import AgentConfigBase


class ReactConfig(AgentConfigBase):
    """Settings of the ReAct loop; limits come from ``cost_limits``."""

    type: Literal["react"] = "react"
    system_prompt: str | None = Field(default=None, description="Replaces the built-in system prompt.")
    max_steps: int = Field(default=50, ge=1, description="Model calls per checkpoint before the agent stops.")
    wall_clock_limit: float | None = Field(default=None, gt=0, description="Seconds per checkpoint; none: no limit.")
    native_tools: bool = Field(default=True, description="Use the provider's tool calling; false: tool calls in text.")
    parallel_tool_calls: bool = Field(default=False, description="Run independent tool calls of one reply concurrently.")
    max_format_errors: int = Field(default=3, ge=1, description="Consecutive unparseable replies before stopping.")
    max_consecutive_repeats: int = Field(default=3, ge=2, description="Identical calls in a row: warn, then stop.")
    compaction_threshold: float = Field(default=0.8, gt=0, le=1, description="Share of the context window that triggers compaction.")
    command_timeout: float = Field(default=120.0, gt=0, description="Seconds before a bash tool call is killed.")
    max_output_chars: int = Field(default=20_000, ge=200, description="Tool output kept (head and tail) per call.")
    description_overrides: dict[str, str] = Field(default_factory=dict, description="Tool name to replacement description.")
    temperature: float | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, gt=0, description="Output tokens per model call.")
