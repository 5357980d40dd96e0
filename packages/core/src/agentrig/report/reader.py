"""A run directory read back, tolerant of runs in progress, killed, and of other versions.

This module is the one place that knows where a checkpoint's files live in a
run directory (through :class:`~agentrig.run.layout.RunDirectory`); everything
that shows or exports a run goes through :func:`open_run` and
:func:`load_checkpoint`.

A run directory read back may come from someone else: every name read from it
(a problem or checkpoint in ``run.json``, ``problem.json`` or ``results.jsonl``,
a directory on disk) must be a plain name as at load time, or it is left out
with a notice naming the file and the name; every file is read only when it
resolves inside the run directory (a symbolic link out of it is not followed,
a FIFO is not opened); an unreadable record becomes a notice naming the file.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentrig.agents.interface import CheckpointInferenceResult
from agentrig.atomic import read_jsonl_records
from agentrig.boundary import BoundaryError, check_nesting, is_safe_name, read_inside, record_limit, record_too_large, shorten
from agentrig.report.raw_trajectory import RawTrajectory, read_raw_trajectory
from agentrig.report.tolerant import M, RecordError, load_record_json, prune, read_record
from agentrig.run.layout import LOCK_FILE, PROBLEM_FILE, RESULTS_FILE, RUN_FILE, CheckpointPaths, RunDirectory
from agentrig.run.records import (
    CheckpointResultLine,
    DiffRecord,
    EvaluationRecord,
    NetworkRecord,
    PassAtKSummary,
    ProblemRecord,
    ProblemScore,
    RunRecord,
    is_safe_unit,
    split_unit,
)
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
    #: The problem's own score, where its format defines one (a Harbor multi-step task's reward).
    score: ProblemScore | None = None
    #: The network its container ran with (``problem.json`` / ``run.json``), when recorded.
    network: NetworkRecord | None = None

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
    _by_problem: dict[str, list[CheckpointEntry]] | None = field(default=None, init=False, repr=False, compare=False)
    _problems_by_name: dict[str, list[ProblemEntry]] | None = field(default=None, init=False, repr=False, compare=False)

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
        """The model as shown to people (``ModelRecord.label``: ``openai/gpt-4o``,
        ``replay:/path/replay.jsonl``), ``none`` for an agent that needs none, or ``?``."""
        if self.record is None:
            return "?"
        return self.record.identity.model.label if self.record.identity.model is not None else "none"

    @property
    def model_id(self) -> str:
        """The model as ``--model`` named it (a replay file as ``show`` spells it, ``replay:/path/replay.jsonl``,
        which ``--model`` takes too), ``none`` for an agent that needs none, or ``?``: what the exports record."""
        from agentrig.model_definition import model_spelling

        if self.record is None:
            return "?"
        return model_spelling(self.record.identity.model.id) if self.record.identity.model is not None else "none"

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
        if self._by_problem is None:  # one pass over the run, not one per lookup (a report looks up every checkpoint)
            self._by_problem = {}
            for entry in self.entries():
                self._by_problem.setdefault(entry.problem, []).append(entry)
                base = split_unit(entry.problem)[0]
                if base != entry.problem:
                    self._by_problem.setdefault(base, []).append(entry)
        found = self._by_problem.get(problem, [])
        return [e for e in found if e.checkpoint == checkpoint] if checkpoint is not None else list(found)

    def problems_named(self, name: str) -> list[ProblemEntry]:
        """The problem runs called ``name`` (a problem run's name), or every attempt of problem ``name``;
        in the run's order, empty when unknown. One index per run, not a pass per lookup."""
        if self._problems_by_name is None:
            self._problems_by_name = {}
            for entry in self.problems:
                self._problems_by_name.setdefault(entry.name, []).append(entry)
                if entry.problem != entry.name:
                    self._problems_by_name.setdefault(entry.problem, []).append(entry)
        return list(self._problems_by_name.get(name, []))

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
    #: The trajectory as read, not parsed (``load_checkpoint(..., parse_steps=False)``: ``steps`` is then empty).
    trajectory: RawTrajectory | None = None


def run_process_alive(root: Path) -> bool:
    """Whether the process that holds ``root``'s lock file (a run writing it) still exists."""
    try:
        text = read_inside(root, root / LOCK_FILE, limit=64).decode("ascii").strip()
        pid = int(text.split()[0])
    except (OSError, ValueError, IndexError):  # BoundaryError and UnicodeDecodeError are ValueErrors
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
    try:
        records = read_jsonl_records(directory.results_file, read=directory.read_bytes)
    except BoundaryError as exc:
        notices.append(f"{exc}; showing what {RUN_FILE} holds")
        return out
    except OSError as exc:
        notices.append(f"{directory.results_file}: {exc.strerror or exc}; showing what {RUN_FILE} holds")
        return out
    for number, text in records:
        try:
            line = load_record_json(CheckpointResultLine, text, f"{RESULTS_FILE} line {number}", dropped)
            if not is_safe_unit(line.unit):
                raise RecordError(f"{RESULTS_FILE} line {number}: problem '{shorten(line.unit)}' is not a valid name")
            if not is_safe_name(line.checkpoint):
                raise RecordError(f"{RESULTS_FILE} line {number}: checkpoint '{shorten(line.checkpoint)}' is not a valid name")
        except RecordError as exc:
            bad += 1
            if bad == 1:
                notices.append(f"{exc}; such lines are left out")
            continue
        out.pop((line.unit, line.checkpoint), None)
        out[(line.unit, line.checkpoint)] = line
    if bad > 1:
        notices.append(f"{RESULTS_FILE}: {bad} lines left out in all")
    if dropped:
        notices.append(f"{RESULTS_FILE}: fields unknown to this agentrig ignored: {_fields(dropped)}")
    return out


def _fields(dropped: list[str]) -> str:
    """Unknown fields named in a notice: a few, each shortened (a crafted record can hold many, long ones)."""
    names = sorted(set(dropped))
    shown = ", ".join(shorten(name, 40) for name in names[:10])
    return shown + (f" and {len(names) - 10} more" if len(names) > 10 else "")


def _read_problem(directory: RunDirectory, name: str, notices: list[str]) -> ProblemRecord | None:
    """``<problem>/problem.json`` when a worker wrote one; ``None`` when missing, or unreadable, or naming
    a checkpoint that is not a plain name (with a notice naming the file)."""
    path = directory.problem_dir(name) / PROBLEM_FILE
    if not os.path.lexists(path):
        return None
    try:
        record = read_record(ProblemRecord, path, root=directory.root)
    except RecordError as exc:
        notices.append(f"{exc}; using {RUN_FILE}")
        return None
    bad = next((c for c in record.checkpoints if not is_safe_name(c)), None)
    if bad is not None:
        notices.append(f"{path}: checkpoint '{shorten(bad)}' is not a valid name; using {RUN_FILE}")
        return None
    return record


def _checkpoint_dirs(problem_dir: Path) -> list[str]:
    """Checkpoint directories found on disk under a problem (for runs whose run.json is unreadable)."""
    try:
        return sorted(
            p.name for p in problem_dir.iterdir()
            if is_safe_name(p.name) and not p.is_symlink() and p.is_dir()
        )
    except OSError:
        return []


def open_run(path: Path) -> LoadedRun:
    """Read the run in ``path``; :class:`NotARunError` when it is not a run directory."""
    root = Path(path)
    directory = _run_directory(root)
    notices: list[str] = []
    record = _read_run_record(directory, notices)
    results = read_results(directory, notices)
    live = record is not None and record.status == "running" and run_process_alive(root)
    status = record.status if record is not None else "unknown"
    if status == "running" and not live:
        status = "interrupted"
        notices.append(
            f"{RUN_FILE} says running but no agentrig process holds the run: it was killed"
            " (finish it with `agentrig run ... --resume`)"
        )
    known = _KnownProblems()
    if record is not None:
        for name, problem in record.problems.items():
            known.take(directory, name, problem, notices)
    known.add_found(directory, results, on_disk=record is None)
    known.keep_attempts_together()
    problems = [known.entry(directory, name, results, live) for name in known.order]
    return LoadedRun(root=root, record=record, live=live, status=status, problems=problems, notices=notices)


def _run_directory(root: Path) -> RunDirectory:
    """``root`` as a run directory: :class:`NotARunError` saying what to pass when it is none."""
    if not root.is_dir():
        raise NotARunError(f"{root}: no such directory; pass a run directory (e.g. runs/latest)")
    directory = RunDirectory(root)
    if not directory.run_file.exists() and not directory.results_file.exists():
        raise NotARunError(
            f"{root} is not a run directory ({RUN_FILE} and {RESULTS_FILE} missing); pass the directory"
            " `agentrig run` printed, e.g. runs/latest"
        )
    return directory


def _read_run_record(directory: RunDirectory, notices: list[str]) -> RunRecord | None:
    """``run.json``; ``None`` (with a notice) when missing or unreadable, its unknown fields noted."""
    if not directory.run_file.exists():
        notices.append(f"{RUN_FILE} missing; showing what {RESULTS_FILE} holds")
        return None
    dropped: list[str] = []
    record: RunRecord | None = None
    try:
        record = read_record(RunRecord, directory.run_file, dropped, root=directory.root)
    except RecordError as exc:
        notices.append(f"{exc}; showing what {RESULTS_FILE} holds")
    if dropped:
        notices.append(f"{RUN_FILE}: fields unknown to this agentrig ignored: {_fields(dropped)}")
    return record


@dataclass
class _KnownProblems:
    """What the records say of each problem run: its checkpoints in order, status and error, score, network."""

    order: dict[str, list[str]] = field(default_factory=dict)
    info: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    scores: dict[str, ProblemScore] = field(default_factory=dict)
    networks: dict[str, NetworkRecord | None] = field(default_factory=dict)

    def take(self, directory: RunDirectory, name: str, problem: ProblemRecord, notices: list[str]) -> None:
        """A problem of ``run.json``, updated by its ``problem.json`` (workers write it before ``run.json``
        catches up); names that are not plain ones are left out with a notice."""
        if not is_safe_unit(name):
            notices.append(f"{directory.run_file}: problem '{shorten(name)}' is not a valid name; left out")
            return
        bad = next((c for c in problem.checkpoints if not is_safe_name(c)), None)
        if bad is not None:
            notices.append(f"{directory.run_file}: checkpoint '{shorten(bad)}' of problem '{name}' is not a valid name; left out")
        self.order[name] = [c for c in problem.checkpoints if is_safe_name(c)]
        self.info[name] = (problem.status, problem.error)
        if problem.score is not None:
            self.scores[name] = problem.score
        self.networks[name] = problem.network
        fresher = _read_problem(directory, name, notices)
        if fresher is not None and fresher.checkpoints:
            self.order[name] = list(fresher.checkpoints)
            self.info[name] = (fresher.status, fresher.error)
            if fresher.score is not None:
                self.scores[name] = fresher.score
            self.networks[name] = fresher.network or self.networks[name]

    def add_found(
        self, directory: RunDirectory, results: dict[tuple[str, str], CheckpointResultLine], on_disk: bool
    ) -> None:
        """The checkpoints ``results.jsonl`` holds; with ``on_disk`` (no readable ``run.json``), the
        checkpoint directories found too."""
        for problem, checkpoint in results:
            self.order.setdefault(problem, [])
            if checkpoint not in self.order[problem]:
                self.order[problem].append(checkpoint)
        if on_disk:
            for problem in list(self.order):
                for name in _checkpoint_dirs(directory.problem_dir(problem)):
                    if name not in self.order[problem]:
                        self.order[problem].append(name)

    def keep_attempts_together(self) -> None:
        """In a run with attempts: a problem's attempts together, in order, problems in their first order."""
        if not any(split_unit(name)[1] is not None for name in self.order):
            return
        first: dict[str, int] = {}
        for name in self.order:
            first.setdefault(split_unit(name)[0], len(first))
        self.order = dict(sorted(
            self.order.items(), key=lambda item: (first[split_unit(item[0])[0]], split_unit(item[0])[1] or 0)
        ))

    def entry(
        self, directory: RunDirectory, name: str, results: dict[tuple[str, str], CheckpointResultLine], live: bool
    ) -> ProblemEntry:
        """The problem run with each checkpoint's state: finished (a result line), started (its directory
        exists: running while the run is live, else interrupted) or pending."""
        status, error = self.info.get(name, ("unknown", None))
        if status == "running" and not live:
            status = "interrupted"
        entry = ProblemEntry(name=name, status=status, error=error, score=self.scores.get(name), network=self.networks.get(name))
        for index, checkpoint in enumerate(self.order[name], 1):
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
                CheckpointEntry(problem=name, checkpoint=checkpoint, index=index, state=state, result=line, paths=paths)
            )
        return entry


