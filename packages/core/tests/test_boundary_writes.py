"""``agentrig.boundary``'s copies and writes into a directory an agent controlled: what lands where.

The threat tests (``tests/security/test_planted_links.py``) plant the links from a sandboxed agent;
these pin the helper's own rules: a tree merged as ``copytree(symlinks=True, dirs_exist_ok=True)``
merges it, links in the source copied as links, a link on the way refused or replaced, a link or a
hard link in a file's place replaced rather than written through.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentrig.boundary import BoundaryError, copy_under, make_dirs_under, write_under


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A root (the agent's directory), a source tree (the problem's) and a directory outside both."""
    root, source, outside = tmp_path / "root", tmp_path / "source", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (source / "sub").mkdir(parents=True)
    (source / "run.sh").write_text("echo run\n")
    (source / "run.sh").chmod(0o755)
    (source / "sub" / "data.txt").write_text("data\n")
    (source / "link").symlink_to("run.sh")
    return root, source, outside


def test_a_tree_is_merged_with_modes_times_and_links_kept(places: tuple[Path, Path, Path]) -> None:
    root, source, _ = places
    (root / "tests").mkdir()
    (root / "tests" / "mine.txt").write_text("the agent's\n")
    copy_under(root, "tests", source, "test files")
    copied = root / "tests"
    assert sorted(p.name for p in copied.iterdir()) == ["link", "mine.txt", "run.sh", "sub"]
    assert os.readlink(copied / "link") == "run.sh" and (copied / "sub" / "data.txt").read_text() == "data\n"
    assert (copied / "run.sh").stat().st_mode & 0o777 == 0o755
    assert (copied / "run.sh").stat().st_mtime_ns == (source / "run.sh").stat().st_mtime_ns
    assert not list(copied.rglob(".agentrig-*"))  # no temporary file left


def test_a_link_on_the_way_is_refused_or_replaced(places: tuple[Path, Path, Path]) -> None:
    root, source, outside = places
    (root / "tests").symlink_to(outside)
    with pytest.raises(BoundaryError) as refused:
        copy_under(root, "tests/deeper", source, "test files")
    assert str(refused.value) == "test files: 'tests' is a symbolic link; not followed"
    with pytest.raises(BoundaryError):
        make_dirs_under(root, "tests/a", "the subagent directory")
    assert list(outside.iterdir()) == []
    copy_under(root, "tests/deeper", source, "test files", replace_links=True)
    assert not (root / "tests").is_symlink() and (root / "tests" / "deeper" / "run.sh").is_file()
    assert list(outside.iterdir()) == []


def test_a_file_in_place_of_a_link_or_hard_link_is_replaced_not_written_through(places: tuple[Path, Path, Path]) -> None:
    root, _, outside = places
    victim = outside / "victim.txt"
    victim.write_text("the host's\n")
    (root / "soft.ini").symlink_to(victim)
    os.link(victim, root / "hard.ini")
    write_under(root, "soft.ini", b"[pytest]\n", "generated file")
    write_under(root, "hard.ini", b"[pytest]\n", "generated file")
    assert victim.read_text() == "the host's\n"
    assert not (root / "soft.ini").is_symlink() and (root / "soft.ini").read_text() == "[pytest]\n"
    assert (root / "hard.ini").read_text() == "[pytest]\n"


@pytest.mark.parametrize("relative", ["../escape", "/etc/passwd", "a/../../b"])
def test_a_path_leaving_the_root_by_its_text_is_refused(places: tuple[Path, Path, Path], relative: str) -> None:
    root, source, _ = places
    with pytest.raises(BoundaryError):
        write_under(root, relative, b"x", "generated file")
    with pytest.raises(BoundaryError):
        copy_under(root, relative, source, "test files")


def test_a_fifo_in_the_source_is_refused(places: tuple[Path, Path, Path]) -> None:
    root, source, _ = places
    os.mkfifo(source / "pipe")
    with pytest.raises(BoundaryError, match="is not a regular file, directory or link; not copied"):
        copy_under(root, "tests", source, "test files")
