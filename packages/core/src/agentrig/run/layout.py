"""The run directory: where each artifact lives, who owns the directory, what is finished.

```
run.json, results.jsonl
<problem>/problem.json
<problem>/<checkpoint>/prompt.txt, inference_result.json, evaluation.json,
                       trajectory.jsonl, agent/, snapshot/, diff.json
<problem>/<checkpoint>/evaluations/<n>.json    re-evaluations (``agentrig evaluate``), 1, 2, ...
<problem>/<checkpoint>/tries/<n>/               an earlier try of the checkpoint (``--retries``,
                                                ``--retry-errors``): its files and ``try.json``
```

With ``--attempts K`` (K > 1) every attempt is a problem run of its own, named
``<problem>/attempt_<i>`` (a *unit*, :func:`~agentrig.run.records.unit_name`):
``<problem>/attempt_<i>/problem.json``, ``<problem>/attempt_<i>/<checkpoint>/...``.
The methods below that take a problem take such a unit name as well.

Names become path components here, so :meth:`RunDirectory.problem_dir` and
:meth:`RunDirectory.checkpoint` refuse a name that is not one plain component
(:func:`~agentrig.run.records.check_unit`, :func:`~agentrig.boundary.check_name`),
and every write and delete of the run machinery goes through the guarded
methods of :class:`RunDirectory` (:func:`~agentrig.boundary.guard`: a path
strictly inside the run directory, or :class:`~agentrig.boundary.BoundaryError`).
Reads go through :func:`~agentrig.boundary.read_inside`: a run directory read
back may come from someone else, and a symbolic link in it that leaves it is
never followed.
"""

from __future__ import annotations

import fcntl
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ValidationError

from agentrig.atomic import append_line, read_jsonl_records, truncate_torn_tail, write_bytes_atomic, write_model_atomic
from agentrig.boundary import BoundaryError, check_name, guard, is_inside, is_safe_name, read_inside, remove, shorten
from agentrig.run.records import (
    CheckpointResultLine,
    ProblemRecord,
    RunIdentity,
    RunRecord,
    TryRecord,
    check_unit,
    is_safe_unit,
    split_unit,
)

if TYPE_CHECKING:
    from agentrig.workspace import Snapshot

RUN_FILE = "run.json"
RESULTS_FILE = "results.jsonl"
#: Result lines taken out of ``results.jsonl`` by ``--resume --retry-errors``, kept as history.
RETRIED_FILE = "retried.jsonl"
PROBLEM_FILE = "problem.json"
LOCK_FILE = ".agentrig.lock"
#: Where sessions keep their workspaces while a problem runs (removed with them).
WORKSPACES_DIR = ".workspaces"
#: A checkpoint's earlier tries: ``<checkpoint>/tries/<n>/`` (``try.json`` and the try's files).
TRIES_DIR = "tries"
TRY_FILE = "try.json"
#: A try being moved into ``tries/``: ``tries/.<n>.partial/`` until it is whole (then renamed to ``<n>``).
_PARTIAL_TRY = re.compile(r"\.([1-9][0-9]{0,5})\.partial\Z")
_TRY_NUMBER = re.compile(r"[1-9][0-9]{0,5}\Z")
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.-]+\Z")
#: The run directory's own entries beside the problems' directories: no problem may be called so.
RESERVED_PROBLEM_NAMES = frozenset({RUN_FILE, RESULTS_FILE, RETRIED_FILE, "exports"})
#: A problem directory's own entries beside its checkpoints' (``problem.json``, the attempts of
#: ``--attempts K``: ``attempt_<i>``): no checkpoint may be called so.
RESERVED_CHECKPOINT_NAMES = frozenset({PROBLEM_FILE})
_ATTEMPT_NAME = re.compile(r"attempt_[0-9]+\Z", re.IGNORECASE)


def reserved_name(name: str, kind: str) -> str | None:
    """Why ``name`` cannot be a ``kind`` (``problem`` or ``checkpoint``) of a run: it is one of the run
    directory's own file names (compared without case, as a case-insensitive filesystem would), or ``None``."""
    folded = name.casefold()
    if kind == "problem" and folded in RESERVED_PROBLEM_NAMES:
        return f"'{name}' is reserved: the run directory keeps a file of its own under that name; rename the problem"
    if kind == "checkpoint" and (folded in RESERVED_CHECKPOINT_NAMES or _ATTEMPT_NAME.match(name)):
        return f"'{name}' is reserved: a problem's directory keeps an entry of its own under that name; rename the checkpoint"
    return None


