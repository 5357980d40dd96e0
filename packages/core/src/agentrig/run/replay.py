"""``agentrig replay``: re-run one recorded checkpoint with its recorded model replies.

The checkpoint runs in a fresh workspace (the problem's files, or the previous
checkpoint's snapshot) with the agent of the run, its model replaced by a
``ReplayModel`` over ``<checkpoint>/agent/replay.jsonl`` (agents that record
their replies write them there); agents that replay on their own
(``supports_replay``) get the checkpoint directory instead. The new test
verdict is compared with the recorded one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from agentrig.agents import lifecycle
from agentrig.boundary import BoundaryError, is_inside, is_safe_name, shorten
from agentrig.run.agent_image import agent_image_for
from agentrig.run.evaluation import REPORT_DIR, evaluate_checkpoint
from agentrig.run.layout import RunDirectory, RunDirectoryError
from agentrig.run.records import ATTEMPT_PREFIX, EvaluationRecord, RunRecord, is_safe_unit, split_unit
from agentrig.run.rerun_runtime import RerunRequest, RerunRuntime, choose_runtime

REPLAY_FILE = "replay.jsonl"


class ReplayError(ValueError):
    """The checkpoint cannot be replayed; the message says why (one line)."""


class ReplayOutcome(BaseModel):
    """What a replay found: the new and the recorded verdicts."""

    model_config = ConfigDict(extra="forbid")

    problem: str
    checkpoint: str
    passed: bool | None
    recorded_passed: bool | None
    evaluation: EvaluationRecord
    stop_reason: str | None = None
    had_error: bool = False
    recorded_had_error: bool = False
    recorded_stop_reason: str | None = None

    @property
    def matches(self) -> bool:
        """Whether the replay's verdict equals the recorded one; never when either ended in an error
        (a test run on a checkpoint cut short by an error is no verdict to compare)."""
        return not self.had_error and not self.recorded_had_error and self.passed == self.recorded_passed


def replay_targets(path: Path, on_notice: Callable[[str], None] | None = None) -> list[Path]:
    """The checkpoint directories ``path`` names: a run's (``RUN_DIR``), a problem's
    (``RUN_DIR/PROBLEM``) finished checkpoints in order, or ``RUN_DIR/PROBLEM/CHECKPOINT`` itself.

    ``on_notice`` hears of each ``results.jsonl`` line left out (not a record, or a name that is not one)."""
    path = Path(path)
    if not path.is_dir():
        raise ReplayError(f"{path}: no such directory (expected RUN_DIR, RUN_DIR/PROBLEM or RUN_DIR/PROBLEM/CHECKPOINT)")
    if (path / "run.json").is_file():
        run_dir, problems = RunDirectory(path), None
    elif (path.parent / "run.json").is_file():
        run_dir, problems = RunDirectory(path.parent), {path.name}
    elif path.name.startswith(ATTEMPT_PREFIX) and (path.parent.parent / "run.json").is_file():
        run_dir, problems = RunDirectory(path.parent.parent), {f"{path.parent.name}/{path.name}"}  # one attempt
    elif (path.parent.parent / "run.json").is_file() or (
        path.parent.name.startswith(ATTEMPT_PREFIX) and (path.parent.parent.parent / "run.json").is_file()
    ):
        return [path]
    else:
        raise ReplayError(
            f"{path} is not a run directory, nor a problem or checkpoint in one (no run.json in it or the two"
            " directories above): give RUN_DIR, RUN_DIR/PROBLEM or RUN_DIR/PROBLEM/CHECKPOINT"
        )
    try:
        record = run_dir.read_run()
    except RunDirectoryError as exc:
        raise ReplayError(str(exc)) from None
    if problems is not None and not any(name in record.problems or name in {split_unit(u)[0] for u in record.problems}
                                        for name in problems):
        raise ReplayError(f"{run_dir.run_file}: the run has no problem '{next(iter(problems))}'")
    unreadable: list[str] = []
    try:
        results = run_dir.results_read_back(unreadable, on_notice)
    except RunDirectoryError as exc:
        raise ReplayError(str(exc)) from None
    lines = [
        line for line in results
        if (problems is None or line.problem in problems or line.unit in problems) and line.status != "skipped"
    ]
    order = list(record.problems)
    lines.sort(key=lambda line: (order.index(line.unit) if line.unit in order else len(order), line.index))
    if not lines:
        first = f" ({run_dir.results_file}: {len(unreadable)} unreadable lines, the first: {unreadable[0]})" if unreadable else ""
        raise ReplayError(f"{path}: no finished checkpoint to replay{first}")
    return [run_dir.checkpoint(line.unit, line.checkpoint).root for line in lines]


def _prepare(problem: Any, checkpoint: Any, session: Any) -> None:
    """The format's ``prepare_checkpoint``, as the run called it; its failure is a :class:`ReplayError`."""
    from agentrig.formats.interface import CheckpointSetupError
    from agentrig.formats.resolve import get_format

    try:
        get_format(problem.format).prepare_checkpoint(problem, checkpoint, session.runtime, session.workspace.path)
    except CheckpointSetupError as exc:
        raise ReplayError(f"before the agent: {exc}") from None


