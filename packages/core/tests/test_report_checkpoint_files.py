"""Reading a checkpoint's files (issue 25, item 13): the checkpoint directory is resolved once, not once per
file, and the trust rules of ``read_inside`` hold for every file (a link leaving the run is never followed,
a link inside it is, a FIFO is never opened)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentrig.boundary import BoundaryError
from agentrig.report import reader
from agentrig.report.reader import CheckpointFiles, load_checkpoint, open_run
from agentrig.testing.runs import outcome_run


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return outcome_run(tmp_path / "run")


def _first(run: Path) -> reader.CheckpointEntry:
    return open_run(run).find("alpha", "first")[0]


def _resolved(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths ``os.path.realpath`` resolves from now on."""
    calls: list[str] = []
    real = os.path.realpath

    def counting(path: object, *args: object, **kwargs: object) -> str:
        calls.append(str(path))
        return real(path, *args, **kwargs)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(os.path, "realpath", counting)
    return calls


def test_a_checkpoint_is_read_without_resolving_a_path(run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entry = _first(run)
    calls = _resolved(monkeypatch)
    detail = load_checkpoint(entry)
    assert detail.prompt and detail.steps and detail.inference is not None and detail.evaluation is not None
    assert detail.notices == []
    # its directory is opened from the run directory down, no link followed: neither directory resolved
    # (two realpath per checkpoint were a sixth of reading it), let alone one per file (five files)
    assert calls == []


def test_an_attempt_s_checkpoint_is_read_the_same_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentrig.testing.runs import CheckpointPlan, write_run

    root = write_run(tmp_path / "run", {"alpha/attempt_1": [CheckpointPlan("first")],
                                        "alpha/attempt_2": [CheckpointPlan("first", "failed")]})
    entries = open_run(root).find("alpha/attempt_2", "first")
    calls = _resolved(monkeypatch)
    detail = load_checkpoint(entries[0])
    assert calls == [] and detail.notices == [] and detail.inference is not None and detail.steps
    assert detail.prompt == (root / "alpha" / "attempt_2" / "first" / "prompt.txt").read_text()


def test_a_checkpoint_directory_linked_inside_the_run_is_read(run: Path) -> None:
    directory = run / "alpha" / "first"
    kept = run / "kept-first"
    os.rename(directory, kept)
    directory.symlink_to(Path("..") / "kept-first", target_is_directory=True)
    detail = load_checkpoint(_first(run))
    assert detail.notices == [] and detail.prompt == (kept / "prompt.txt").read_text()
    assert detail.inference is not None and detail.steps


def test_a_problem_directory_linked_outside_is_not_read(run: Path, tmp_path: Path) -> None:
    problem = run / "alpha"
    moved = tmp_path / "elsewhere"
    os.rename(problem, moved)
    problem.symlink_to(moved, target_is_directory=True)
    detail = load_checkpoint(_first(run))
    assert detail.prompt is None and detail.steps == [] and detail.inference is None
    assert any("prompt.txt: a symbolic link leading outside" in n for n in detail.notices)


def test_a_large_file_is_read_whole(run: Path) -> None:
    directory = run / "alpha" / "first"
    text = "".join(f"line {n} of a long task\n" for n in range(20_000))  # 500 KB: many reads
    (directory / "prompt.txt").write_text(text)
    assert load_checkpoint(_first(run)).prompt == text


def test_files_read_as_read_inside_reads_them(run: Path, tmp_path: Path) -> None:
    directory = run / "alpha" / "first"
    secret = tmp_path / "secret.txt"
    secret.write_text("sk-not-to-be-read")
    (directory / "outside.txt").symlink_to(secret)
    (directory / "inside.txt").symlink_to(run / "alpha" / "second" / "prompt.txt")
    os.mkfifo(directory / "fifo.txt")
    with CheckpointFiles(run, directory) as read:
        assert read(directory / "prompt.txt") == (directory / "prompt.txt").read_bytes()
        assert read(directory / "inside.txt") == (run / "alpha" / "second" / "prompt.txt").read_bytes()
        with pytest.raises(BoundaryError, match=r"outside\.txt: a symbolic link leading outside"):
            read(directory / "outside.txt")
        with pytest.raises(BoundaryError, match=r"fifo\.txt: not a regular file; not read"):
            read(directory / "fifo.txt")
        with pytest.raises(FileNotFoundError):
            read(directory / "missing.txt")
        # a file of another directory: read_inside's rule, the same answer
        assert read(run / "alpha" / "second" / "prompt.txt") == (run / "alpha" / "second" / "prompt.txt").read_bytes()


def test_a_checkpoint_directory_linked_outside_is_not_read(run: Path, tmp_path: Path) -> None:
    directory = run / "alpha" / "first"
    moved = tmp_path / "elsewhere"
    os.rename(directory, moved)
    directory.symlink_to(moved, target_is_directory=True)
    with CheckpointFiles(run, directory) as read, pytest.raises(BoundaryError, match="a symbolic link leading outside"):
        read(directory / "prompt.txt")
    detail = load_checkpoint(_first(run))
    assert detail.prompt is None and detail.steps == [] and detail.inference is None
    assert any("prompt.txt: a symbolic link leading outside" in n for n in detail.notices)