def read_steps(
    path: Path, start: int = 0, *, root: Path | None = None, read: Callable[[Path], bytes] | None = None
) -> tuple[list[TrajectoryStep | UnknownStep], list[str]]:
    """The steps of a ``trajectory.jsonl`` from line ``start`` on; a torn last line (a run
    killed mid-write) is left out, and lines this version cannot read are kept as :class:`UnknownStep`.

    ``root``: the run directory; a trajectory reached through a link leaving it is not read.
    ``read``: how the file is read instead (a :class:`CheckpointFiles`, which keeps the same rule)."""
    steps: list[TrajectoryStep | UnknownStep] = []
    notices: list[str] = []
    if read is None and root is not None:
        read = lambda p: read_inside(root, p)  # noqa: E731
    try:
        lines = read_jsonl_records(path, read=read)
    except BoundaryError as exc:
        return steps, [str(exc)]
    except OSError as exc:
        return steps, [f"{path}: {exc.strerror or exc}"]
    unreadable: list[str] = []
    for number, raw in lines[start:]:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            unreadable.append(f"line {number} is not UTF-8 text")
            continue
        try:
            steps.append(parse_step(text))
            continue
        except (ValueError, RecursionError):
            pass
        try:
            data = json.loads(text)
        except RecursionError:
            unreadable.append(f"line {number} is nested too deeply")
            continue
        except ValueError:
            unreadable.append(f"line {number} is not JSON")
            continue
        try:
            check_nesting(data, str(path), MAX_STEP_DEPTH)
        except BoundaryError:
            unreadable.append(f"line {number} is nested too deeply")
            continue
        if not isinstance(data, dict):
            continue
        try:  # a known kind carrying fields of a newer version
            model = _step_models().get(str(data.get("kind")))
            if model is not None:
                steps.append(model.model_validate(prune(model, data, [])))
                continue
        except (ValueError, RecursionError):
            pass
        steps.append(UnknownStep(kind=str(data.get("kind", "?")), data=data))
    if unreadable:
        more = f" (and {len(unreadable) - 1} more such lines)" if len(unreadable) > 1 else ""
        notices.append(f"{path}: {unreadable[0]}{more}; left out")
    return steps, notices


