"""Configuration of the ``react`` agent."""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agentrig import AgentConfigBase
from agentrig.boundary import Seconds
from agentrig_react.delegation import DelegationConfig

#: The built-in tools, in the order they are offered.
BUILTIN_TOOL_NAMES: tuple[str, ...] = ("bash", "read_file", "write_file", "edit_file", "list_dir", "submit")


class SubagentConfig(BaseModel):
    """Another agentrig agent offered to the react agent as a tool.

    The tool takes ``task`` (and optional ``paths`` to share), or the fields
    of the ``input`` model; each call runs a fresh agent of ``agent['type']``
    (any installed agent type) on it, with the parent's model, in a directory
    of its own under ``directory`` (created on use), its commands confined to
    it, and returns how it ended.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-zA-Z0-9_-]{1,64}$", description="The tool's name.")
    description: str = Field(min_length=1, description="What the tool does, as the model sees it.")
    agent: dict[str, Any] = Field(description="The subagent's config; 'type' names the agent type.")
    directory: str | None = Field(
        default=None, description="Workspace subdirectory the subagent is confined to (default: subagents/NAME)."
    )

    tools: list[str] | None = Field(
        default=None,
        description="The only tools the subagent gets (its agent type must take a 'tools' allow-list); default: all. "
        "Naming 'mcp__SERVER' (or 'mcp__SERVER__TOOL') of the parent's mcp_servers gives the subagent that server; "
        "without such an entry a subagent gets none of the parent's MCP servers.",
    )
    confine: Literal["strict", "best_effort"] = Field(
        default="strict",
        description="strict: refuse to run unless commands can be confined to the directory, kept from the Docker "
        "socket and the network (a container, or bubblewrap on the local runtime); best_effort: fall back to "
        "Landlock (files and TCP only), then to starting commands in the directory.",
    )
    isolation: Literal["per_call", "shared"] = Field(
        default="per_call",
        description="per_call: each call gets DIRECTORY/NNN (parallel calls never share); shared: calls run one at a time in DIRECTORY.",
    )
    context: DelegationConfig = Field(
        default_factory=DelegationConfig, description="What the parent passes beside the input (recent steps, paths, flags, preview)."
    )
    input: str | None = Field(
        default=None, description="Import path ('package.module:Model') of the tool's pydantic input model; default: task."
    )

    @field_validator("agent")
    @classmethod
    def _has_type(cls, value: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(value.get("type"), str) or not value["type"]:
            raise ValueError("needs a 'type' naming the subagent's agent type (e.g. react)")
        return value

    @field_validator("directory")
    @classmethod
    def _relative(cls, value: str | None) -> str | None:
        if value is None:
            return value
        parts = [p for p in re.split(r"[/\\]", value) if p not in ("", ".")]
        if value.startswith(("/", "\\")) or ".." in parts or not parts:
            raise ValueError(f"'{value}' must be a relative path inside the workspace")
        return "/".join(parts)

    @property
    def subdirectory(self) -> str:
        """The workspace subdirectory the subagent works in."""
        return self.directory or f"subagents/{self.name}"


class ReactConfig(AgentConfigBase):
    """Settings of the ReAct loop; spending limits come from ``cost_limits``."""

    type: Literal["react"] = "react"
    #: ``mcp_servers``: each server's tools are offered as ``mcp__SERVER__TOOL`` (:mod:`agentrig_react.mcp_tools`).
    supports_mcp: ClassVar[bool] = True
    system_prompt: str | None = Field(default=None, description="Replaces the built-in system prompt.")
    max_steps: int = Field(default=50, ge=1, description="Model calls per checkpoint before the agent stops.")
    wall_clock_limit: float | None = Field(default=None, gt=0, description="Seconds per checkpoint; none: no limit.")
    native_tools: bool = Field(default=True, description="Use the provider's tool calling; false: tool calls in text.")
    parallel_tool_calls: bool = Field(default=False, description="Run independent tool calls of one reply concurrently.")
    max_parallel_tools: int = Field(default=8, ge=1, description="Tool calls run at once when parallel.")
    max_format_errors: int = Field(default=3, ge=1, description="Consecutive unparseable replies before stopping.")
    on_no_tool_calls: Literal["nudge", "stop"] = Field(
        default="nudge",
        description="A reply without a tool call: 'nudge' reminds the model to use its tools, 'stop' ends the run.",
    )
    max_nudges: int = Field(
        default=3, ge=0, description="Reminders in a row for replies without a tool call before the agent stops."
    )
    max_consecutive_repeats: int = Field(default=3, ge=2, description="Identical calls in a row: warn, then stop.")
    compaction_threshold: float = Field(
        default=0.8, gt=0, le=1, description="Share of the context window that triggers compaction."
    )
    compaction_keep_share: float = Field(
        default=0.25, gt=0, lt=1, description="Share of the context window kept verbatim (recent turns) on compaction."
    )
    context_window: int | None = Field(
        default=None, gt=0, description="Context window in tokens; default: the model catalog's (none: no compaction)."
    )
    command_timeout: Seconds = Field(default=120.0, description="Seconds before a bash tool call is killed.")
    max_output_chars: int = Field(default=20_000, ge=200, description="Tool output kept (head and tail) per call.")
    description_overrides: dict[str, str] = Field(default_factory=dict, description="Tool name to replacement description.")
    tools: list[str] | None = Field(
        default=None,
        description="The only tools offered (built-in or subagent names, 'mcp__SERVER' for all tools of an MCP server, "
        "'mcp__SERVER__TOOL' for one); default: all. Tools added from Python stay.",
    )
    subagents: list[SubagentConfig] = Field(default_factory=list, description="Agents offered as tools.")
    planning: bool = Field(
        default=False, description="Plan -> execute -> replan: the model first writes a JSON plan of tool calls."
    )
    max_plan_iterations: int = Field(
        default=3,
        ge=0,
        description="Plans made per checkpoint (the first and replans); 0: no limit but the run's own "
        "(cost_limits: steps, cost, tokens, time), as in GAIA.",
    )
    plan_prompt: str | None = Field(default=None, description="Replaces the instructions that ask for a plan.")
    base_url: str | None = Field(default=None, description="Model endpoint; overrides the provider's env var.")
    model_options: dict[str, Any] = Field(
        default_factory=dict, description="Options of the chat client (stream, timeout, retry, ...)."
    )
    temperature: float | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, gt=0, description="Output tokens per model call.")

    @model_validator(mode="after")
    def _check_tools(self) -> ReactConfig:
        names = list(BUILTIN_TOOL_NAMES)
        for sub in self.subagents:
            if sub.name in names:
                raise ValueError(f"subagents: the name '{sub.name}' is already a tool's; choose another")
            names.append(sub.name)
        if self.tools is not None:
            unknown = [name for name in self.tools if name not in names and not self._names_mcp_server(name)]
            if unknown:
                raise ValueError(f"tools: unknown tool(s) {', '.join(unknown)} (tools: {', '.join(names)})")
            names = [name for name in names if name in self.tools]
        unknown = sorted(name for name in set(self.description_overrides) - set(names) if not self._names_mcp_server(name))
        if unknown:
            raise ValueError(
                f"description_overrides: unknown tool(s) {', '.join(unknown)} (tools: {', '.join(names)})"
            )
        return self

    def _names_mcp_server(self, name: str) -> bool:
        """Whether ``name`` is ``mcp__SERVER`` or ``mcp__SERVER__TOOL`` of a configured server (its tools are
        known only once the server runs)."""
        from agentrig_react.mcp_tools import server_of

        return server_of(name) in self.mcp_servers
