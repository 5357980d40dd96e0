"""``agentrig evaluate``: the recorded snapshots of a run evaluated again, without the agent.

After a test is fixed, or under another pass policy, each finished
checkpoint's ``snapshot/`` is restored into a fresh workspace of the run's
runtime and evaluated through its problem's format
(:func:`~agentrig.run.evaluation.evaluate_checkpoint`), with the problem's
tests as they are now. The new verdict is written beside the old ones as
``<checkpoint>/evaluations/<n>.json`` (1, 2, ...; the test runner's raw
report in ``evaluations/<n>/``); ``evaluation.json``, ``results.jsonl`` and
``run.json`` (the run as it happened) are never rewritten.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agentrig.boundary import BoundaryError, ascii_number
from agentrig.run.layout import CheckpointPaths, RunDirectory, RunDirectoryError
from agentrig.run.records import CheckpointResultLine, EvaluationRecord, RunRecord, split_unit
from agentrig.run.rerun_runtime import RerunRequest, RerunRuntime, RerunRuntimeError, choose_runtime
from agentrig.scratch import sweep, temporary_directory


class EvaluateError(ValueError):
    """The run or the selection cannot be re-evaluated; one line naming what to fix."""


class Reevaluation(BaseModel):
    """One checkpoint evaluated again: where, the verdict before and now, the new file."""

    unit: str
    checkpoint: str
    before: str
    before_file: str
    after: str
    file: str
    evaluation: EvaluationRecord

    @property
    def changed(self) -> bool:
        """Whether the verdict differs from the evaluation before this one."""
        return self.before != self.after


def verdict(evaluation: EvaluationRecord) -> str:
    """``passed``, ``failed``, ``error`` (the evaluation could not run) or ``not_evaluated`` (no test)."""
    if evaluation.error is not None or evaluation.infrastructure_failure:
        return "error"
    if evaluation.passed is None:
        return "not_evaluated"
    return "passed" if evaluation.passed else "failed"


def evaluations(paths: CheckpointPaths) -> list[Path]:
    """A checkpoint's evaluations, oldest first: ``evaluation.json``, then ``evaluations/1.json``, 2, ..."""
    found = [paths.evaluation] if paths.evaluation.is_file() else []
    if paths.evaluations.is_dir():
        numbered = [(n, p) for p in paths.evaluations.glob("*.json") if (n := ascii_number(p.stem)) is not None]
        found += [p for _, p in sorted(numbered)]
    return found


def _next_file(paths: CheckpointPaths) -> Path:
    numbers = [ascii_number(p.stem) or 0 for p in evaluations(paths) if p.parent == paths.evaluations]
    return paths.evaluations / f"{max(numbers, default=0) + 1}.json"


def select(record: RunRecord, lines: list[CheckpointResultLine], target: str | None, run_file: Path) -> list[CheckpointResultLine]:
    """The finished checkpoints ``target`` names: ``PROBLEM``, ``PROBLEM/CHECKPOINT``,
    ``PROBLEM/attempt_<i>[/CHECKPOINT]`` (runs with ``--attempts``), or every one."""
    units = list(record.problems)
    chosen_units, checkpoint = units, None
    if target:
        parts = target.strip("/").split("/")
        problems = sorted({split_unit(u)[0] for u in units})
        if parts[0] not in problems:
            raise EvaluateError(f"{run_file}: the run has no problem '{parts[0]}' (problems: {', '.join(problems)})")
        rest = parts[1:]
        chosen_units = [u for u in units if split_unit(u)[0] == parts[0]]
        if rest and rest[0].startswith("attempt_") and f"{parts[0]}/{rest[0]}" in units:
            chosen_units, rest = [f"{parts[0]}/{rest[0]}"], rest[1:]
        if len(rest) > 1:
            raise EvaluateError(f"{target}: expected PROBLEM, PROBLEM/CHECKPOINT or PROBLEM/attempt_<i>/CHECKPOINT")
        if rest:
            checkpoint = rest[0]
            known = record.problems[chosen_units[0]].checkpoints
            if checkpoint not in known:
                raise EvaluateError(
                    f"problem '{parts[0]}' has no checkpoint '{checkpoint}' (checkpoints: {', '.join(known)})"
                )
    order = {u: i for i, u in enumerate(units)}
    chosen = [
        line for line in lines
        if line.unit in chosen_units and (checkpoint is None or line.checkpoint == checkpoint) and line.status != "skipped"
    ]
    chosen.sort(key=lambda line: (order.get(line.unit, len(order)), line.index))
    if not chosen:
        raise EvaluateError(f"{target or run_file.parent}: no finished checkpoint to evaluate")
    return chosen