#: The largest snapshot manifest read back (a manifest lists files, not their contents).
MANIFEST_MAX_BYTES = 64 * 1024 * 1024


class RunDirectoryError(ValueError):
    """The output directory cannot be used for this run; the message says what to do."""


@dataclass(frozen=True)
class CheckpointPaths:
    """The files of one checkpoint inside the run directory."""

    root: Path

    @property
    def prompt(self) -> Path:
        """``prompt.txt``: the task text handed to the agent."""
        return self.root / "prompt.txt"

    @property
    def inference_result(self) -> Path:
        """``inference_result.json``: the ``CheckpointInferenceResult``."""
        return self.root / "inference_result.json"

    @property
    def evaluation(self) -> Path:
        """``evaluation.json``: the test's verdict."""
        return self.root / "evaluation.json"

    @property
    def evaluations(self) -> Path:
        """``evaluations/``: re-evaluations of the snapshot (``agentrig evaluate``), ``1.json``, ``2.json``, ..."""
        return self.root / "evaluations"

    @property
    def trajectory(self) -> Path:
        """``trajectory.jsonl``: one step per line, appended as it happens."""
        return self.root / "trajectory.jsonl"

    @property
    def agent(self) -> Path:
        """``agent/``: the agent's own artifacts."""
        return self.root / "agent"

    @property
    def snapshot(self) -> Path:
        """``snapshot/``: the workspace after the checkpoint."""
        return self.root / "snapshot"

    @property
    def diff(self) -> Path:
        """``diff.json``: what the checkpoint changed."""
        return self.root / "diff.json"

    @property
    def tries(self) -> Path:
        """``tries/``: the checkpoint's earlier tries, ``1/``, ``2/``, ... (each with ``try.json``)."""
        return self.root / TRIES_DIR


