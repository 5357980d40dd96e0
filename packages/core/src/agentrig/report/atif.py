"""Harbor's Agent Trajectory Interchange Format (ATIF v1.4): one trajectory per checkpoint.

The models follow Harbor's RFC 0001 (root, agent, step, tool call, observation,
metrics, final metrics) with its rules: step ids count from 1, only agent steps
carry model fields, every observation result names a tool call of its own step.
How agentrig's steps map onto it is documented in ``docs/exports.md``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentrig.report.reader import CheckpointDetail, LoadedRun, UnknownStep
from agentrig.report.summary import line_cost

SCHEMA_VERSION = "ATIF-v1.4"


class _Atif(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AtifAgent(_Atif):
    """``agent``: the agent system, its version, the default model."""

    name: str
    version: str
    model_name: str | None = None
    extra: dict[str, Any] | None = None


class AtifToolCall(_Atif):
    """One tool call of an agent step."""

    tool_call_id: str
    function_name: str
    arguments: dict[str, Any]


class AtifObservationResult(_Atif):
    """The result of one tool call (``source_call_id``) or of a call-less action."""

    source_call_id: str | None = None
    content: str | None = None
    extra: dict[str, Any] | None = None


class AtifObservation(_Atif):
    """Environment feedback after an agent step's actions."""

    results: list[AtifObservationResult]