#: How deeply a trajectory line this version does not know may nest and still be kept (and shown).
MAX_STEP_DEPTH = 64


def _step_models() -> dict[str, Any]:
    from agentrig import trajectory as t

    return {
        model.model_fields["kind"].default: model
        for model in (t.UserStep, t.AgentTextStep, t.ThinkingStep, t.ToolUseStep, t.ErrorStep, t.LLMCall, t.PlanStep)
    }


class CheckpointFiles:
    """Reads the files of one checkpoint directory of run directory ``root`` as
    :func:`~agentrig.boundary.read_inside` does (never through a link leaving ``root``, never a FIFO
    or device), resolving the directory once instead of once per file: a checkpoint's files are
    opened relative to the directory, without following a link; a file that is a link is read
    through :func:`~agentrig.boundary.read_inside`, which follows it only when it stays inside ``root``.

    A context manager: the directory is held open inside the ``with`` block."""

    def __init__(self, root: Path, directory: Path) -> None:
        """Nothing is opened until the ``with`` block."""
        self.root = root
        self.directory = directory
        self._directory_text = os.fspath(directory)  # compared as text: a Path per file read was a fifth of the reading
        self._fd: int | None = None
        #: The largest file read (:func:`~agentrig.boundary.record_limit`); a larger one is refused by its size.
        self.limit = record_limit()

    def __enter__(self) -> CheckpointFiles:
        self._fd = self._open_below()
        if self._fd is None:
            self._fd = self._open_resolved()
        return self

    def _open_below(self) -> int | None:
        """The directory opened from ``root`` down, one component at a time, no link followed on the way
        (two ``os.path.realpath`` per checkpoint, a dozen ``lstat`` calls, were a sixth of reading one);
        ``None`` when it is not spelled as a path below ``root``, or a component is a link or missing."""
        root = os.fspath(self.root)
        if not self._directory_text.startswith(os.path.join(root, "")):
            return None
        parts = self._directory_text[len(os.path.join(root, "")):].split(os.sep)
        if any(part in ("", ".", "..") for part in parts):
            return None
        try:
            fd = os.open(root, _DIRECTORY)
        except OSError:
            return None
        try:
            for part in parts:
                inner = os.open(part, _DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                os.close(fd)
                fd = inner
        except OSError:
            os.close(fd)
            return None
        return fd

    def _open_resolved(self) -> int | None:
        """The directory opened once resolved (a link inside ``root`` on the way followed), ``None`` when it
        resolves outside ``root`` or cannot be opened: every file is then read through ``read_inside``."""
        real = os.path.realpath(self.directory)
        if not real.startswith(os.path.join(os.path.realpath(self.root), "")):
            return None
        try:
            return os.open(real, _DIRECTORY | os.O_NOFOLLOW)
        except OSError:  # missing, or replaced since
            return None

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __call__(self, path: Path) -> bytes:
        """The bytes of ``path`` (a file of the directory, else read through ``read_inside``)."""
        head, _, name = os.fspath(path).rpartition(os.sep)
        if self._fd is None or head != self._directory_text:
            return read_inside(self.root, path)
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self._fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # a link: followed only when it stays inside the run directory
                return read_inside(self.root, path)
            if exc.errno == errno.ENOENT:
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(path)) from None
            raise
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise BoundaryError(f"{path}: not a regular file; not read")
            if info.st_size > self.limit:
                raise record_too_large(path, info.st_size, self.limit)
            data = _read_to_end(fd, info.st_size, self.limit)
            if len(data) > self.limit:
                raise record_too_large(path, None, self.limit)
            return data
        finally:
            os.close(fd)


