"""mini-swe-agent's own config: loading a shipped file or a path, overrides, and limits both ways."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from agentrig import AgentCostLimits, AgentSetupError
from agentrig_miniswe.config import MiniSweConfig
from agentrig_miniswe.upstream import Upstream

ActionFormat = Literal["toolcall", "text"]

# Keys of the agent section that belong to mini's InteractiveAgent or to its
# CLI; DefaultAgent has no use for them (``output_path`` is ours to set).
_INTERACTIVE_AGENT_KEYS = frozenset({"agent_class", "mode", "whitelist_actions", "confirm_exit", "output_path"})

# Keys of the environment section that configure mini's own environment classes
# (which container to start, how): the agentrig session's runtime decides those.
# ``cwd`` too: mini's benchmark configs name paths inside their images
# (/testbed); the agent works in the session's workspace unless
# ``environment_overrides.cwd`` says otherwise.
_FOREIGN_ENVIRONMENT_KEYS = frozenset(
    {
        "environment_class",
        "image",
        "cwd",
        "forward_env",
        "executable",
        "run_args",
        "container_timeout",
        "pull_timeout",
        "startup_timeout",
        "runtime_timeout",
        "deployment_timeout",
        "install_pipx",
        "modal_sandbox_kwargs",
    }
)

# Keys of the model section that only mini's LiteLLM-family models read; the
# agentrig backend takes the model, endpoint and prices from agentrig's catalog.
_LITELLM_ONLY_MODEL_KEYS = frozenset(
    {"model_class", "model_name", "litellm_model_registry", "set_cache_control", "cost_tracking", "provider"}
)


class ResolvedMiniConfig(BaseModel):
    """The three sections mini-swe-agent is built from, after overrides and limits."""

    model_config = ConfigDict(extra="forbid")

    source: str
    agent: dict[str, Any]
    environment: dict[str, Any]
    model: dict[str, Any]
    action_format: ActionFormat


def _read_config(spec: str, upstream: Upstream) -> Any:
    """The config ``spec`` names, found as mini-swe-agent finds it; its YAML read by agentrig's
    loader (:func:`agentrig.yaml_loader.load_yaml`: a file nested too deep is one line, never a crash)."""
    from agentrig.yaml_loader import load_yaml

    if "=" in spec:  # mini's KEY=VALUE form, not a file
        return upstream.get_config_from_spec(spec)
    path = Path(upstream.get_config_path(spec))
    return load_yaml(path.read_text(encoding="utf-8"), str(path))


def load_mini_config(config: MiniSweConfig, upstream: Upstream) -> ResolvedMiniConfig:
    """Read ``config.config_file`` (a shipped name or a path) and merge the overrides over it."""
    try:
        raw = _read_config(config.config_file, upstream)
    except FileNotFoundError:
        raise AgentSetupError(
            f"miniswe config_file '{config.config_file}' not found: name a config shipped with mini-swe-agent "
            f"({', '.join(shipped_config_names(upstream))}) or an existing YAML path"
        ) from None
    except Exception as exc:  # a YAML syntax error (or a file nested too deep) names the file and line
        raise AgentSetupError(f"miniswe config_file '{config.config_file}' cannot be read: {exc}") from None
    if not isinstance(raw, dict):
        raise AgentSetupError(f"miniswe config_file '{config.config_file}' must hold a mapping with an 'agent' section")
    sections: dict[str, dict[str, Any]] = {}
    for name in ("agent", "environment", "model"):
        value = raw.get(name) or {}
        if not isinstance(value, dict):
            raise AgentSetupError(f"miniswe config_file '{config.config_file}': section '{name}' must be a mapping")
        sections[name] = copy.deepcopy(value)

    agent = {k: v for k, v in sections["agent"].items() if k not in _INTERACTIVE_AGENT_KEYS}
    agent = upstream.recursive_merge(agent, config.agent_overrides)
    allowed_agent = set(upstream.AgentConfig.model_fields) - {"output_path"}
    for key in config.agent_overrides:
        if key not in allowed_agent:
            raise AgentSetupError(
                f"miniswe agent_overrides.{key} is not a mini-swe-agent agent setting "
                f"(known: {', '.join(sorted(allowed_agent))})"
            )
    for key in ("system_template", "instance_template"):
        if not isinstance(agent.get(key), str):
            raise AgentSetupError(
                f"miniswe config_file '{config.config_file}' has no agent.{key}: start from a shipped config "
                "or set it in agent_overrides"
            )

    environment = {k: v for k, v in sections["environment"].items() if k not in _FOREIGN_ENVIRONMENT_KEYS}
    environment = upstream.recursive_merge(environment, config.environment_overrides)
    if config.command_timeout is not None:
        environment["timeout"] = config.command_timeout

    model = upstream.recursive_merge(sections["model"], config.model_overrides)
    if config.wall_clock_limit is not None:
        agent["wall_time_limit_seconds"] = config.wall_clock_limit

    return ResolvedMiniConfig(
        source=str(config.config_file),
        agent=agent,
        environment=environment,
        model=model,
        action_format=detect_action_format(config.action_format, agent, model),
    )


def shipped_config_names(upstream: Upstream) -> list[str]:
    """The config files mini-swe-agent ships (``default.yaml``, ``mini.yaml``, ...)."""
    root = Path(upstream.builtin_config_dir)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.yaml"))


def detect_action_format(requested: str, agent: dict[str, Any], model: dict[str, Any]) -> ActionFormat:
    """Tool calls or fenced text blocks, as the config implies when ``requested`` is ``auto``.

    mini-swe-agent picks the format through its model class; its text-based
    configs (default.yaml, mini_textbased.yaml) name no class but ask for
    ``mswea_bash_command`` blocks in their templates, so those count too.
    """
    if requested == "toolcall":
        return "toolcall"
    if requested == "text":
        return "text"
    model_class = str(model.get("model_class") or "")
    if model_class.endswith("textbased") or model.get("action_regex"):
        return "text"
    templates = " ".join(str(agent.get(k, "")) for k in ("system_template", "instance_template"))
    if "```mswea_bash_command" in templates:
        return "text"
    return "toolcall"


def apply_limits(
    agent: dict[str, Any], limits: AgentCostLimits, prior_cost: float
) -> dict[str, Any]:
    """mini's ``step_limit``/``cost_limit`` from agentrig's limits (when set; else the config's).

    ``net_cost_limit`` (the whole problem's budget) becomes the remaining budget
    of this checkpoint when that is tighter.
    """
    agent = dict(agent)
    if limits.step_limit:
        agent["step_limit"] = limits.step_limit
    cost_limit = limits.cost_limit or 0.0
    if limits.net_cost_limit:
        remaining = limits.net_cost_limit - prior_cost
        # mini treats 0 as "no limit": an exhausted budget still needs a positive limit.
        remaining = max(remaining, 1e-12)
        cost_limit = min(cost_limit, remaining) if cost_limit else remaining
    if cost_limit:
        agent["cost_limit"] = cost_limit
    return agent


EXIT_STATUS_STOP_REASONS: dict[str, str] = {
    "Submitted": "submitted",
    "TimeExceeded": "wall_clock_limit",
    "RepeatedFormatError": "format_errors",
    "UserInterruption": "interrupted",
}
"""mini-swe-agent exit statuses and the agentrig stop reasons they become (LimitsExceeded: see below)."""


def stop_reason_for(
    exit_status: str,
    *,
    agentrig_limit: str | None,
    n_calls: int,
    step_limit: int,
) -> str:
    """The agentrig stop reason of a mini-swe-agent exit status.

    ``LimitsExceeded`` names whichever agentrig limit was reached
    (``step_limit``, ``cost_limit``, ``net_cost_limit``), else the config's own
    limit that mini-swe-agent enforced. An uncaught exception's class name is
    its exit status: that is an ``error``.
    """
    if exit_status == "LimitsExceeded":
        if agentrig_limit is not None:
            return agentrig_limit
        return "step_limit" if 0 < step_limit <= n_calls else "cost_limit"
    return EXIT_STATUS_STOP_REASONS.get(exit_status, "error")
