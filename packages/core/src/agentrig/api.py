"""One call from Python: ``agentrig.run_task(task, agent=..., model=...) -> TaskResult``.

For notebooks and scripts: no problem directory, no run directory unless
``output`` is given; underneath, the same lifecycle as ``agentrig run``
(``Agent.from_config``, ``setup``, ``run_checkpoint`` with the runner's
limits, ``save_artifacts``, ``cleanup``) with the same hooks fired.

    >>> result = agentrig.run_task("Write hello.txt", agent="react", model="openai/gpt-4.1-mini",
    ...                            workspace="./scratch", max_steps=20)
    >>> result.success, result.answer, result.tools_used, result.cost

:func:`list_tools` says which tools an agent offers its model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agentrig.trajectory import TrajectoryStep
from agentrig.usage import UsageTracker

if TYPE_CHECKING:
    from agentrig.agents.interface import Agent, CheckpointInferenceResult
    from agentrig.agents.session import Session
    from agentrig.llm.cache import ModelCallCache
    from agentrig.run.plan import RunPlan

#: Stop reasons of an agent that finished its work (anything else: it was stopped or failed).
FINISHED = frozenset({"submitted", "no_tool_calls", "no_actions", "completed", "finished"})


class ToolInfo(BaseModel):
    """A tool an agent offers its model: name, description, JSON schema of its arguments."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str
    parameters: dict[str, Any] = Field(default_factory=dict)


class TaskResult(BaseModel):
    """What :func:`run_task` produced.

    ``answer``: what the agent submitted (its ``submission`` or ``answer``, else
    its last text); ``steps``: its model steps; ``tools_used``: the tools it
    called, in order of first use; ``success``: it finished on its own, with no
    error and no limit reached; ``error``: one line when it failed;
    ``usage``/``cost``: what it spent; ``trajectory``: every step;
    ``workspace``: where the files are now (``None`` when a temporary
    workspace was removed); ``output``: the records written, when asked.
    """

    model_config = ConfigDict(extra="forbid")

    answer: str | None
    steps: int
    tools_used: list[str]
    success: bool
    error: str | None
    stop_reason: str | None
    usage: UsageTracker
    cost: float
    trajectory: list[TrajectoryStep]
    workspace: Path | None = None
    output: Path | None = None


class TaskError(ValueError):
    """A bad argument of :func:`run_task` / :func:`list_tools`; the message names it (one line)."""


def _config(agent: str, config: dict[str, Any]) -> Any:
    """The validated agent config: ``agent`` (a type or a config file) with ``config`` on top."""
    from pydantic import ValidationError

    from agentrig.agents.interface import get_agent_config_cls
    from agentrig.errors import UnknownAgentError
    from agentrig.run.agent_config import AgentConfigError, _describe, _is_config_file, _merge, read_config_file

    try:
        data = read_config_file(Path(agent)) if _is_config_file(agent) else {"type": agent}
        config_cls = get_agent_config_cls(data["type"])
    except (AgentConfigError, UnknownAgentError) as exc:
        raise TaskError(f"agent={agent!r}: {exc}") from None
    if "type" in config:
        raise TaskError("the agent type is the 'agent' argument, not a config field")
    try:
        return config_cls.model_validate(_merge(data, config))
    except ValidationError as exc:
        raise TaskError(f"agent {data['type']!r} config: {_describe(exc)}") from None


def _answer(agent: Any, trajectory: list[Any]) -> str | None:
    for name in ("submission", "answer"):
        value = getattr(agent, name, None)
        if isinstance(value, str) and value:
            return value
    for step in reversed(trajectory):
        if step.kind == "agent_text" and step.content:
            return str(step.content)
    return None