def _policy(name: str | None, recorded: EvaluationRecord | None) -> Any:
    from agentrig.evaluation.policy import PassPolicy, PolicyError

    if name is not None:
        return PassPolicy.parse(name)
    try:  # the policy the run decided with, so only the tests' change shows
        return PassPolicy.parse(recorded.policy) if recorded is not None and recorded.policy else None
    except PolicyError:
        return None


def reevaluate(
    run_root: Path,
    target: str | None = None,
    policy: str | None = None,
    *,
    timeout: float | None = None,
    session_timeout: float | None = None,
    on_result: Callable[[Reevaluation], None] | None = None,
    on_notice: Callable[[str], None] | None = None,
    request: RerunRequest | None = None,
    on_runtime: Callable[[RerunRuntime], None] | None = None,
) -> list[Reevaluation]:
    """Evaluate the selected finished checkpoints of the run in ``run_root`` again; returns the outcomes.

    Raises :class:`EvaluateError` for a directory that holds no run, an unknown
    problem or checkpoint, or a bad ``policy``; holds the run directory's lock
    meanwhile (a run writing it is refused). ``on_notice`` hears of each ``results.jsonl`` line
    left out (not a record, or naming a problem or checkpoint that is not a plain name).

    The snapshots' code runs where ``request`` says (:func:`~agentrig.run.rerun_runtime.choose_runtime`:
    a sandbox unless the user trusts the run or names an unsandboxed runtime; ``EvaluateError`` when there
    is none); ``on_runtime`` hears of the choice before anything runs.
    """
    from agentrig.evaluation.policy import PolicyError
    from agentrig.run.evaluation import DEFAULT_TEST_TIMEOUT

    sweep()  # what killed agentrig processes left (a workspace copy of an evaluation, processes)
    directory = RunDirectory(Path(run_root))
    if not directory.root.is_dir():
        raise EvaluateError(f"{directory.root}: no such directory; pass a run directory (e.g. runs/latest)")
    if not directory.run_file.is_file():
        raise EvaluateError(f"{directory.root} is not a run directory (run.json missing); pass the directory `agentrig run` printed")
    if policy is not None:
        try:
            policy = str(_policy(policy, None))
        except PolicyError as exc:
            raise EvaluateError(f"--policy {policy}: {exc}") from None
    try:
        record = directory.read_run()
    except RunDirectoryError as exc:
        raise EvaluateError(str(exc)) from None
    unreadable: list[str] = []
    try:
        lines = directory.results_read_back(unreadable, on_notice)
    except RunDirectoryError as exc:
        raise EvaluateError(str(exc)) from None
    try:
        chosen = select(record, lines, target, directory.run_file)
    except EvaluateError as exc:
        if unreadable:
            where = f"{directory.results_file}: {len(unreadable)} unreadable lines, the first: {unreadable[0]}"
            raise EvaluateError(f"{exc} ({where})") from None
        raise
    identity = record.identity
    try:
        runtime = choose_runtime(
            identity.runtime, request or RerunRequest(), recorded_image=identity.runtime.agent_image or identity.runtime.image,
            what=f"evaluate {directory.root}: the recorded snapshots' code, through the tests",
        )
    except RerunRuntimeError as exc:
        raise EvaluateError(str(exc)) from None
    if on_runtime is not None:
        on_runtime(runtime)
    try:
        lock = directory.lock()
    except RunDirectoryError as exc:
        raise EvaluateError(str(exc)) from None
    try:
        outcomes = []
        for line in chosen:
            outcome = _reevaluate_one(directory, record, line, policy, timeout or DEFAULT_TEST_TIMEOUT, session_timeout, runtime)
            if on_result is not None:
                on_result(outcome)
            outcomes.append(outcome)
        return outcomes
    finally:
        directory.unlock(lock)


