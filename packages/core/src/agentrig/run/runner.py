"""The dispatcher of ``agentrig run``: checks every input, owns ``run.json``, hands problems to an executor.

Everything that can be wrong with the inputs (problems, agent, config,
model, output directory) is found here, before any agent starts.
"""

from __future__ import annotations

import platform
import sys
import uuid
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentrig.boundary import BoundaryError, check_name
from agentrig.executors.interface import Executor
from agentrig.run.fork import checkpoints_run
from agentrig.run.job import ProblemJob
from agentrig.run.layout import RunDirectory, RunDirectoryError, point_latest
from agentrig.run.plan import RunPlan, VerifierOptions
from agentrig.run.progress import EventSink
from agentrig.run.recorder import RunRecorder
from agentrig.run.records import (
    AgentRecord,
    CacheRecord,
    CheckpointResultLine,
    ModelRecord,
    ProblemRecord,
    RunIdentity,
    RunRecord,
    RuntimeRecord,
    Totals,
    check_unit,
    unit_name,
    utcnow,
)


class RunRequest(BaseModel):
    """What ``agentrig run`` was asked to do: the run's plan, and which problems, where, how many at once."""

    model_config = ConfigDict(extra="forbid")

    plan: RunPlan
    problems: list[Path]
    format: str | None = None
    include: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)
    output: Path | None = None
    resume: bool = False
    retry_errors: bool = False
    #: ``--resume`` without ``--cache``: use the model-call cache ``run.json`` records (``--no-cache``: ``False``).
    reuse_cache: bool = True
    jobs: int = Field(default=1, ge=1)
    executor: str = "local"
    executor_options: dict[str, Any] = Field(default_factory=dict)


def default_output(now: datetime | None = None) -> Path:
    """``runs/<timestamp>`` in the current directory."""
    now = now or datetime.now()
    return Path("runs") / now.strftime("%Y%m%d-%H%M%S")


def package_versions(agent_distribution: str | None) -> dict[str, str]:
    """Versions worth recording: agentrig, the agent's distribution, Python."""
    from importlib import metadata

    from agentrig import __version__

    versions = {"agentrig": __version__, "python": platform.python_version()}
    if agent_distribution:
        try:
            versions[agent_distribution] = metadata.version(agent_distribution)
        except metadata.PackageNotFoundError:
            pass
    return versions


