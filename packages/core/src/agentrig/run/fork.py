"""Forks: ``agentrig run PROBLEM --from RUN/PROBLEM/CHECKPOINT`` starts at the next checkpoint from a
recorded snapshot.

A fork separates "the agent failed" from "it inherited broken code": the
forked run's workspace is the one another run left at ``CHECKPOINT`` (its
``snapshot/``), and with ``--keep-context`` the agent goes on with that run's
conversation, where the agent can restore one (:attr:`Agent.restores_context
<agentrig.agents.interface.Agent.restores_context>`).

The other run directory is untrusted input (it may come from someone else):
every name in ``--from`` must be a plain name, every file is read through
:mod:`agentrig.boundary` (never through a link leaving that directory), and a
snapshot's manifest is checked path by path before anything is restored.
:func:`resolve_fork` says what is wrong in one line (:class:`ForkError`).

The inherited checkpoints are neither run nor recorded: the forked run's
``results.jsonl`` and its problem's ``checkpoints`` hold only the checkpoints
after the fork point, so its totals and pass rates count only what it ran;
``run.json`` says where it came from (``identity.forked_from``, a
:class:`~agentrig.run.records.ForkRecord`), which ``--resume`` compares.
"""

from __future__ import annotations

from pathlib import Path, PurePath
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from agentrig.boundary import BoundaryError, ascii_number, check_name, is_inside, shorten
from agentrig.run.records import ATTEMPT_PREFIX, ForkRecord, unit_name

if TYPE_CHECKING:
    from agentrig.agents.session import Session
    from agentrig.problem import Checkpoint, Problem
    from agentrig.run.layout import RunDirectory
    from agentrig.run.records import RunRecord
    from agentrig.workspace import Snapshot

class ForkError(ValueError):
    """``--from`` cannot be used: one line naming the value and what to fix."""