def run_task(
    task: str,
    agent: str = "react",
    model: str | None = None,
    workspace: str | Path | None = None,
    runtime: str = "local",
    *,
    output: str | Path | None = None,
    image: str | None = None,
    thinking: str | None = None,
    thinking_max_tokens: int | None = None,
    models_dir: str | Path | None = None,
    runtime_options: dict[str, Any] | None = None,
    cache: bool | str | Path | ModelCallCache | None = None,
    **config: Any,
) -> TaskResult:
    """Run ``agent`` on ``task`` once and return what it did.

    ``agent`` is an agent type or an agent config file; ``config`` sets fields
    of its config (``max_steps=20``, ``cost_limits={"time_limit": 300}``).
    ``model`` is ``PROVIDER/NAME``, an alias or ``replay/FILE.jsonl``; endpoints
    and keys come from the environment as for ``agentrig run``. ``workspace``:
    the directory the agent works in, changed in place (``None``: a temporary
    one, removed afterwards). ``output``: a directory to write the records to
    (``prompt.txt``, ``trajectory.jsonl``, ``inference_result.json``,
    ``agent/``, ``result.json``). ``cache``: the model-call cache, as ``agentrig run --cache``: ``True`` (the
    user's cache directory), a directory, or a :class:`~agentrig.llm.cache.ModelCallCache` (its policy and
    expiry); ``None``/``False``: none. Bad arguments raise :class:`TaskError`;
    whatever the agent does is in the result, never raised.
    """
    from agentrig.run.plan import PlanError, build_plan
    from agentrig.scratch import sweep

    if not isinstance(task, str) or not task.strip():
        raise TaskError("task: give the task text")
    sweep()  # what agentrig processes killed earlier left: their processes and temporary directories
    try:  # the same plan as `agentrig run` builds; a model is optional here
        plan = build_plan(
            _config(agent, config), model=model, models_dir=Path(models_dir) if models_dir else None,
            needs_model=False, runtime=runtime, image=image, runtime_options=runtime_options,
            thinking=thinking, thinking_max_tokens=thinking_max_tokens, model_cache=_cache(cache),
        )
    except PlanError as exc:
        raise TaskError(exc.python_text()) from None
    out = Path(output) if output is not None else None
    options = dict(runtime_options or {})
    if image:
        options["image"] = image
    session = _open_session(workspace, runtime, options or None)
    attempt = _attempt(plan, session, task, out)
    task_result = attempt.task_result(
        workspace=Path(workspace).expanduser().resolve() if workspace is not None else None,
        output=out.resolve() if out is not None else None,
    )
    if out is not None:
        from agentrig.atomic import write_text_atomic

        out.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out / "result.json", task_result.model_dump_json(indent=2) + "\n")
    return task_result


def _cache(cache: object) -> ModelCallCache | None:
    """``run_task``'s ``cache=`` as the plan's model-call cache; :class:`TaskError` naming it otherwise."""
    from agentrig.llm.cache import ModelCallCache, default_cache_dir

    if cache is None or cache is False:
        return None
    if isinstance(cache, ModelCallCache):
        return cache
    if cache is True:
        return ModelCallCache(directory=default_cache_dir())
    if not isinstance(cache, (str, Path)) or not str(cache).strip():
        raise TaskError(f"cache={cache!r}: True, a directory, or an agentrig.llm.cache.ModelCallCache")
    directory = Path(cache).expanduser().resolve()
    if directory.exists() and not directory.is_dir():
        raise TaskError(f"cache={str(cache)!r}: not a directory")
    return ModelCallCache(directory=directory)


def _open_session(workspace: str | Path | None, runtime: str, options: dict[str, Any] | None) -> Session:
    """The session the agent works in: ``workspace`` as it is (kept), else a temporary one (removed on close)."""
    from agentrig.agents.session import Session
    from agentrig.workspace import WorkspaceError

    if workspace is not None:
        return _session_in(workspace, runtime, options)
    try:
        return Session.create(runtime=runtime, name="task", runtime_options=options)
    except (WorkspaceError, Exception) as exc:
        raise TaskError(f"runtime={runtime!r}: {' '.join(str(exc).split())}") from None


def _session_in(workspace: str | Path, runtime: str, options: dict[str, Any] | None) -> Session:
    """A session on the caller's own directory, its home and scratch in a private temporary directory."""
    from agentrig.agents.session import Session
    from agentrig.runtime.resolve import create_runtime
    from agentrig.scratch import remove_temp_dir, temp_dir
    from agentrig.workspace import Workspace

    root = Path(workspace).expanduser().resolve()
    if not root.is_dir():
        raise TaskError(f"workspace={str(workspace)!r}: not a directory")
    private = temp_dir("agentrig-task-")  # named after this process: swept by the next agentrig if it is killed
    try:
        home = private / "home"
        home.mkdir()
        rt = create_runtime(runtime, root, home=home, options=options)
    except Exception as exc:
        remove_temp_dir(private)
        raise TaskError(f"runtime={runtime!r}: {' '.join(str(exc).split())}") from None
    return Session(Workspace(root, owned=False), rt, home, directory=private)