class AtifMetrics(_Atif):
    """One model call's tokens and cost; ``prompt_tokens`` includes the cached ones."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None
    extra: dict[str, Any] | None = None


class AtifStep(_Atif):
    """One step: a user message, a system event, or an agent turn (model call, actions, observation)."""

    step_id: int
    timestamp: str | None = None
    source: Literal["system", "user", "agent"]
    model_name: str | None = None
    message: str
    reasoning_content: str | None = None
    tool_calls: list[AtifToolCall] | None = None
    observation: AtifObservation | None = None
    metrics: AtifMetrics | None = None
    extra: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _agent_only_fields(self) -> AtifStep:
        if self.source != "agent" and any(
            v is not None for v in (self.model_name, self.reasoning_content, self.tool_calls, self.metrics)
        ):
            raise ValueError(f"step {self.step_id}: model_name, reasoning_content, tool_calls and metrics are for agent steps")
        if self.observation is not None:
            ids = {c.tool_call_id for c in self.tool_calls or []}
            for result in self.observation.results:
                if result.source_call_id is not None and result.source_call_id not in ids:
                    raise ValueError(f"step {self.step_id}: observation names unknown tool call {result.source_call_id}")
        return self


class AtifFinalMetrics(_Atif):
    """Sums over the trajectory."""

    total_prompt_tokens: int | None = None
    total_completion_tokens: int | None = None
    total_cached_tokens: int | None = None
    total_cost_usd: float | None = None
    total_steps: int | None = None
    extra: dict[str, Any] | None = None


class AtifTrajectory(_Atif):
    """The root object of an ATIF file."""

    schema_version: str = SCHEMA_VERSION
    session_id: str
    agent: AtifAgent
    steps: list[AtifStep]
    notes: str | None = None
    final_metrics: AtifFinalMetrics | None = None
    extra: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _sequential_ids(self) -> AtifTrajectory:
        for number, step in enumerate(self.steps, 1):
            if step.step_id != number:
                raise ValueError(f"step_id {step.step_id} at position {number}: step ids count from 1 without gaps")
        return self


def _iso(value: Any) -> str:
    return value.isoformat().replace("+00:00", "Z")


def _arguments(arguments: Any) -> dict[str, Any]:
    return arguments if isinstance(arguments, dict) else {"input": arguments}


def to_atif(run: LoadedRun, detail: CheckpointDetail) -> AtifTrajectory:
    """The checkpoint's trajectory in ATIF: user steps, one agent step per model call (with the
    text, thinking, tool calls and their results that followed it), errors as system steps."""
    entry = detail.entry
    steps: list[AtifStep] = []
    turn: dict[str, Any] | None = None
    totals = {"prompt": 0, "completion": 0, "cached": 0, "cost": 0.0, "cost_known": True, "calls": 0}

    def close() -> None:
        nonlocal turn
        if turn is None:
            return
        calls = turn["tool_calls"]
        steps.append(AtifStep(
            step_id=len(steps) + 1, timestamp=turn["timestamp"], source="agent", model_name=turn["model"],
            message="\n\n".join(turn["text"]), reasoning_content="\n\n".join(turn["thinking"]) or None,
            tool_calls=calls or None,
            observation=AtifObservation(results=turn["results"]) if turn["results"] else None,
            metrics=turn["metrics"], extra=turn["extra"] or None,
        ))
        turn = None

    def open_turn(timestamp: str, model: str | None = None, metrics: AtifMetrics | None = None,
                  extra: dict[str, Any] | None = None) -> dict[str, Any]:
        return {"timestamp": timestamp, "model": model, "text": [], "thinking": [], "tool_calls": [],
                "results": [], "metrics": metrics, "extra": extra or {}}

    for step in detail.steps:
        if isinstance(step, UnknownStep):
            close()
            steps.append(AtifStep(step_id=len(steps) + 1, source="system", message="",
                                  extra={"agentrig_kind": step.kind, "agentrig_step": step.data}))
            continue
        stamp = _iso(step.timestamp)
        if step.kind == "user":
            close()
            steps.append(AtifStep(step_id=len(steps) + 1, timestamp=stamp, source="user", message=step.content))
        elif step.kind == "error":
            close()
            steps.append(AtifStep(step_id=len(steps) + 1, timestamp=stamp, source="system", message=step.message,
                                  extra={"agentrig_kind": "error", "error_type": step.error_type}))
        elif step.kind == "plan":
            close()
            steps.append(AtifStep(step_id=len(steps) + 1, timestamp=stamp, source="system",
                                  message=f"plan {step.state}" + (f": {step.detail}" if step.detail else ""),
                                  extra={"agentrig_kind": "plan", "state": step.state, "iteration": step.iteration,
                                         "step": step.step, "tool": step.tool, "plan": step.plan}))
        elif step.kind == "llm_call":
            close()
            usage = step.usage
            metrics = AtifMetrics(
                prompt_tokens=usage.input + usage.cache_read + usage.cache_write, completion_tokens=usage.output,
                cached_tokens=usage.cache_read, cost_usd=step.cost,
                extra={"cache_write_tokens": usage.cache_write, "reasoning_tokens": usage.reasoning,
                       "latency_s": step.latency, "request_id": step.request_id, "stop_reason": step.stop_reason},
            )
            totals["prompt"] += metrics.prompt_tokens or 0
            totals["completion"] += usage.output
            totals["cached"] += usage.cache_read
            totals["calls"] += 1
            if step.cost is None:
                totals["cost_known"] = False
            else:
                totals["cost"] += step.cost
            turn = open_turn(stamp, step.model, metrics, {"tag": step.tag} if step.tag != "act" else None)
        else:
            if turn is None:  # an agent step before any recorded model call
                turn = open_turn(stamp)
            if step.kind == "agent_text":
                turn["text"].append(step.content)
            elif step.kind == "thinking":
                turn["thinking"].append(step.content)
            elif step.kind == "tool_use":
                call_id = step.tool_call_id or f"call_{len(steps) + 1}_{len(turn['tool_calls']) + 1}"
                turn["tool_calls"].append(AtifToolCall(tool_call_id=call_id, function_name=step.tool,
                                                       arguments=_arguments(step.arguments)))
                extra = {k: v for k, v in (("exit_code", step.exit_code), ("is_error", step.is_error or None),
                                           ("elapsed_s", step.elapsed)) if v is not None}
                turn["results"].append(AtifObservationResult(source_call_id=call_id, content=step.result,
                                                             extra=extra or None))
    close()
    record = run.record
    result = entry.result
    versions = record.versions if record else {}
    agent_record = record.identity.agent if record else None
    return AtifTrajectory(
        session_id=f"{run.name}/{entry.problem}/{entry.checkpoint}",
        agent=AtifAgent(
            name=run.agent,
            version=(agent_record.version if agent_record and agent_record.version else versions.get("agentrig", "unknown")),
            model_name=record.identity.model.name if record and record.identity.model else None,
            extra={"distribution": agent_record.distribution, "config": agent_record.config} if agent_record else None,
        ),
        steps=steps,
        notes="Exported by agentrig from trajectory.jsonl: one agent step per model call.",
        final_metrics=AtifFinalMetrics(
            total_prompt_tokens=totals["prompt"], total_completion_tokens=totals["completion"],
            total_cached_tokens=totals["cached"],
            total_cost_usd=totals["cost"] if totals["cost_known"] else None,
            total_steps=len(steps),
            extra={"model_calls": totals["calls"]},
        ),
        extra={
            "agentrig": {
                "run_id": run.name, "problem": entry.problem, "checkpoint": entry.checkpoint, "index": entry.index,
                "status": entry.status, "passed": result.passed if result else None,
                "stop_reason": result.stop_reason if result else None,
                "cost_usd": line_cost(result) if result else None,
            }
        },
    )
