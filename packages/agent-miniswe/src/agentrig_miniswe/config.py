"""Configuration of the ``miniswe`` agent (imports neither minisweagent nor litellm)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from agentrig import AgentConfigBase
from agentrig.boundary import WholeSeconds


class MiniSweConfig(AgentConfigBase):
    """Which mini-swe-agent config to start from, and what to override in it.

    The chosen config file's ``agent``, ``environment`` and ``model`` sections
    are used as mini-swe-agent uses them; the ``*_overrides`` fields are merged
    over them (recursively, as mini-swe-agent merges its ``-c`` specs).
    agentrig's ``cost_limits`` replace the config's ``step_limit`` and
    ``cost_limit`` when they are set (non-zero).
    """

    type: Literal["miniswe"] = "miniswe"
    config_file: str = Field(
        default="mini.yaml",
        description="A config shipped with mini-swe-agent (mini.yaml, what the `mini` command starts from: bash tool calls; "
        "default.yaml: one fenced command per reply; mini_textbased.yaml, ...) or a path to one.",
    )
    agent_overrides: dict[str, Any] = Field(
        default_factory=dict,
        description="Keys of mini-swe-agent's agent config (system_template, instance_template, step_limit, ...) to override.",
    )
    environment_overrides: dict[str, Any] = Field(
        default_factory=dict,
        description="Keys of the environment config to override (env, timeout, cwd, interpreter).",
    )
    model_overrides: dict[str, Any] = Field(
        default_factory=dict,
        description="Keys of mini-swe-agent's model config to override (observation_template, format_error_template, model_kwargs, ...).",
    )
    model_backend: Literal["agentrig", "litellm"] = Field(
        default="agentrig",
        description=(
                "agentrig: models through agentrig.llm (catalog, credentials, pricing, retries); "
                "litellm: mini-swe-agent's own LiteLLM model."
            ),
    )
    action_format: Literal["auto", "toolcall", "text"] = Field(
        default="auto",
        description="How the model gives commands: native bash tool calls, or one fenced block per reply. "
        "auto: as the config file's model class implies (a *_textbased class or an action_regex means text).",
    )
    command_timeout: WholeSeconds | None = Field(default=None, description="Seconds per command; none: the config's.")
    wall_clock_limit: int | None = Field(
        default=None, gt=0, description="Seconds per checkpoint (mini-swe-agent's wall_time_limit_seconds); none: the config's."
    )
    base_url: str | None = Field(default=None, description="Model endpoint; overrides the provider's environment variable.")
    model_options: dict[str, Any] = Field(
        default_factory=dict,
        description="Options of agentrig's chat client (timeout, retry, stream, max_tokens, ...; model_backend agentrig).",
    )
    trajectory_name: str = Field(
        default="miniswe.traj.json",
        pattern=r"^[A-Za-z0-9_.-]+\.traj\.json$",
        description="File name of mini-swe-agent's own trajectory in the agent's artifacts (its inspector opens *.traj.json).",
    )