def _read_evaluation(directory: RunDirectory, path: Path) -> EvaluationRecord:
    """The evaluation record in ``path`` (inside the run directory, never through a link leaving it);
    :class:`EvaluateError` naming the file when it cannot be read."""
    try:
        return EvaluationRecord.model_validate_json(directory.read_bytes(path))
    except BoundaryError as exc:
        raise EvaluateError(str(exc)) from None
    except OSError as exc:
        raise EvaluateError(f"{path}: {exc.strerror or exc}") from None
    except ValueError as exc:  # pydantic's ValidationError: not JSON, nested too deeply, or not this record
        raise EvaluateError(f"{path}: not an evaluation record ({_first_error(exc)})") from None


def _first_error(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return f"{where}: {first.get('msg')}" if where else str(first.get("msg"))
    return str(exc)


def _reevaluate_one(
    directory: RunDirectory,
    record: RunRecord,
    line: CheckpointResultLine,
    policy: str | None,
    timeout: float,
    session_timeout: float | None,
    runtime: RerunRuntime,
) -> Reevaluation:
    from agentrig.run.evaluation import evaluate_checkpoint
    from agentrig.run.problems import load_problem
    from agentrig.run.sessions import open_session

    problem_record = record.problems.get(line.unit)
    if problem_record is None:
        raise EvaluateError(
            f"{directory.results_file}: checkpoint '{line.unit}/{line.checkpoint}' of a problem {directory.run_file} does not list"
        )
    try:
        problem = load_problem(problem_record.path, problem_record.format)
    except Exception as exc:  # the problem moved or no longer loads: say which
        raise EvaluateError(f"problem '{line.problem}' ({problem_record.path}): {exc}") from None
    checkpoint = next((c for c in problem.checkpoints if c.name == line.checkpoint), None)
    if checkpoint is None:
        raise EvaluateError(f"problem '{line.problem}' ({problem.path}) no longer has checkpoint '{line.checkpoint}'")
    paths = directory.checkpoint(line.unit, line.checkpoint)
    if not paths.snapshot.is_dir():
        raise EvaluateError(f"{paths.snapshot}: the checkpoint's snapshot is missing; it cannot be evaluated again")
    try:
        snapshot = directory.read_snapshot(paths.snapshot, f"{line.unit}/{line.checkpoint}")
    except RunDirectoryError as exc:
        raise EvaluateError(str(exc)) from None
    history = evaluations(paths)
    before = _read_evaluation(directory, history[-1]) if history else None
    seed = problem.path / problem.workspace if problem.workspace else None
    target = _next_file(paths)
    with temporary_directory("agentrig-evaluate-") as scratch:  # swept by the next agentrig if we are killed
        session = open_session(
            runtime.name, runtime.image, seed, line.unit.replace("/", "-"), Path(scratch), runtime.options,
            problem=problem,
        )
        try:
            session.restore(snapshot)
            session.problem, session.checkpoint = problem, checkpoint
            evaluation = evaluate_checkpoint(
                session.runtime,
                session.workspace.path,
                problem,
                checkpoint,
                report_dir=directory.guard(target.with_suffix("")),
                timeout=timeout,
                policy=_policy(policy, before),
                session_timeout=session_timeout,
            )
        finally:
            session.close()
    directory.make_dir(target.parent)
    directory.write_model(target, evaluation)
    return Reevaluation(
        unit=line.unit,
        checkpoint=line.checkpoint,
        before=verdict(before) if before is not None else line.status,
        before_file=str(history[-1].relative_to(paths.root)) if history else "results.jsonl",
        after=verdict(evaluation),
        file=str(target.relative_to(directory.root)),
        evaluation=evaluation,
    )


__all__ = ["EvaluateError", "Reevaluation", "evaluations", "reevaluate", "select", "verdict"]