#: How a checkpoint's directory is opened (each component without following a link: ``O_NOFOLLOW`` added).
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


def _read_to_end(fd: int, size: int, limit: int) -> bytes:
    """Every byte of open file ``fd`` (``size`` bytes when it was measured; a file still growing is read to its
    end, or to just past ``limit``), with plain ``read`` calls: a buffered file object per file read was a tenth
    of reading a checkpoint."""
    chunks = []
    total = 0
    while total <= limit and (chunk := os.read(fd, max(min(size, limit) + 1 - total, 8192))):
        chunks.append(chunk)
        total += len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _read_record(model: type[M], path: Path, read: Callable[[Path], bytes], dropped: list[str]) -> M:
    """:func:`~agentrig.report.tolerant.read_record` of a file read by ``read``."""
    try:
        text = read(path)
    except FileNotFoundError:
        raise RecordError(f"{path}: not found") from None
    except BoundaryError as exc:
        raise RecordError(str(exc)) from None
    except OSError as exc:
        raise RecordError(f"{path}: {exc.strerror or exc}") from None
    return load_record_json(model, text, str(path), dropped)


def _optional(model: Any, path: Path, notices: list[str], read: Callable[[Path], bytes]) -> Any:
    dropped: list[str] = []
    try:
        value = _read_record(model, path, read, dropped)
    except RecordError as exc:
        if not os.path.lexists(path):
            return None
        notices.append(str(exc))
        return None
    if dropped:
        notices.append(f"{path.name}: fields unknown to this agentrig ignored: {_fields(dropped)}")
    return value