class RunDirectory:
    """One run's output directory (``--output``)."""

    def __init__(self, root: Path) -> None:
        """Wrap ``root``; nothing is created until written."""
        self.root = Path(root)

    @property
    def run_file(self) -> Path:
        """``run.json``."""
        return self.root / RUN_FILE

    @property
    def results_file(self) -> Path:
        """``results.jsonl``."""
        return self.root / RESULTS_FILE

    def problem_dir(self, problem: str) -> Path:
        """``<problem>/`` (``<problem>/attempt_<i>/`` for a unit); :class:`~agentrig.boundary.BoundaryError`
        when ``problem`` is not a problem run's name (:func:`~agentrig.run.records.check_unit`)."""
        return self.root / check_unit(problem, f"{self.root}: problem")

    def checkpoint(self, problem: str, checkpoint: str) -> CheckpointPaths:
        """The paths of one checkpoint; :class:`~agentrig.boundary.BoundaryError` when the problem's or the
        checkpoint's name is not one plain path component."""
        return CheckpointPaths(self.problem_dir(problem) / check_name(checkpoint, f"{self.root}: checkpoint of '{problem}'"))

    # -- guarded writes and deletes ------------------------------------------------

    def guard(self, path: Path, action: str = "write") -> Path:
        """``path`` when it lies strictly inside the run directory (:func:`agentrig.boundary.guard`)."""
        return guard(self.root, path, action)

    def write_bytes(self, path: Path, data: bytes) -> None:
        """Replace ``path`` (inside the run directory) with ``data`` atomically."""
        write_bytes_atomic(self.guard(path), data)

    def write_text(self, path: Path, text: str) -> None:
        """Replace ``path`` (inside the run directory) with ``text`` (UTF-8) atomically."""
        self.write_bytes(path, text.encode("utf-8"))

    def write_model(self, path: Path, record: BaseModel) -> None:
        """Replace ``path`` (inside the run directory) with ``record`` as indented JSON, atomically."""
        write_model_atomic(self.guard(path), record)

    def append_line(self, path: Path, line: str, *, sync: bool = False) -> None:
        """Append one line to the JSONL file ``path`` (inside the run directory)."""
        append_line(self.guard(path), line, sync=sync)

    def make_dir(self, path: Path) -> Path:
        """Create the directory ``path`` (inside the run directory) and its parents; returns it."""
        target = self.guard(path, "create")
        target.mkdir(parents=True, exist_ok=True)
        return target

    def remove(self, path: Path) -> None:
        """Delete ``path`` (a file, link or tree strictly inside the run directory; a link is never followed)."""
        remove(self.root, path)

    def read_bytes(self, path: Path) -> bytes:
        """The bytes of the file ``path`` of this run directory, never through a link that leaves it
        (:func:`agentrig.boundary.read_inside`)."""
        return read_inside(self.root, path)

    def read_snapshot(self, snapshot: Path, where: str) -> Snapshot:
        """The snapshot at ``snapshot`` (a checkpoint's ``snapshot/`` in this run directory), read back for a
        restore: it must lie inside this run directory, its manifest is read through the boundary (at most
        :data:`MANIFEST_MAX_BYTES`) and checked entry by entry before anything is restored
        (:func:`agentrig.workspace.check_manifest`: no absolute or ``..`` path, nothing below a link, no link
        leading out of the snapshot, every file a regular file under ``files/``). Every restore driven by a
        record read back (``--resume``, ``--from``, ``evaluate``, ``replay``) takes its snapshot from here;
        :class:`RunDirectoryError` (one line, starting with ``where``) names what is wrong."""
        from agentrig.workspace import MANIFEST_NAME, Snapshot, SnapshotManifest, WorkspaceError, check_manifest

        if not snapshot.is_dir() or not is_inside(self.root, snapshot):
            raise RunDirectoryError(
                f"{where}: the checkpoint has no snapshot inside the run ({snapshot} is missing or leads outside {self.root})"
            )
        manifest_file = snapshot / MANIFEST_NAME
        try:
            manifest = SnapshotManifest.model_validate_json(read_inside(self.root, manifest_file, MANIFEST_MAX_BYTES))
        except FileNotFoundError:
            raise RunDirectoryError(f"{where}: {snapshot} has no {MANIFEST_NAME}: not a snapshot") from None
        except (BoundaryError, OSError) as exc:
            raise RunDirectoryError(f"{where}: {exc}") from None
        except ValidationError as exc:
            raise RunDirectoryError(f"{where}: {manifest_file} is not a snapshot manifest ({exc.errors()[0]['msg']})") from None
        try:
            check_manifest(snapshot, manifest)
        except WorkspaceError as exc:
            raise RunDirectoryError(f"{where}: {exc}") from None
        return Snapshot(snapshot, manifest)

    # -- earlier tries of a checkpoint ----------------------------------------

    def kept_tries(self, paths: CheckpointPaths) -> list[TryRecord]:
        """The checkpoint's earlier tries (``tries/<n>/try.json``), by number; a try whose record cannot be
        read counts as an automatic retry with an unknown cause (it used the budget, whatever it was)."""
        tries: list[TryRecord] = []
        folder = paths.tries
        if not folder.is_dir() or folder.is_symlink():
            return tries
        for entry in folder.iterdir():
            if not _TRY_NUMBER.match(entry.name) or entry.is_symlink() or not entry.is_dir():
                continue
            number = int(entry.name)
            try:
                record = TryRecord.model_validate_json(self.read_bytes(entry / TRY_FILE))
                tries.append(record.model_copy(update={"number": number}))
            except (OSError, ValidationError, BoundaryError):
                tries.append(TryRecord(number=number, reason="retries", cause="unknown (try.json unreadable)"))
        return sorted(tries, key=lambda record: record.number)

    def keep_try(self, paths: CheckpointPaths, record: TryRecord) -> Path:
        """Move the checkpoint's files (everything but ``tries/``) into ``tries/<number>/`` with ``try.json``.

        The record is written first into ``tries/.<n>.partial/``, the files are
        renamed into it one by one, then the directory is renamed to ``<n>``: a
        run killed meanwhile leaves a partial try that :meth:`clear_checkpoint`
        completes (nothing else can have happened in the checkpoint since).
        Returns the try's directory.
        """
        tries = self.make_dir(paths.tries)
        staging = self.make_dir(tries / f".{record.number}.partial")
        self.write_model(staging / TRY_FILE, record)
        return self._finish_try(paths, staging, record.number)

    def _finish_try(self, paths: CheckpointPaths, staging: Path, number: int) -> Path:
        for entry in sorted(paths.root.iterdir()):
            if entry.name != TRIES_DIR:
                os.rename(self.guard(entry, "move"), self.guard(staging / entry.name, "move"))
        target = self.guard(paths.tries / str(number), "move")
        if target.exists() or target.is_symlink():
            raise RunDirectoryError(f"{target}: a try numbered {number} is kept already; not replaced")
        os.rename(self.guard(staging, "move"), target)
        return target

    def clear_checkpoint(self, paths: CheckpointPaths) -> None:
        """Make an unfinished checkpoint's directory ready to run it again: a try left half moved (a run
        killed while keeping it) is completed, then every file of the interrupted try is removed; the
        earlier tries stay."""
        root = paths.root
        if root.is_symlink() or (root.exists() and not root.is_dir()):
            self.remove(root)
            return
        if not root.exists():
            return
        tries = paths.tries
        if tries.is_symlink() or (tries.exists() and not tries.is_dir()):
            self.remove(tries)
        if tries.is_dir():
            for entry in sorted(tries.iterdir()):
                partial = _PARTIAL_TRY.match(entry.name)
                if partial is None or entry.is_symlink() or not entry.is_dir():
                    continue
                if (entry / TRY_FILE).is_file():
                    self._finish_try(paths, entry, int(partial.group(1)))
                else:  # killed before its record was written: nothing of the try has moved yet
                    self.remove(entry)
        for entry in list(root.iterdir()):
            if entry.name != TRIES_DIR:
                self.remove(entry)

    # -- records --------------------------------------------------------------

    def read_run(self) -> RunRecord:
        """``run.json``; :class:`RunDirectoryError` naming the file when it is unreadable."""
        try:
            record = RunRecord.model_validate_json(self.read_bytes(self.run_file))
        except FileNotFoundError:
            raise RunDirectoryError(f"{self.run_file}: not found") from None
        except ValidationError as exc:
            raise RunDirectoryError(f"{self.run_file}: not a run record of this agentrig ({exc.errors()[0]['msg']})") from None
        except (BoundaryError, OSError) as exc:
            raise RunDirectoryError(str(exc) if isinstance(exc, BoundaryError) else f"{self.run_file}: {exc.strerror or exc}") from None
        for name in record.problems:
            try:
                check_unit(name, f"{self.run_file}: problems")
            except BoundaryError as exc:
                raise RunDirectoryError(str(exc)) from None
        return record

    def write_run(self, record: RunRecord) -> None:
        """Replace ``run.json``."""
        self.write_model(self.run_file, record)

    def write_problem(self, record: ProblemRecord) -> None:
        """Replace ``<problem>/problem.json``."""
        self.write_model(self.problem_dir(record.name) / PROBLEM_FILE, record)

    def read_problem(self, problem: str) -> ProblemRecord | None:
        """``<problem>/problem.json`` if a worker wrote one (``None`` when missing or unreadable,
        or when it names another problem or a checkpoint that is not a plain name)."""
        path = self.problem_dir(problem) / PROBLEM_FILE
        try:
            record = ProblemRecord.model_validate_json(self.read_bytes(path))
        except (OSError, ValidationError, BoundaryError):
            return None
        if record.name != problem or not all(is_safe_name(name) for name in record.checkpoints):
            return None
        return record

    def append_result(self, line: CheckpointResultLine) -> None:
        """Add one finished checkpoint to ``results.jsonl`` (fsynced: resume trusts it)."""
        self.append_line(self.results_file, line.model_dump_json(), sync=True)

    def results(self, problem: str | None = None, *, unreadable: list[str] | None = None) -> list[CheckpointResultLine]:
        """The finished checkpoints, in the order they finished (of one problem if given).

        A checkpoint listed twice (a resumed run that raced a crash) counts once: the last line wins.
        A line naming a problem or checkpoint that is not a plain name is left out: nothing recorded
        there can be a path of this run. ``unreadable``: where to say which lines were left out and why
        (``results.jsonl line 3: not UTF-8 text``), for a reader of a run directory someone sent.
        """
        by_key: dict[tuple[str, str], CheckpointResultLine] = {}
        # Problem names are [A-Za-z0-9_.-]+, written unescaped: a line without the
        # quoted name is another problem's, skipped without parsing it.
        name = split_unit(problem)[0] if problem is not None else None
        needle = f'"{name}"' if name is not None and _PLAIN_NAME.match(name) else None
        for number, text in read_jsonl_records(self.results_file, containing=needle, read=self.read_bytes):
            where = f"{RESULTS_FILE} line {number}"
            try:
                line = CheckpointResultLine.model_validate_json(text)
            except ValidationError as exc:
                if unreadable is not None:
                    unreadable.append(f"{where}: not a result record ({exc.errors()[0]['msg']})")
                continue
            if not (is_safe_unit(line.unit) and is_safe_name(line.checkpoint)):
                if unreadable is not None:
                    bad = line.checkpoint if is_safe_unit(line.unit) else line.unit
                    unreadable.append(f"{where}: '{shorten(bad)}' is not a valid name")
                continue
            if problem is None or line.unit == problem:
                by_key.pop((line.unit, line.checkpoint), None)
                by_key[(line.unit, line.checkpoint)] = line
        return list(by_key.values())

    def results_read_back(
        self, unreadable: list[str], on_notice: Callable[[str], None] | None = None
    ) -> list[CheckpointResultLine]:
        """:meth:`results` of a run directory read back (``evaluate``, ``replay``): each line left out is
        added to ``unreadable`` and said through ``on_notice``; :class:`RunDirectoryError` naming the
        file when it cannot be read."""
        try:
            lines = self.results(unreadable=unreadable)
        except BoundaryError as exc:
            raise RunDirectoryError(str(exc)) from None
        except OSError as exc:
            raise RunDirectoryError(f"{self.results_file}: {exc.strerror or exc}") from None
        if on_notice is not None:
            for notice in unreadable:
                on_notice(f"{self.root}: {notice}; left out")
        return lines

    def retract_errors(
        self,
        problems: list[tuple[str, list[str]]],
        keep: Callable[[list[CheckpointResultLine]], None] | None = None,
    ) -> list[CheckpointResultLine]:
        """Take the checkpoints that ended in an error out of ``results.jsonl``, so a resume redoes them.

        ``problems``: each problem's name and checkpoint names in order. A
        checkpoint ended in an error when the agent stopped on one (a model
        call that failed after its retries, a runtime that broke: ``had_error``)
        or its test could not run (status ``error``); one that ran to a
        verdict is never retracted. A problem is retracted from its first such
        checkpoint on: every later checkpoint started from the workspace that
        one left. The retracted lines move to ``retried.jsonl`` (appended and
        fsynced first, then ``results.jsonl`` is replaced atomically), so
        nothing is lost at any moment. ``keep`` is called with the lines first
        (the checkpoints' directories are kept as tries there). Call it only
        while holding the lock, before any problem runs. Returns the retracted lines.
        """
        lines = self.results()
        by_key = {(line.unit, line.checkpoint): line for line in lines}
        drop: set[tuple[str, str]] = set()
        for problem, checkpoints in problems:
            first = next(
                (i for i, name in enumerate(checkpoints)
                 if (line := by_key.get((problem, name))) is not None and (line.had_error or line.status == "error")),
                None,
            )
            if first is not None:
                drop.update((problem, name) for name in checkpoints[first:])
        retracted = [line for line in lines if (line.unit, line.checkpoint) in drop]
        if not retracted:
            return []
        if keep is not None:
            keep(retracted)
        for line in retracted:
            self.append_line(self.root / RETRIED_FILE, line.model_dump_json(), sync=True)
        kept = [line for line in lines if (line.unit, line.checkpoint) not in drop]
        self.write_bytes(self.results_file, "".join(line.model_dump_json() + "\n" for line in kept).encode("utf-8"))
        return retracted

    # -- ownership ------------------------------------------------------------

    def claim(self, identity: RunIdentity, *, resume: bool) -> RunRecord | None:
        """Check that this directory may hold the run ``identity``; return the record to resume.

        A new run needs a missing or empty directory; ``--resume`` needs the
        ``run.json`` of the same agent, config, model, runtime and problems.
        """
        has_run = self.run_file.exists()
        if resume:
            if not has_run:
                if self._has_files():
                    raise RunDirectoryError(
                        f"--resume: {self.root} holds no run ({RUN_FILE} missing) and is not empty; choose another --output"
                    )
                raise RunDirectoryError(
                    f"--resume: {self.root} holds no run ({RUN_FILE} missing); drop --resume to start a new run there"
                )
            record = self.read_run()
            differences = record.identity.differences(identity)
            if differences:
                raise RunDirectoryError(
                    f"{self.root} belongs to a different run ({'; '.join(differences)});"
                    " use another --output or the same settings"
                )
            return record
        if has_run:
            raise RunDirectoryError(
                f"{self.root} already holds a run; pass --resume to continue it or choose another --output"
            )
        if self._has_files():
            raise RunDirectoryError(f"--output {self.root} exists and is not an empty directory; choose another --output")
        return None

    def _has_files(self) -> bool:
        """Whether the directory exists with something in it besides the lock (or is not a directory)."""
        return self.root.exists() and (not self.root.is_dir() or any(p.name != LOCK_FILE for p in self.root.iterdir()))

    def open(self, identity: RunIdentity, *, resume: bool) -> tuple[RunRecord | None, int]:
        """Lock the directory, then :meth:`claim` it; returns the record to resume and the lock's fd.

        Locking first means two runs started at once on one directory always
        end the same way: the second is told the directory is in use. A claim
        that fails releases the lock and removes a directory it created. On
        resume, a torn last line of ``results.jsonl`` (a crash mid-append) is
        cut off here, before anything appends to it.
        """
        if self.root.exists() and not self.root.is_dir():
            raise RunDirectoryError(f"--output {self.root} exists and is not a directory; choose another --output")
        created = not self.root.exists()
        fd = self.lock()
        try:
            previous = self.claim(identity, resume=resume)
            if previous is not None:
                truncate_torn_tail(self.guard(self.results_file))
        except BaseException:
            self.unlock(fd)
            if created:
                try:
                    self.root.rmdir()
                except OSError:
                    pass
            raise
        return previous, fd

    def lock(self) -> int:
        """Hold an exclusive lock on the directory for this process; returns the fd to keep open.

        Two runners writing one directory would corrupt it, so the second one stops.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.guard(self.root / LOCK_FILE)
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise RunDirectoryError(
                    f"{self.root} is in use by another agentrig run; wait for it or choose another --output"
                ) from None
            # The run that held it may have removed the file (unlock) after we opened it:
            # a lock on a removed file guards nothing, so lock the file that is there now.
            try:
                if os.fstat(fd).st_ino == os.stat(path).st_ino:
                    break
            except FileNotFoundError:
                pass
            os.close(fd)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return fd

    def unlock(self, fd: int) -> None:
        """Release the lock taken by :meth:`lock` and remove the lock file (resume does not need it)."""
        try:
            os.unlink(self.root / LOCK_FILE)
        except FileNotFoundError:
            pass
        os.close(fd)

    def tidy(self) -> None:
        """Remove what a run leaves behind that nothing needs: the ``.workspaces`` directory once empty."""
        try:
            (self.root / WORKSPACES_DIR).rmdir()
        except OSError:  # missing, or a session still in it (a worker that could not clean up)
            pass


LATEST_LINK = "latest"


def point_latest(run_root: Path) -> None:
    """Make ``latest`` beside ``run_root`` (``runs/latest``) a symbolic link to it, replaced atomically.

    A filesystem without symbolic links only loses the convenience, never the run.
    """
    parent = run_root.parent
    link = parent / LATEST_LINK
    tmp = parent / f".{LATEST_LINK}.{os.getpid()}.tmp"
    try:
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
        os.symlink(run_root.name, tmp)
        os.replace(tmp, link)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass
