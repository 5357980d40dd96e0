"""A run directory read back, tolerant of runs in progress, killed, and of other versions.

This module is the one place that knows where a checkpoint's files live in a
run directory (through :class:`~agentrig.run.layout.RunDirectory`); everything
that shows or exports a run goes through :func:`open_run` and
:func:`load_checkpoint`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentrig.agent import CheckpointInferenceResult
from agentrig.report.tolerant import RecordError, load_record_json, prune, read_record
from agentrig.run.atomic import read_jsonl_lines
from agentrig.run.layout import LOCK_FILE, RESULTS_FILE, RUN_FILE, CheckpointPaths, RunDirectory
from agentrig.run.records import CheckpointResultLine, DiffRecord, EvaluationRecord, PassAtKSummary, RunRecord, split_unit
from agentrig.trajectory import TrajectoryStep, parse_step

CheckpointState = Literal["finished", "running", "interrupted", "pending"]
"""``finished``: in ``results.jsonl``; ``running``: started by a live run; ``interrupted``:
started by a run that is gone (killed); ``pending``: not started."""


class NotARunError(RecordError):
    """The directory holds no run; the message says what was expected."""


@dataclass
class CheckpointEntry:
    """One checkpoint of a run: its result line once finished. ``index`` is its position in the
    problem, counted from 1 (``results.jsonl`` counts from 0)."""

    problem: str
    checkpoint: str
    index: int
    state: CheckpointState
    result: CheckpointResultLine | None
    paths: CheckpointPaths
    cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """What readers derived from this entry (its summary row), computed once."""

    @property
    def key(self) -> str:
        """``problem/checkpoint``."""
        return f"{self.problem}/{self.checkpoint}"

    @property
    def status(self) -> str:
        """The verdict once finished (``passed``, ``failed``, ...), else the state."""
        return self.result.status if self.result is not None else self.state


@dataclass
class ProblemEntry:
    """One problem run with its checkpoints in order: a problem, or one attempt of it
    (``name`` is then ``<problem>/attempt_<i>``)."""

    name: str
    status: str
    error: str | None
    checkpoints: list[CheckpointEntry] = field(default_factory=list)

    @property
    def problem(self) -> str:
        """The problem's own name (without ``/attempt_<i>``)."""
        return split_unit(self.name)[0]

    @property
    def attempt(self) -> int | None:
        """The attempt's number in a run with ``--attempts``; ``None`` otherwise."""
        return split_unit(self.name)[1]


@dataclass
class LoadedRun:
    """A run directory as read now: its record (when readable), problems, checkpoints, notices.

    ``notices`` are one-line statements about what is missing or odd (a run
    killed mid-checkpoint, fields of another agentrig version); readers show
    them instead of failing.
    """

    root: Path
    record: RunRecord | None
    live: bool
    status: str
    problems: list[ProblemEntry]
    notices: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The run's id (the directory's name when ``run.json`` is unreadable)."""
        return self.record.run_id if self.record is not None else self.root.resolve().name

    @property
    def agent(self) -> str:
        """The agent type, or ``?``."""
        return self.record.identity.agent.type if self.record is not None else "?"

    @property
    def model(self) -> str:
        """The model as ``--model`` named it, ``none`` for an agent that needs none, or ``?``."""
        if self.record is None:
            return "?"
        return self.record.identity.model.id if self.record.identity.model is not None else "none"

    def entries(self) -> list[CheckpointEntry]:
        """Every checkpoint, problem by problem, in order."""
        return [entry for problem in self.problems for entry in problem.checkpoints]

    def results(self) -> list[CheckpointResultLine]:
        """The result lines of the finished checkpoints."""
        return [e.result for e in self.entries() if e.result is not None]

    def find(self, problem: str, checkpoint: str | None = None) -> list[CheckpointEntry]:
        """The checkpoints of ``problem`` (only ``checkpoint`` if given); empty when unknown.

        ``problem`` is a problem run's name (``<problem>/attempt_<i>`` for one attempt), or a
        problem's, which finds the checkpoints of every attempt."""
        return [
            e for e in self.entries()
            if (e.problem == problem or split_unit(e.problem)[0] == problem)
            and (checkpoint is None or e.checkpoint == checkpoint)
        ]

    @property
    def attempts(self) -> int:
        """``--attempts K`` of the run (1 without attempts)."""
        if self.record is not None and self.record.identity.settings.attempts:
            return self.record.identity.settings.attempts
        return max((p.attempt or 1 for p in self.problems), default=1)

    def pass_at_k(self, problem: str | None = None) -> PassAtKSummary | None:
        """pass@1 and pass@k of a run with attempts, from its results as they are now (of one
        problem if given: the run's figures are then that problem's); ``None`` for one attempt."""
        if self.attempts <= 1:
            return None
        from agentrig.run.pass_at_k import summarize

        checkpoints: dict[str, list[str]] = {}
        for entry in self.problems:
            if problem is None or entry.problem == problem:
                checkpoints.setdefault(entry.problem, [e.checkpoint for e in entry.checkpoints])
        return summarize(self.results(), checkpoints, self.attempts)