class ForkPlan(BaseModel):
    """Where a forked run starts, resolved once by :func:`resolve_fork` and carried by the run's plan."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: What ``run.json`` records.
    record: ForkRecord
    #: The source run directory (absolute): every file of the fork is read inside it.
    root: str
    #: The checkpoint's ``snapshot/`` in the source run (absolute).
    snapshot: str
    #: The checkpoint's ``agent/`` directory, when the conversation is restored (``--keep-context``).
    context_dir: str | None = None
    #: The index (from 0) of the first checkpoint the forked run runs.
    start: int


def parse_from(text: str) -> tuple[Path, str, str]:
    """``RUN/PROBLEM/CHECKPOINT`` (or ``RUN/PROBLEM/attempt_<i>/CHECKPOINT``) as ``(run directory, problem run,
    checkpoint)``; :class:`ForkError` when it is not of that shape or a name is not a plain one (``..``)."""
    where = f"--from {shorten(text)}"
    parts = PurePath(text).parts
    if len(parts) < 3:
        raise ForkError(f"{where}: expected RUN/PROBLEM/CHECKPOINT (a run directory, a problem of it, one of its checkpoints)")
    checkpoint, rest = parts[-1], list(parts[:-1])
    attempt = ascii_number(rest[-1][len(ATTEMPT_PREFIX):]) if rest[-1].startswith(ATTEMPT_PREFIX) and len(rest) >= 3 else None
    if attempt is not None:
        rest.pop()
    problem = rest.pop()
    try:
        check_name(problem, f"{where}: problem")
        check_name(checkpoint, f"{where}: checkpoint")
    except BoundaryError as exc:
        raise ForkError(str(exc)) from None
    return Path(*rest), unit_name(problem, attempt), checkpoint


def _source_checkpoints(record: RunRecord, unit: str, directory: RunDirectory, where: str) -> list[str]:
    """The checkpoint names the source run recorded for ``unit`` (its problem record), in order."""
    problem = record.problems.get(unit)
    if problem is None:
        known = ", ".join(sorted(record.problems)[:10]) or "none"
        raise ForkError(f"{where}: run {directory.root} has no problem '{unit}' (it has: {known})")
    fresher = directory.read_problem(unit)
    names = list((fresher or problem).checkpoints)
    for name in names:
        try:
            check_name(name, f"{where}: {directory.run_file}: checkpoint")
        except BoundaryError as exc:
            raise ForkError(str(exc)) from None
    return names


def _check_same_problem(problem: Problem, unit: str, recorded: list[str], forked_at: str | None, where: str) -> None:
    """The problem run here is the one the source ran: the same name and the same checkpoints (after the source's
    own fork point, when the source is a fork itself); else one line saying exactly what differs."""
    from agentrig.run.records import split_unit

    name = split_unit(unit)[0]
    if name != problem.name:
        raise ForkError(
            f"{where}: the run's problem is '{name}', not '{problem.name}' ({problem.path}): fork a checkpoint of the same problem"
        )
    here = [c.name for c in problem.checkpoints]
    expected = here[here.index(forked_at) + 1:] if forked_at in here else here
    if recorded == expected:
        return
    only_there = [c for c in recorded if c not in expected]
    only_here = [c for c in expected if c not in recorded]
    if only_there or only_here:
        detail = "; ".join(
            part for part in (
                f"only in the run: {', '.join(only_there)}" if only_there else "",
                f"only in {problem.path}: {', '.join(only_here)}" if only_here else "",
            ) if part
        )
    else:
        detail = f"in another order (the run: {', '.join(recorded)}; {problem.path}: {', '.join(expected)})"
    raise ForkError(f"{where}: problem '{name}' has other checkpoints than the run recorded: {detail}")


def check_snapshot(root: Path, snapshot: Path, where: str) -> Snapshot:
    """The snapshot at ``snapshot`` inside the run directory ``root``, checked before anything is restored
    (:meth:`RunDirectory.read_snapshot <agentrig.run.layout.RunDirectory.read_snapshot>`, the one check of every
    restore read back); :class:`ForkError` naming what is wrong."""
    from agentrig.run.layout import RunDirectory, RunDirectoryError

    try:
        return RunDirectory(root).read_snapshot(snapshot, where)
    except RunDirectoryError as exc:
        raise ForkError(str(exc)) from None


def resolve_fork(text: str, problem: Problem, *, keep_context: bool = False, agent: str | None = None) -> ForkPlan:
    """``--from text`` for ``problem``, checked: the run, its problem (the same name and checkpoints), the
    checkpoint (finished, with a snapshot, not the last), and with ``keep_context`` its agent's directory,
    recorded by the same agent type as ``agent``. :class:`ForkError` (one line) otherwise."""
    from agentrig.run.layout import RunDirectory, RunDirectoryError

    where = f"--from {shorten(text)}"
    run, unit, checkpoint = parse_from(text)
    if not run.is_dir():
        raise ForkError(f"{where}: {run} is not a directory; name a run directory (e.g. runs/latest/PROBLEM/CHECKPOINT)")
    directory = RunDirectory(run.resolve())
    if not directory.run_file.exists():
        raise ForkError(f"{where}: {run} is not a run directory (no {directory.run_file.name}): expected RUN/PROBLEM/CHECKPOINT")
    try:
        record = directory.read_run()
    except RunDirectoryError as exc:
        raise ForkError(f"{where}: {exc}") from None
    recorded = _source_checkpoints(record, unit, directory, where)
    forked_at = record.identity.forked_from.checkpoint if record.identity.forked_from else None
    _check_same_problem(problem, unit, recorded, forked_at, where)
    if checkpoint not in recorded:
        raise ForkError(f"{where}: problem '{unit}' of the run has no checkpoint '{checkpoint}' (it has: {', '.join(recorded)})")
    names = [c.name for c in problem.checkpoints]
    start = names.index(checkpoint) + 1
    if start >= len(names):
        raise ForkError(f"{where}: '{checkpoint}' is the problem's last checkpoint: there is nothing to run after it")
    line = next((x for x in directory.results(unit) if x.checkpoint == checkpoint), None)
    if line is None or line.status == "skipped":
        state = "was skipped" if line is not None else "has not finished"
        raise ForkError(f"{where}: checkpoint '{checkpoint}' {state} in that run: fork a finished checkpoint")
    paths = directory.checkpoint(unit, checkpoint)
    check_snapshot(directory.root, paths.snapshot, where)
    context_dir = None
    if keep_context and agent is not None and record.identity.agent.type != agent:
        raise ForkError(
            f"{where}: --keep-context: that run's agent is '{shorten(record.identity.agent.type)}', not '{agent}': "
            "only the agent type that recorded a conversation can take it up (drop --keep-context to fork with a fresh one)"
        )
    if keep_context:
        if not paths.agent.is_dir() or not is_inside(directory.root, paths.agent):
            raise ForkError(f"{where}: --keep-context: the checkpoint has no agent/ directory to take the conversation from")
        context_dir = str(paths.agent)
    fork = ForkRecord(run=str(directory.root), run_id=record.run_id, problem=unit, checkpoint=checkpoint, keep_context=keep_context)
    return ForkPlan(record=fork, root=str(directory.root), snapshot=str(paths.snapshot), context_dir=context_dir, start=start)


def checkpoints_run(problem: Problem, fork: ForkPlan | None) -> list[Checkpoint]:
    """The checkpoints a run runs of ``problem``: all of them, or those after the fork point."""
    return list(problem.checkpoints[fork.start:] if fork is not None else problem.checkpoints)


def restore_fork(session: Session, fork: ForkPlan) -> Snapshot:
    """Make ``session``'s workspace the source checkpoint's snapshot (checked again: the worker may run elsewhere
    and later than the check); :class:`ForkError` when it cannot be restored."""
    from agentrig.workspace import WorkspaceError

    snapshot = check_snapshot(Path(fork.root), Path(fork.snapshot), f"--from {fork.record.label}")
    try:
        return session.restore(snapshot)
    except WorkspaceError as exc:
        raise ForkError(f"--from {fork.record.label}: {exc}") from None


__all__ = ["ForkError", "ForkPlan", "check_snapshot", "checkpoints_run", "parse_from", "resolve_fork", "restore_fork"]