def _recorded_policy(recorded: EvaluationRecord) -> Any:
    """The pass policy the run used, so the replay's verdict is decided the same way."""
    from agentrig.evaluation.policy import PassPolicy, PolicyError

    try:
        return PassPolicy.parse(recorded.policy) if recorded.policy else None
    except PolicyError:
        return None


@dataclass
class _Target:
    """The recorded checkpoint to replay, found and read back: its run, problem, checkpoint and verdict."""

    directory: Path
    run_dir: RunDirectory
    record: RunRecord
    problem_name: str
    problem: Any
    index: int
    recorded: EvaluationRecord

    @property
    def checkpoint(self) -> Any:
        """The problem's checkpoint (as its format loads it today)."""
        return self.problem.checkpoints[self.index]

    @property
    def replies(self) -> Path:
        """Where an agent that records its model replies wrote them."""
        return self.run_dir.checkpoint(self.problem_name, self.checkpoint.name).agent / REPLAY_FILE


def replay_checkpoint(
    checkpoint_dir: Path,
    *,
    keep: Path | None = None,
    request: RerunRequest | None = None,
    on_runtime: Callable[[RerunRuntime], None] | None = None,
) -> ReplayOutcome:
    """Replay ``RUN_DIR/PROBLEM/CHECKPOINT``; ``keep`` writes the replay's trajectory and verdict there.

    The recorded commands run where ``request`` says (:func:`~agentrig.run.rerun_runtime.choose_runtime`:
    a sandbox unless the user trusts the run or names an unsandboxed runtime); ``on_runtime`` hears of the
    choice before anything runs (:class:`~agentrig.run.rerun_runtime.RerunRuntimeError` when there is none)."""
    target = _find_target(Path(checkpoint_dir))
    request = request or RerunRequest()
    runtime = _choose_runtime(target, request)
    if not request.trust:
        _refuse_host_mcp_servers(target, runtime)
    if on_runtime is not None:
        on_runtime(runtime)
    agent, image = _replay_agent(target, runtime)
    result, evaluation = _replay_in_session(target, agent, image, keep, runtime)
    checkpoint_name = target.checkpoint.name
    line = next((x for x in target.run_dir.results(target.problem_name) if x.checkpoint == checkpoint_name), None)
    return ReplayOutcome(
        problem=target.problem_name,
        checkpoint=checkpoint_name,
        passed=evaluation.passed,
        recorded_passed=target.recorded.passed,
        evaluation=evaluation,
        stop_reason=result.stop_reason,
        had_error=result.had_error or evaluation.error is not None,
        recorded_had_error=line is not None and (line.had_error or line.status == "error"),
        recorded_stop_reason=line.stop_reason if line is not None else None,
    )