@dataclass
class UnknownStep:
    """A trajectory line this version cannot read (a newer step kind, say), kept as it was."""

    kind: str
    data: dict[str, Any]


@dataclass
class CheckpointDetail:
    """Everything recorded for one checkpoint; ``None`` for files not (yet) written."""

    entry: CheckpointEntry
    prompt: str | None
    inference: CheckpointInferenceResult | None
    evaluation: EvaluationRecord | None
    diff: DiffRecord | None
    steps: list[TrajectoryStep | UnknownStep]
    notices: list[str] = field(default_factory=list)


def run_process_alive(root: Path) -> bool:
    """Whether the process that holds ``root``'s lock file (a run writing it) still exists."""
    try:
        text = (root / LOCK_FILE).read_text().strip()
        pid = int(text.split()[0])
    except (OSError, ValueError, IndexError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_results(directory: RunDirectory, notices: list[str]) -> dict[tuple[str, str], CheckpointResultLine]:
    """``results.jsonl`` by ``(problem, checkpoint)``, the last line winning; unreadable lines noted.

    ``problem`` is the problem run's name: ``<problem>/attempt_<i>`` in a run with ``--attempts``."""
    out: dict[tuple[str, str], CheckpointResultLine] = {}
    dropped: list[str] = []
    bad = 0
    for number, text in enumerate(read_jsonl_lines(directory.results_file), 1):
        try:
            line = load_record_json(CheckpointResultLine, text, f"{RESULTS_FILE} line {number}", dropped)
        except RecordError as exc:
            bad += 1
            if bad == 1:
                notices.append(f"{exc}; such lines are left out")
            continue
        out.pop((line.unit, line.checkpoint), None)
        out[(line.unit, line.checkpoint)] = line
    if dropped:
        notices.append(f"{RESULTS_FILE}: fields unknown to this agentrig ignored: {', '.join(sorted(set(dropped)))}")
    return out


def _checkpoint_dirs(problem_dir: Path) -> list[str]:
    """Checkpoint directories found on disk under a problem (for runs whose run.json is unreadable)."""
    try:
        return sorted(p.name for p in problem_dir.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return []


def open_run(path: Path) -> LoadedRun:
    """Read the run in ``path``; :class:`NotARunError` when it is not a run directory."""
    root = Path(path)
    if not root.is_dir():
        raise NotARunError(f"{root}: no such directory; pass a run directory (e.g. runs/latest)")
    directory = RunDirectory(root)
    if not directory.run_file.exists() and not directory.results_file.exists():
        raise NotARunError(
            f"{root} is not a run directory ({RUN_FILE} and {RESULTS_FILE} missing); pass the directory"
            " `agentrig run` printed, e.g. runs/latest"
        )
    notices: list[str] = []
    record: RunRecord | None = None
    if directory.run_file.exists():
        dropped: list[str] = []
        try:
            record = read_record(RunRecord, directory.run_file, dropped)
        except RecordError as exc:
            notices.append(f"{exc}; showing what {RESULTS_FILE} holds")
        if dropped:
            notices.append(f"{RUN_FILE}: fields unknown to this agentrig ignored: {', '.join(sorted(set(dropped)))}")
    else:
        notices.append(f"{RUN_FILE} missing; showing what {RESULTS_FILE} holds")
    results = read_results(directory, notices)
    live = record is not None and record.status == "running" and run_process_alive(root)
    status = record.status if record is not None else "unknown"
    if status == "running" and not live:
        status = "interrupted"
        notices.append(
            f"{RUN_FILE} says running but no agentrig process holds the run: it was killed"
            " (finish it with `agentrig run ... --resume`)"
        )

    order: dict[str, list[str]] = {}
    problem_info: dict[str, tuple[str, str | None]] = {}
    if record is not None:
        for name, problem in record.problems.items():
            order[name] = list(problem.checkpoints)
            problem_info[name] = (problem.status, problem.error)
            fresher = directory.read_problem(name)  # workers update it before run.json catches up
            if fresher is not None and fresher.checkpoints:
                order[name] = list(fresher.checkpoints)
                problem_info[name] = (fresher.status, fresher.error)
    for problem, checkpoint in results:
        order.setdefault(problem, [])
        if checkpoint not in order[problem]:
            order[problem].append(checkpoint)
    if record is None:
        for problem in list(order):
            for name in _checkpoint_dirs(directory.problem_dir(problem)):
                if name not in order[problem]:
                    order[problem].append(name)

    if any(split_unit(name)[1] is not None for name in order):  # attempts: a problem's together, in order
        first = {}
        for name in order:
            first.setdefault(split_unit(name)[0], len(first))
        order = dict(sorted(order.items(), key=lambda item: (first[split_unit(item[0])[0]], split_unit(item[0])[1] or 0)))
    problems: list[ProblemEntry] = []
    for name, checkpoints in order.items():
        status_, error = problem_info.get(name, ("unknown", None))
        if status_ == "running" and not live:
            status_ = "interrupted"
        entry = ProblemEntry(name=name, status=status_, error=error)
        for index, checkpoint in enumerate(checkpoints, 1):
            line = results.get((name, checkpoint))
            paths = directory.checkpoint(name, checkpoint)
            state: CheckpointState
            if line is not None:
                state = "finished"
            elif paths.root.is_dir():
                state = "running" if live else "interrupted"
            else:
                state = "pending"
            entry.checkpoints.append(
                CheckpointEntry(problem=name, checkpoint=checkpoint, index=index,
                                state=state, result=line, paths=paths)
            )
        problems.append(entry)
    return LoadedRun(root=root, record=record, live=live, status=status, problems=problems, notices=notices)


def read_steps(path: Path, start: int = 0) -> tuple[list[TrajectoryStep | UnknownStep], list[str]]:
    """The steps of a ``trajectory.jsonl`` from line ``start`` on; a torn last line (a run
    killed mid-write) is left out, and lines this version cannot read are kept as :class:`UnknownStep`."""
    steps: list[TrajectoryStep | UnknownStep] = []
    notices: list[str] = []
    for text in read_jsonl_lines(path)[start:]:
        try:
            steps.append(parse_step(text))
            continue
        except ValueError:
            pass
        try:
            data = json.loads(text)
        except ValueError:
            notices.append(f"{path.name}: a line that is not JSON was left out")
            continue
        if not isinstance(data, dict):
            continue
        try:  # a known kind carrying fields of a newer version
            model = _step_models().get(str(data.get("kind")))
            if model is not None:
                steps.append(model.model_validate(prune(model, data, [])))
                continue
        except ValueError:
            pass
        steps.append(UnknownStep(kind=str(data.get("kind", "?")), data=data))
    return steps, notices


def _step_models() -> dict[str, Any]:
    from agentrig import trajectory as t

    return {
        model.model_fields["kind"].default: model
        for model in (t.UserStep, t.AgentTextStep, t.ThinkingStep, t.ToolUseStep, t.ErrorStep, t.LLMCall, t.PlanStep)
    }


def _optional(model: Any, path: Path, notices: list[str]) -> Any:
    if not path.exists():
        return None
    dropped: list[str] = []
    try:
        value = read_record(model, path, dropped)
    except RecordError as exc:
        notices.append(str(exc))
        return None
    if dropped:
        notices.append(f"{path.name}: fields unknown to this agentrig ignored: {', '.join(sorted(set(dropped)))}")
    return value


def load_checkpoint(entry: CheckpointEntry) -> CheckpointDetail:
    """Read every file of one checkpoint; missing files are ``None`` (with a notice when they should exist)."""
    paths = entry.paths
    notices: list[str] = []
    try:
        prompt: str | None = paths.prompt.read_text(encoding="utf-8", errors="replace")
    except OSError:
        prompt = None
    inference = _optional(CheckpointInferenceResult, paths.inference_result, notices)
    evaluation = _optional(EvaluationRecord, paths.evaluation, notices)
    diff = _optional(DiffRecord, paths.diff, notices)
    steps, step_notices = read_steps(paths.trajectory)
    notices += step_notices
    if entry.state == "interrupted":
        notices.append(
            f"{entry.key} was started by a run that is gone (killed mid-checkpoint): its result was never"
            " written; the steps below are those recorded until then"
        )
    elif entry.state == "finished" and entry.result is not None and entry.result.status != "skipped":
        if inference is None and not any(n.startswith(str(paths.inference_result)) for n in notices):
            notices.append(f"{paths.inference_result} missing")
    return CheckpointDetail(entry=entry, prompt=prompt, inference=inference, evaluation=evaluation,
                            diff=diff, steps=steps, notices=notices)
