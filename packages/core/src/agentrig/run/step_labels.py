"""What ``agentrig run -v`` says a trajectory step was: ``model call (act: 1,234 in, 56 out)``,
``tool bash (exit 0)``, ``plan EXECUTING_PLAN step 2 bash``."""

from __future__ import annotations

from typing import Any


def _count(value: int) -> str:
    return f"{value:,}"


def step_label(step: Any) -> str:
    """One short label of a trajectory step for the progress log (never its content: a model's text or a
    tool's output has no place on the terminal line)."""
    kind = getattr(step, "kind", "")
    if kind == "llm_call":
        usage = step.usage
        parts = [f"{step.tag}: {_count(usage.input)} in, {_count(usage.output)} out"]
        if step.cache_hit:
            parts.append("from the cache")
        return f"model call ({', '.join(parts)})"
    if kind == "tool_use":
        if step.is_error:
            return f"tool {step.tool} (error)"
        return f"tool {step.tool}" + (f" (exit {step.exit_code})" if step.exit_code is not None else "")
    if kind == "plan":  # a planning agent's state: "plan EXECUTING_PLAN step 2 bash"
        return " ".join(str(part) for part in ("plan", step.state, step.step and f"step {step.step}", step.tool) if part)
    if kind == "error":
        return f"error ({step.error_type or 'agent'})"
    return {"agent_text": "agent text", "thinking": "thinking", "user": "message to the agent"}.get(kind, kind or "step")