def _find_target(checkpoint_dir: Path) -> _Target:
    """The run, problem and checkpoint ``checkpoint_dir`` names, with the recorded evaluation; every
    name checked, every read guarded, and a :class:`ReplayError` saying what is wrong."""
    from agentrig.run.problems import load_problem

    if not checkpoint_dir.is_dir():
        raise ReplayError(f"{checkpoint_dir}: no such checkpoint directory (expected RUN_DIR/PROBLEM/CHECKPOINT)")
    problem_name, checkpoint_name = checkpoint_dir.parent.name, checkpoint_dir.name
    run_dir = RunDirectory(checkpoint_dir.parent.parent)
    if checkpoint_dir.parent.name.startswith(ATTEMPT_PREFIX) and not run_dir.run_file.exists():
        # RUN_DIR/PROBLEM/attempt_<i>/CHECKPOINT of a run with --attempts
        run_dir = RunDirectory(checkpoint_dir.parent.parent.parent)
        problem_name = f"{checkpoint_dir.parent.parent.name}/{checkpoint_dir.parent.name}"
    if not (is_safe_unit(problem_name) and is_safe_name(checkpoint_name)):
        named = f"{shorten(problem_name)}/{shorten(checkpoint_name)}"
        raise ReplayError(f"{checkpoint_dir}: '{named}' is not a checkpoint of a run (not plain names)")
    try:
        record = run_dir.read_run()
    except RunDirectoryError as exc:
        raise ReplayError(
            f"{checkpoint_dir} is not a checkpoint of a run ({exc}): give RUN_DIR/PROBLEM/CHECKPOINT,"
            " or RUN_DIR/PROBLEM or RUN_DIR to replay every checkpoint of a problem or run"
        ) from None
    problem_record = record.problems.get(problem_name)
    if problem_record is None:
        raise ReplayError(f"{run_dir.run_file}: the run has no problem '{problem_name}'")
    problem = load_problem(problem_record.path, problem_record.format)
    names = [c.name for c in problem.checkpoints]
    if checkpoint_name not in names:
        raise ReplayError(f"problem '{problem_name}' ({problem.path}) has no checkpoint '{checkpoint_name}'")
    paths = run_dir.checkpoint(problem_name, checkpoint_name)
    try:
        recorded = EvaluationRecord.model_validate_json(run_dir.read_bytes(paths.evaluation))
    except BoundaryError as exc:
        raise ReplayError(str(exc)) from None
    except (FileNotFoundError, ValueError):
        raise ReplayError(f"{paths.evaluation}: missing or invalid: the checkpoint did not finish") from None
    return _Target(checkpoint_dir, run_dir, record, problem_name, problem, names.index(checkpoint_name), recorded)


def _choose_runtime(target: _Target, request: RerunRequest) -> RerunRuntime:
    """Where the recorded commands and the tests run (a sandbox, unless the user said otherwise)."""
    what = f"replay of {target.run_dir.root} (the recorded model's commands, then the tests)"  # the same for every checkpoint
    return choose_runtime(target.record.identity.runtime, request, what=what)


def _refuse_host_mcp_servers(target: _Target, runtime: RerunRuntime) -> None:
    """A recorded agent config's stdio MCP servers are commands too: under a container runtime an agent may start
    them on this machine, outside the container (react's client runs in agentrig), so they are refused unless the
    run is trusted. Under the local runtime they run where the agent's commands do (in its sandbox, if any)."""
    servers = target.record.identity.agent.config.get("mcp_servers")
    if runtime.name == "local" or not isinstance(servers, dict):
        return
    stdio = [str(name) for name, server in servers.items() if isinstance(server, dict) and server.get("command")]
    if stdio:
        raise ReplayError(
            f"replay of {target.run_dir.root}: the run's agent config starts stdio MCP servers"
            f" ({', '.join(shorten(name) for name in stdio[:5])}), which may run on this machine outside the"
            f" {runtime.name} container: pass --trust to start them, or --runtime local -c runtime.sandbox=bwrap to replay in bubblewrap"
        )


