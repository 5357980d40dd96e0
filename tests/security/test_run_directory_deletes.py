"""Issue 20, section 1, the second line of defence: a problem or checkpoint name that slipped past
the loaders (``..``, ``.``) can make the run machinery neither delete nor write outside the run
directory. The problems are built with ``model_copy(update=...)``, which skips validation, so these
tests hold whatever the load-time checks do."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from agentrig.boundary import BoundaryError
from agentrig.problem import Problem
from agentrig.run import problems as problem_loading
from agentrig.run.layout import PROBLEM_FILE, RunDirectory
from agentrig.run.problem_run import run_problem
from agentrig.run.progress import ProgressEvent
from agentrig.run.records import ProblemRecord
from agentrig.run.shipping import ShippingError, unpack_checkpoint
from agentrig.testing.jobs import STARTER, starter_jobs


def _tree(root: Path, skip: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` (file contents; ``None`` for directories), ``skip`` left out."""
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
        if p != skip and skip not in p.parents
    }


def _home(tmp_path: Path) -> tuple[Path, Path]:
    """A user's directory with sources and an earlier run, and a fresh run directory ``runs/r1`` in it."""
    home = tmp_path / "home"
    (home / "src").mkdir(parents=True)
    (home / "src" / "main.py").write_text("print('precious')\n")
    (home / "notes.txt").write_text("keep me\n")
    (home / "runs" / "r0").mkdir(parents=True)
    (home / "runs" / "r0" / "run.json").write_text("{}\n")
    run = home / "runs" / "r1"
    run.mkdir()
    return home, run


def _renamed(problem_name: str, checkpoint_name: str) -> Problem:
    """The starter problem ``fizzbuzz`` named as a crafted problem file would name it, unvalidated."""
    problem = problem_loading.load_problem(str(STARTER / "fizzbuzz"), None)
    first = problem.checkpoints[0].model_copy(update={"name": checkpoint_name})
    return problem.model_copy(update={"name": problem_name, "checkpoints": [first]})


def _run(monkeypatch: pytest.MonkeyPatch, run: Path, problem: Problem) -> tuple[ProblemRecord, list[ProgressEvent]]:
    monkeypatch.setattr(problem_loading, "load_problem", lambda path, fmt=None: problem)
    job = starter_jobs(run, ["fizzbuzz"])[0].model_copy(update={"problem_name": problem.name})
    events: list[ProgressEvent] = []
    return run_problem(job, events.append), events


@pytest.mark.parametrize(
    ("problem_name", "checkpoint_name", "target"),
    [
        ("..", "..", "runs/<ts>/../.. (the directory agentrig ran from)"),
        ("x", "..", "the run directory itself"),
        (".", "..", "runs/"),
    ],
)
def test_a_problem_run_named_dot_dot_deletes_nothing_outside_its_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, problem_name: str, checkpoint_name: str, target: str
) -> None:
    home, run = _home(tmp_path)
    (run / "x").mkdir()  # what an earlier, killed start of the run left: the "stale" checkpoint exists
    before = _tree(home, run)

    record, _ = _run(monkeypatch, run, _renamed(problem_name, checkpoint_name))

    assert record.status == "failed", f"{target} was not protected: {record}"
    assert record.error is not None and "BoundaryError" in record.error and "not a valid" in record.error
    assert "\n" not in record.error
    assert run.is_dir(), "the run directory was deleted"
    assert _tree(home, run) == before, "files outside the run directory changed"


def test_a_problem_named_dot_dot_writes_no_problem_json_into_the_parent(tmp_path: Path) -> None:
    home, run = _home(tmp_path)
    directory = RunDirectory(run)
    for name in ("..", ".", "../x", "/tmp/x", "a\x00b", "x" * 300, "a/attempt_01", "a/b"):
        with pytest.raises(BoundaryError, match="not a valid problem name"):
            directory.write_problem(ProblemRecord(name=name, path=str(STARTER / "fizzbuzz")))
    assert not (home / "runs" / PROBLEM_FILE).exists() and not (home / PROBLEM_FILE).exists()
    directory.write_problem(ProblemRecord(name="ok/attempt_2", path="p"))  # a unit of --attempts is fine
    assert (run / "ok" / "attempt_2" / PROBLEM_FILE).is_file()


def test_run_directory_writes_through_a_symlinked_problem_directory_are_refused(tmp_path: Path) -> None:
    home, run = _home(tmp_path)
    (run / "p").symlink_to(home / "src", target_is_directory=True)  # a link planted in the run directory
    directory = RunDirectory(run)
    paths = directory.checkpoint("p", "c1")
    with pytest.raises(BoundaryError, match="refusing to write"):
        directory.write_text(paths.prompt, "task")
    with pytest.raises(BoundaryError, match="refusing to write"):
        directory.write_problem(ProblemRecord(name="p", path="x"))
    with pytest.raises(BoundaryError, match="refusing to delete"):
        directory.remove(run / "p" / "main.py")
    assert sorted(p.name for p in (home / "src").iterdir()) == ["main.py"]


def _archive(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def test_shipped_checkpoint_of_a_problem_named_dot_dot_is_not_unpacked_outside(tmp_path: Path) -> None:
    home, run = _home(tmp_path)
    before = _tree(home, run)
    data = _archive([(tarfile.TarInfo("./prompt.txt"), b"task")])
    for unit, checkpoint in (("..", ".."), ("x", ".."), ("..", "c1")):
        with pytest.raises(BoundaryError, match="not a valid"):
            unpack_checkpoint(run, unit, checkpoint, data)
    assert _tree(home, run) == before and run.is_dir()


def test_shipped_archive_with_a_hard_link_to_a_user_file_is_refused(tmp_path: Path) -> None:
    home, run = _home(tmp_path)
    link = tarfile.TarInfo("./prompt.txt")
    link.type, link.linkname = tarfile.LNKTYPE, str(home / "notes.txt")
    with pytest.raises(ShippingError, match="hard link"):
        unpack_checkpoint(run, "p", "c1", _archive([(link, None)]))
    assert not (run / "p" / "c1" / "prompt.txt").exists()
    assert (home / "notes.txt").stat().st_nlink == 1

