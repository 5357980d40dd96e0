"""The one guard every delete and write of the run machinery goes through, tested on its own
(the second line of defence behind the name checks at load time)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentrig.boundary import BoundaryError, check_name, guard, is_safe_name, remove, resolve_inside


@pytest.mark.parametrize("name", [".", "..", "...", ".hidden", "trailing.", "a..b", "a/b", "", "a\x00b", "x" * 129, "/tmp/x"])
def test_names_that_are_not_one_plain_path_component_are_refused(name: str) -> None:
    assert not is_safe_name(name)
    with pytest.raises(BoundaryError, match="not a valid name"):
        check_name(name, "problem.yaml: name")


@pytest.mark.parametrize("name", ["hello", "checkpoint_1", "v1.2", "a-b_c", "x" * 128])
def test_plain_names_pass(name: str) -> None:
    assert check_name(name, "here") == name


def test_a_delete_of_the_parent_of_the_run_is_refused(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "r1"
    run.mkdir(parents=True)
    (tmp_path / "precious.txt").write_text("keep")
    for target in (run / ".." / "..", run / "..", run, run / "x" / ".." / "..", Path("/")):
        with pytest.raises(BoundaryError, match="refusing to delete"):
            remove(run, target)
    assert (tmp_path / "precious.txt").read_text() == "keep"
    assert run.is_dir()


def test_a_delete_through_a_symlinked_directory_is_refused(tmp_path: Path) -> None:
    run, outside = tmp_path / "run", tmp_path / "outside"
    run.mkdir()
    (outside / "inner").mkdir(parents=True)
    (run / "link").symlink_to(outside)
    with pytest.raises(BoundaryError):
        remove(run, run / "link" / "inner")
    assert (outside / "inner").is_dir()
    remove(run, run / "link")  # the link itself is inside: it goes, what it points at stays
    assert not (run / "link").exists() and (outside / "inner").is_dir()


def test_deletes_inside_the_run_work(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "p" / "c").mkdir(parents=True)
    (run / "p" / "c" / "f").write_text("x")
    remove(run, run / "p" / "c")
    assert not (run / "p" / "c").exists() and (run / "p").is_dir()
    remove(run, run / "p" / "missing")  # missing is fine


def test_writes_outside_are_refused(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    assert guard(run, run / "p" / "problem.json") == Path(os.path.realpath(run)) / "p" / "problem.json"
    for target in (run / ".." / "problem.json", Path("/tmp/x.json"), run / "..", run):
        with pytest.raises(BoundaryError, match="refusing to write"):
            guard(run, target)


def test_problem_paths_resolve_inside_the_problem(tmp_path: Path) -> None:
    problem = tmp_path / "problem"
    problem.mkdir()
    (problem / "prompt.md").write_text("hi")
    (problem / "leak.md").symlink_to("/proc/self/environ")
    assert resolve_inside(problem, "prompt.md", "problem.yaml: prompt") == (problem / "prompt.md").resolve()
    for bad, why in (("/proc/self/environ", "absolute"), ("../x", "outside"), ("leak.md", "symbolic link")):
        with pytest.raises(BoundaryError, match=why):
            resolve_inside(problem, bad, "problem.yaml: prompt")