def _run_root(entry: CheckpointEntry) -> Path:
    """The run directory a checkpoint belongs to: above ``<problem>/<checkpoint>`` (and ``attempt_<i>``)."""
    depth = 2 + entry.problem.count("/")
    return entry.paths.root.parents[depth - 1]


def raw_trajectory_of(detail: CheckpointDetail) -> RawTrajectory:
    """The trajectory of ``detail`` as read, not parsed: the one read with it (``parse_steps=False``), else the file
    read now, inside its run directory."""
    if detail.trajectory is not None:
        return detail.trajectory
    root = _run_root(detail.entry)
    return read_raw_trajectory(detail.entry.paths.trajectory, lambda path: read_inside(root, path))


def load_checkpoint(entry: CheckpointEntry, *, parse_steps: bool = True) -> CheckpointDetail:
    """Read every file of one checkpoint; missing files are ``None`` (with a notice when they should exist).

    ``parse_steps=False``: the trajectory is read but not parsed (``trajectory``, for a report page's script to read;
    ``steps`` empty, and the notices of lines that cannot be read are the script's to give)."""
    paths = entry.paths
    root = _run_root(entry)
    notices: list[str] = []
    prompt: str | None = None
    with CheckpointFiles(root, paths.root) as read:
        try:
            prompt = read(paths.prompt).decode("utf-8", errors="replace")
        except BoundaryError as exc:
            notices.append(str(exc))
        except OSError:
            pass
        inference = _optional(CheckpointInferenceResult, paths.inference_result, notices, read)
        evaluation = _optional(EvaluationRecord, paths.evaluation, notices, read)
        diff = _optional(DiffRecord, paths.diff, notices, read)
        raw: RawTrajectory | None = None
        if parse_steps:
            steps, step_notices = read_steps(paths.trajectory, read=read)
        else:
            steps, raw = [], read_raw_trajectory(paths.trajectory, read)
            step_notices = raw.notices
    notices += step_notices
    if entry.state == "interrupted":
        notices.append(
            f"{entry.key} was started by a run that is gone (killed mid-checkpoint): its result was never"
            " written; the steps below are those recorded until then"
        )
    elif (
        entry.state == "finished" and entry.result is not None and entry.result.status != "skipped"
        and inference is None and not any(n.startswith(str(paths.inference_result)) for n in notices)
    ):
        notices.append(f"{paths.inference_result} missing")
    return CheckpointDetail(entry=entry, prompt=prompt, inference=inference, evaluation=evaluation,
                            diff=diff, steps=steps, notices=notices, trajectory=raw)