class PreparedRun(BaseModel):
    """A run whose inputs are checked and whose directory is claimed."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    request: RunRequest
    directory: Path
    record: RunRecord
    jobs: list[ProblemJob]
    #: A resumed run with nothing left to do: :func:`execute` leaves its record untouched.
    up_to_date: bool = False


def _announce(message: str) -> None:
    print(f"agentrig: {message}", file=sys.stderr, flush=True)


def prepare(
    request: RunRequest,
    identity: RunIdentity,
    agent_distribution: str | None,
    notify: Callable[[str], None] | None = _announce,
) -> tuple[PreparedRun, int]:
    """Check the output directory, write the initial ``run.json``; returns the run and the lock fd.

    With the ``docker`` runtime and an agent config carrying a
    ``docker_template``, the agent's image is built here, once for the whole
    run and before the output directory is claimed (a failed build leaves
    nothing behind: the same command can be retried); every problem runs in
    it. ``notify`` hears about a build that is not a no-op. Raises
    :class:`~agentrig.run.agent_image.AgentImageError` when the image cannot be had.
    """
    from agentrig.run.agent_image import agent_image_for
    from agentrig.run.problems import load_problems

    plan = request.plan
    problems = load_problems(list(request.problems), request.format, request.include, request.exclude)
    _check_names(problems, plan.attempts)
    on_build = None
    if notify is not None:
        on_build = lambda tag: notify(f"building agent image {tag} from {plan.image} (later runs reuse it)")  # noqa: E731  # None without notify
    agent_image = agent_image_for(plan.agent_config, plan.runtime, plan.image, on_build=on_build, force=plan.rebuild)
    if agent_image is not None:
        request = request.model_copy(update={"plan": plan.model_copy(update={"agent_image": agent_image})})
        identity = identity.model_copy(update={"runtime": identity.runtime.model_copy(update={"agent_image": agent_image})})
    output = request.output or default_output()
    directory = RunDirectory(output)
    previous, lock = directory.open(identity, resume=request.resume)
    try:
        _sweep_leftovers(previous)
        request = _resumed_cache(request, previous, directory.root, notify)
        return _prepare_claimed(request, identity, agent_distribution, problems, agent_image, directory, previous), lock
    except BaseException:
        directory.unlock(lock)
        raise


def _resumed_cache(
    request: RunRequest, previous: RunRecord | None, root: Path, notify: Callable[[str], None] | None
) -> RunRequest:
    """A resumed run given no ``--cache`` goes on with the model-call cache its ``run.json`` records (unless
    ``--no-cache``), said in one line; a recorded directory that cannot be one is a :class:`RunDirectoryError`."""
    recorded = previous.cache if previous is not None else None
    if recorded is None or request.plan.model_cache is not None or not request.reuse_cache:
        return request
    try:
        cache = recorded.to_cache()
    except ValueError as exc:
        raise RunDirectoryError(f"{root / 'run.json'}: {exc}; give --cache DIR or --no-cache") from None
    if notify is not None:
        ttl = f", entries good for {cache.ttl:g} s" if cache.ttl is not None else ""
        notify(f"resuming with the run's model-call cache {cache.directory} ({cache.policy}{ttl}); --no-cache turns it off")
    return request.model_copy(update={"plan": request.plan.model_copy(update={"model_cache": cache})})


def _sweep_leftovers(previous: RunRecord | None) -> None:
    """Before anything runs: kill what an earlier start of this run left running (its commands carry the
    run's id; the lock says that start is gone), and what other agentrig processes gone from this host left
    (processes, temporary directories; for a run on the docker runtime, containers, compose projects and
    networks too, even when no checkpoint is left to start a runtime that would sweep them)."""
    from agentrig.scratch import kill_run_processes, sweep

    if previous is not None:
        kill_run_processes(previous.run_id)
        if previous.identity.runtime.name == "docker":
            from agentrig.runtime.docker import sweep_stale

            sweep_stale()
    sweep()


def _finished_lines(directory: RunDirectory) -> dict[str, list[CheckpointResultLine]]:
    """The lines ``results.jsonl`` holds, by problem run (unit)."""
    lines: dict[str, list[CheckpointResultLine]] = {}
    for line in directory.results():
        lines.setdefault(line.unit, []).append(line)
    return lines


def _finished_names(directory: RunDirectory) -> dict[str, set[str]]:
    """The checkpoints ``results.jsonl`` holds, by problem run (unit)."""
    return {unit: {line.checkpoint for line in lines} for unit, lines in _finished_lines(directory).items()}


def _units(problems: list[Any], attempts: int) -> list[tuple[Any, int | None, str]]:
    """The problem runs: ``(problem, attempt, unit name)``; with several attempts, attempt 1 of
    every problem first (a run stopped early still has pass@1 over every problem)."""
    if attempts <= 1:
        return [(problem, None, problem.name) for problem in problems]
    return [
        (problem, attempt, unit_name(problem.name, attempt))
        for attempt in range(1, attempts + 1)
        for problem in problems
    ]


def _check_names(problems: list[Any], attempts: int) -> None:
    """Behind the formats' own checks at load time: every problem run's and checkpoint's name is one
    plain path component (:class:`~agentrig.run.layout.RunDirectoryError` naming the problem otherwise),
    checked before the output directory is made."""
    for problem, _, unit in _units(problems, attempts):
        try:
            check_unit(unit, "problem name")
            for checkpoint in problem.checkpoints:
                check_name(checkpoint.name, "checkpoint name")
        except BoundaryError as exc:
            raise RunDirectoryError(f"{problem.path}: {exc}") from None


def _prepare_claimed(
    request: RunRequest,
    identity: RunIdentity,
    agent_distribution: str | None,
    problems: list[Any],
    agent_image: str | None,
    directory: RunDirectory,
    previous: RunRecord | None,
) -> PreparedRun:
    plan = request.plan
    units = _units(problems, plan.attempts)
    names = {p.name: [c.name for c in checkpoints_run(p, plan.fork)] for p in problems}  # a fork's: after its fork point
    if previous is not None:
        if request.retry_errors:
            from agentrig.run.retries import keep_retracted

            directory.retract_errors(
                [(unit, names[p.name]) for p, _, unit in units],
                keep=lambda lines: keep_retracted(directory, lines),
            )
        finished = _finished_names(directory)
        if previous.status == "completed" and all(set(names[p.name]) <= finished.get(unit, set()) for p, _, unit in units):
            # Nothing left to do: the finished record is kept exactly as it is.
            return PreparedRun(request=request, directory=directory.root, record=previous, jobs=[], up_to_date=True)
        record = previous
        record.resumed.append(utcnow())
        record.status = "running"
        record.ended = None
        record.jobs = request.jobs
        record.executor = request.executor
        record.identity.runtime.agent_image = agent_image
        record.cache = CacheRecord.of(plan.model_cache)  # the latest start's, as ``executor``
    else:
        record = RunRecord(
            run_id=uuid.uuid4().hex,
            identity=identity,
            versions=package_versions(agent_distribution),
            jobs=request.jobs,
            executor=request.executor,
            cache=CacheRecord.of(plan.model_cache),
        )
    finished_lines = _finished_lines(directory) if previous is not None else {}
    # one token per invocation: each problem image is built once by it, however many attempts share it
    rebuild = uuid.uuid4().hex if plan.rebuild else None
    finished = {unit: {line.checkpoint for line in lines} for unit, lines in finished_lines.items()}
    for problem, _, unit in units:
        existing = record.problems.get(unit)
        complete = set(names[problem.name]) <= finished.get(unit, set())
        if existing is None or existing.status != "completed" or not complete:
            record.problems[unit] = ProblemRecord(
                name=unit,
                path=str(problem.path),
                format=problem.format,
                checkpoints=names[problem.name],
                status="pending",
                totals=existing.totals if existing else Totals(),
                finished=existing.finished if existing else 0,
                started=existing.started if existing else None,
            )
    directory.write_run(record)
    if request.output is None:
        point_latest(directory.root)
    jobs = [
        ProblemJob(
            plan=plan,
            problem_path=str(problem.path),
            problem_name=unit,
            attempt=attempt,
            problem_format=problem.format,
            output_dir=str(directory.root.resolve()),
            finished=finished_lines.get(unit, []),
            started=record.problems[unit].started,
            run_id=record.run_id,
            rebuild=rebuild,
        )
        for problem, attempt, unit in units
    ]
    return PreparedRun(request=request, directory=directory.root, record=record, jobs=jobs)


#: Shortest time between two rewrites of ``run.json`` while problems run concurrently.
RUN_FILE_INTERVAL = 0.5


def execute(prepared: PreparedRun, emit: EventSink, tick: Any = None, executor: Executor | None = None) -> RunRecord:
    """Run every job; ``run.json`` follows problems as they start and finish, and is written at the end.

    The dispatcher alone writes ``results.jsonl``, ``run.json`` and every
    ``problem.json``: a checkpoint is recorded when its ``checkpoint_end``
    event (carrying its result line) reaches the executor's ``emit``, at most
    once whatever the executor delivers twice; an executor that ships
    artifacts hands a checkpoint's over with that event
    (:class:`~agentrig.executors.interface.EventReceiver`) and they are
    written first. ``KeyboardInterrupt`` (Ctrl-C, SIGTERM) is re-raised after
    the record says ``interrupted``.
    """
    if prepared.up_to_date:
        return prepared.record
    if executor is not None:  # callers that pass one have opened it (before the run directory existed)
        return _dispatch(prepared, emit, tick, executor)
    from agentrig.executors.resolve import create_executor

    request = prepared.request
    executor = create_executor(request.executor, request.executor_options, jobs=request.jobs)
    executor.open()
    try:
        return _dispatch(prepared, emit, tick, executor)
    finally:
        executor.close()


def _dispatch(prepared: PreparedRun, emit: EventSink, tick: Any, executor: Executor) -> RunRecord:
    """The unfinished jobs to ``executor``, its events to a :class:`~agentrig.run.recorder.RunRecorder`."""
    interval = RUN_FILE_INTERVAL if executor.tick_interval is not None else 0.0
    recorder = RunRecorder(RunDirectory(prepared.directory), prepared.record, emit, interval, tick)
    todo = recorder.still_to_run(prepared.jobs)
    try:
        if todo:
            executor.run(todo, recorder.receive, recorder.done, recorder.tick)
    except KeyboardInterrupt:
        recorder.interrupted()
        raise
    return recorder.finished()


__all__ = [
    "AgentRecord", "ModelRecord", "PreparedRun", "RunPlan", "RunRequest", "RuntimeRecord", "VerifierOptions",
    "default_output", "execute", "package_versions", "prepare",
]