def _replay_agent(target: _Target, runtime: RerunRuntime) -> tuple[Any, str | None]:
    """The run's agent, its model replaced by the recorded replies (or its own replay); and the image it runs in."""
    from agentrig.agents.interface import Agent, AgentContext, get_agent_config_cls
    from agentrig.run.models import resolve

    identity = target.record.identity
    config = get_agent_config_cls(identity.agent.type).model_validate(identity.agent.config)
    replies = target.replies
    if replies.is_file() and not is_inside(target.run_dir.root, replies):
        raise ReplayError(f"{replies}: a symbolic link leading outside {target.run_dir.root}; not read")
    if replies.is_file():
        model, credential = resolve(f"replay/{replies}")
    elif identity.model is not None:
        model, credential = resolve(identity.model.id)
    else:
        model, credential = None, None  # the agent needs no model
    # the run's agent image (rebuilt from its template if it was removed since; else a no-op)
    image = agent_image_for(identity.agent.config, runtime.name, runtime.image) or runtime.image
    context = AgentContext(model=model, credential=credential, problem_name=split_unit(target.problem_name)[0], image=image)
    agent = Agent.from_config(config, context)
    if not replies.is_file() and identity.model is not None and not agent.supports_replay():
        raise ReplayError(
            f"{replies}: no recorded model replies, and agent '{identity.agent.type}' cannot replay on its own"
        )
    return agent, image


def _replay_in_session(
    target: _Target, agent: Any, image: str | None, keep: Path | None, runtime: RerunRuntime
) -> tuple[Any, EvaluationRecord]:
    """The checkpoint run again in a fresh workspace (the problem's files, or the previous checkpoint's
    snapshot) and evaluated as the run did; ``keep`` gets the trajectory, result and evaluation."""
    from agentrig.atomic import write_model_atomic
    from agentrig.run.sessions import open_session
    from agentrig.scratch import sweep, temporary_directory

    problem = target.problem
    seed = problem.path / problem.workspace if problem.workspace else None
    sweep()  # what killed agentrig processes left (an earlier replay's workspace, processes)
    with temporary_directory("agentrig-replay-") as scratch:
        session = open_session(
            runtime.name, image, seed, target.problem_name.replace("/", "-"), Path(scratch), runtime.options,
            problem=problem,
        )
        try:
            _restore_previous(target, session)
            if keep is not None:
                _keep_trajectory(agent, keep)
            result = _run_agent(target, agent, session)
            evaluation = evaluate_checkpoint(
                session.runtime,
                session.workspace.path,
                problem,
                target.checkpoint,
                report_dir=(keep / REPORT_DIR) if keep is not None else None,
                policy=_recorded_policy(target.recorded),
            )
            if keep is not None:
                write_model_atomic(keep / "inference_result.json", result)
                write_model_atomic(keep / "evaluation.json", evaluation)
        finally:
            session.close()
    return result, evaluation


def _restore_previous(target: _Target, session: Any) -> None:
    """After the first checkpoint, the workspace starts as the previous checkpoint's snapshot."""
    if target.index > 0:
        previous = target.problem.checkpoints[target.index - 1].name
        before = target.run_dir.checkpoint(target.problem_name, previous).snapshot
        if not before.is_dir():
            raise ReplayError(f"{before}: the previous checkpoint's snapshot is missing")
        try:
            snapshot = target.run_dir.read_snapshot(before, f"{target.problem_name}/{previous}")
        except RunDirectoryError as exc:
            raise ReplayError(str(exc)) from None
        session.restore(snapshot)


def _keep_trajectory(agent: Any, out: Path) -> None:
    """The replay's steps appended to ``out/trajectory.jsonl`` as they come."""
    from agentrig.atomic import append_line

    out.mkdir(parents=True, exist_ok=True)
    agent.add_step_listener(lambda step: append_line(out / "trajectory.jsonl", step.model_dump_json()))


def _run_agent(target: _Target, agent: Any, session: Any) -> Any:
    """The agent on the checkpoint through the lifecycle, as the run did (or its own replay of the directory)."""
    problem, checkpoint = target.problem, target.checkpoint
    session.problem = problem
    session.checkpoint = checkpoint
    _prepare(problem, checkpoint, session)  # what the run did before the agent (a Harbor step's workdir/)
    lifecycle.setup_agent(agent, session)
    try:
        if target.replies.is_file() or target.record.identity.model is None:
            return lifecycle.run_checkpoint(agent, checkpoint, problem.prompt_text(checkpoint), session.runtime)
        return agent.run_replay(target.directory)
    finally:
        lifecycle.cleanup_agent(agent)