@dataclass
class _Attempt:
    """What the agent did: its steps as they came, its result, the agent itself, one line of error."""

    trajectory: list[TrajectoryStep] = field(default_factory=list)
    result: CheckpointInferenceResult | None = None
    agent: Agent | None = None
    error: str | None = None

    def task_result(self, workspace: Path | None, output: Path | None) -> TaskResult:
        """The :class:`TaskResult` of this attempt."""
        usage = self.result.usage if self.result is not None else UsageTracker()
        stop_reason = self.result.stop_reason if self.result is not None else "error"
        tools: list[str] = []
        for step in self.trajectory:
            if step.kind == "tool_use" and step.tool not in tools:
                tools.append(step.tool)
        return TaskResult(
            answer=_answer(self.agent, self.trajectory) if self.agent is not None else None,
            steps=usage.steps,
            tools_used=tools,
            # no stop reason and no error: the agent returned on its own (the contract asks for no reason)
            success=self.error is None and (stop_reason is None or stop_reason in FINISHED),
            error=self.error,
            stop_reason=stop_reason,
            usage=usage,
            cost=usage.cost,
            trajectory=self.trajectory,
            workspace=workspace,
            output=output,
        )


def _attempt(plan: RunPlan, session: Session, task: str, out: Path | None) -> _Attempt:
    """Build the agent, run it on ``task`` in ``session`` through the lifecycle, clean both up; whatever
    goes wrong is the attempt's error, never raised."""
    from agentrig.llm.cache import use_cache
    from agentrig.llm.run_paths import session_paths, use_run_paths

    attempt = _Attempt()
    # the core's model clients of this call use it, as a problem run's do, keyed without the session's paths
    with use_cache(plan.model_cache), use_run_paths(session_paths(session, out)):
        _run_attempt(attempt, plan, session, task, out)
    return attempt


def _run_attempt(attempt: _Attempt, plan: RunPlan, session: Session, task: str, out: Path | None) -> None:
    """The body of :func:`_attempt`: fills ``attempt`` in."""
    import dataclasses

    from agentrig.agents import lifecycle
    from agentrig.agents.interface import Agent
    from agentrig.model_definition import ModelDefinition
    from agentrig.problem import Checkpoint

    try:
        context = plan.agent_context("task")
        if context.model is None:  # no model: agents that need one fail on this placeholder, in the result
            context = dataclasses.replace(context, model=ModelDefinition(provider="none", name="none"))
        attempt.agent = agent = Agent.from_config(plan.agent_config_model(), context)
        agent.add_step_listener(attempt.trajectory.append)
        lifecycle.setup_agent(agent, session)
        attempt.result = result = lifecycle.run_checkpoint(
            agent, Checkpoint(name="task", prompt="task.md"), task, session.runtime
        )
        if result.had_error:
            lines = (result.error_message or "").strip().splitlines()
            attempt.error = lines[-1] if lines else "the agent failed"
        if out is not None:
            _write_records(out, task, attempt.trajectory, result, agent)
    except Exception as exc:  # setup failures and the like: a result, not an exception
        attempt.error = " ".join(f"{type(exc).__name__}: {exc}".split())
    finally:
        if attempt.agent is not None:
            try:
                lifecycle.cleanup_agent(attempt.agent)
            except Exception as exc:
                attempt.error = attempt.error or f"cleanup failed: {exc}"
        session.close()


def _write_records(out: Path, task: str, trajectory: list[Any], result: Any, agent: Any) -> None:
    from agentrig.atomic import write_model_atomic, write_text_atomic

    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / "prompt.txt", task)
    write_text_atomic(out / "trajectory.jsonl", "".join(step.model_dump_json() + "\n" for step in trajectory))
    write_model_atomic(out / "inference_result.json", result)
    (out / "agent").mkdir(exist_ok=True)
    agent.save_artifacts(out / "agent")
    agent.secrets.tree(out / "agent")  # the agent's own files hold what its tools printed: no secret stays


def list_tools(agent: str = "react", **config: Any) -> list[ToolInfo]:
    """The tools ``agent`` (a type or a config file, with ``config`` fields) offers its model.

    Empty for an agent that does not say (``Agent.tool_specs``), e.g. a CLI
    agent whose tools live in another program.
    """
    from agentrig.agents.interface import Agent, AgentContext
    from agentrig.model_definition import ModelDefinition

    agent_config = _config(agent, config)
    context = AgentContext(model=ModelDefinition(provider="none", name="none"), problem_name="tools")
    built = Agent.from_config(agent_config, context)
    return [ToolInfo(name=s.name, description=s.description, parameters=s.parameters) for s in built.tool_specs()]
