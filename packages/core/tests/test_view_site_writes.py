"""Writing the static report (issue 25, item 13): each directory of the report is checked by ``guard`` and
made once, not once per page, a page whose path leaves the report is refused all the same, a page replaces a
link in its place without following it, and the collector runs once per problem run while pages are
written."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from agentrig.boundary import BoundaryError
from agentrig.testing.runs import synthetic_run
from agentrig.view import site
from agentrig.view.render import Report


def test_each_directory_is_resolved_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = synthetic_run(tmp_path / "run", checkpoints=20, steps=5, per_problem=10)
    out = tmp_path / "site"
    real = os.path.realpath
    calls: list[str] = []

    def counting(path: object, *args: object, **kwargs: object) -> str:
        calls.append(str(path))
        return real(path, *args, **kwargs)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(os.path, "realpath", counting)
    count = site.write_site(Report([run], cache_runs=True), out)
    monkeypatch.setattr(os.path, "realpath", real)
    files = [p for p in out.rglob("*") if p.is_file()]
    directories = {p.parent for p in files}
    assert count == len(files) > 4 * len(directories)
    resolved = [c for c in calls if c == str(out) or c.startswith(str(out) + os.sep)]
    # a guard (the directory and the report's root resolved) per directory, not per file
    assert len(resolved) <= 2 * len(directories), resolved


def test_a_page_leaving_the_report_is_refused_after_its_directory_was_checked(tmp_path: Path) -> None:
    out = tmp_path / "site"
    site._write(out, "runs/1/a.html", b"a")
    with pytest.raises(BoundaryError):
        site._write(out, "runs/1/..", b"b")
    with pytest.raises(BoundaryError):
        site._write(out, "runs/1/../../../escaped.html", b"c")
    with pytest.raises(BoundaryError):  # a name of the checked directory that is a path once unquoted: checked
        site._write(out, "runs/1/a%2F..%2F..%2F..%2F..%2Fescaped.html", b"d")
    assert not (tmp_path / "escaped.html").exists()
    assert (out / "runs" / "1" / "a.html").read_bytes() == b"a"
    site._write(out, "runs/1/b%2F..%2Fquoted.html", b"e")  # inside the report: written where it leads
    assert (out / "runs" / "1" / "quoted.html").read_bytes() == b"e"
    site._write(out, "runs/1/%C3%A9t%C3%A9.html", b"f")  # a quoted name of one component: the directory checked
    assert (out / "runs" / "1" / "été.html").read_bytes() == b"f"


def test_forked_writers_leave_the_collector_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The objects read are frozen for the collector while helpers share them, and unfrozen after, even when a
    helper fails."""
    import gc

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(site, "PARALLEL_FROM", 2)
    run = synthetic_run(tmp_path / "run", checkpoints=4, steps=5, per_problem=2)
    assert site.write_site(Report([run], cache_runs=True), tmp_path / "site") > 0
    assert gc.get_freeze_count() == 0
    blocked = tmp_path / "blocked"
    (blocked / "runs/1/problem_0001/checkpoint_1.html").mkdir(parents=True)  # the helper's share
    with pytest.raises(OSError):
        site.write_site(Report([run], cache_runs=True), blocked)
    assert gc.get_freeze_count() == 0


def test_each_directory_is_made_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = synthetic_run(tmp_path / "run", checkpoints=20, steps=5, per_problem=10)
    out = tmp_path / "site"
    real = os.mkdir
    made: list[str] = []

    def counting(path: object, *args: object, **kwargs: object) -> None:
        made.append(str(path))
        real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "mkdir", counting)
    count = site.write_site(Report([run], cache_runs=True), out)
    monkeypatch.setattr(os, "mkdir", real)
    directories = {p.parent for p in out.rglob("*") if p.is_file()}
    assert count > 4 * len(directories)
    # a few times at most (``mkdir(parents=True)`` tries a directory, makes its parent, tries again; the root is made
    # before the pages, and before the index), not once per page (10 pages in a problem run's directory here)
    assert max(Counter(made).values()) <= 3, Counter(made)


def test_a_page_replaces_a_link_in_its_place_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    out = tmp_path / "site"
    site._write(out, "runs/1/first.html", b"first")  # the directory checked and made
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"outside the report")
    (out / "runs/1/page.html").symlink_to(outside)
    site._write(out, "runs/1/page.html", b"the page")
    site._write(out, "runs/1/first.html", b"again")
    assert outside.read_bytes() == b"outside the report"
    page = out / "runs/1/page.html"
    assert not page.is_symlink() and page.read_bytes() == b"the page"
    assert (out / "runs/1/first.html").read_bytes() == b"again"
    assert sorted(p.name for p in (out / "runs/1").iterdir()) == ["first.html", "page.html"]


def test_a_failed_page_leaves_no_temporary_file(tmp_path: Path) -> None:
    out = tmp_path / "site"
    site._write(out, "runs/1/first.html", b"first")
    (out / "runs/1/page.html").mkdir()  # a directory where the page goes: the rename fails
    with pytest.raises(OSError):
        site._write(out, "runs/1/page.html", b"the page")
    assert sorted(p.name for p in (out / "runs/1").iterdir()) == ["first.html", "page.html"]


def test_the_collector_runs_once_per_problem_run(tmp_path: Path) -> None:
    """While pages are written, no automatic collection (each went through every object the run read); one
    collection of the young objects after each problem run; the collector as it was afterwards."""
    import gc

    run = synthetic_run(tmp_path / "run", checkpoints=12, steps=20, per_problem=3)
    report = Report([run], cache_runs=True)
    report.runs()
    collections: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.collect()
    gc.callbacks.append(record)
    try:
        written = site._write_pages(report, tmp_path / "site", report.problem_runs())
    finally:
        gc.callbacks.remove(record)
    assert written == 4 * (3 + 2)  # per problem run: 3 checkpoint pages, its page, its search shard
    assert collections == [1, 1, 1, 1]
    assert gc.isenabled()


def test_a_problem_run_s_checkpoints_are_found_by_the_run_s_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A problem run's files (its checkpoints read, its page) look its checkpoints up in the run's index by problem:
    a pass over every checkpoint of the run per problem run made a report of 10,000 checkpoints quadratic."""
    from agentrig.report.reader import LoadedRun

    run = synthetic_run(tmp_path / "run", checkpoints=20, steps=2, per_problem=2)
    report = Report([run], cache_runs=True)
    report.runs()
    passes: list[int] = []
    entries = LoadedRun.entries

    def counted(self: LoadedRun) -> list[object]:
        passes.append(1)
        return entries(self)  # type: ignore[return-value]

    monkeypatch.setattr(LoadedRun, "entries", counted)
    jobs = report.problem_runs()
    assert len(jobs) == 10
    for job in jobs:
        assert len(report.problem_files(*job)) == 2 + 2  # its checkpoints' pages, its page, its search shard
    assert len(passes) <= 2, len(passes)  # the index made once (and what the run's first lookup needs)


def test_forked_helpers_inherit_what_the_pages_import(tmp_path: Path) -> None:
    """The process writes its first problem run before it forks: the modules the pages import on first use are
    imported once, not again in every helper. A fresh interpreter, as ``agentrig view`` is: the tests' own has
    imported them already."""
    import subprocess
    import sys

    run = synthetic_run(tmp_path / "run", checkpoints=8, steps=2, per_problem=2)
    code = """
import os, sys
from pathlib import Path
from agentrig.view import site
from agentrig.view.render import Report

LAZY = ("agentrig.view.search", "agentrig.view.quality", "agentrig.view.tries", "agentrig.view.problem_page")
assert not any(name in sys.modules for name in LAZY)
os.cpu_count = lambda: 2
site.PARALLEL_FROM = 2
write_pages = site._write_pages

def noted(report, out, share):
    if share:  # a file per process: what it had imported when it started writing pages
        imported = all(name in sys.modules for name in LAZY)
        Path(sys.argv[3], str(os.getpid())).write_text("yes" if imported else "no")
    return write_pages(report, out, share)

site._write_pages = noted
site.write_site(Report([Path(sys.argv[1])], cache_runs=True), Path(sys.argv[2]))
print(os.getpid())
"""
    notes = tmp_path / "notes"
    notes.mkdir()
    done = subprocess.run([sys.executable, "-c", code, str(run), str(tmp_path / "site"), str(notes)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    parent = done.stdout.split()[-1]
    helpers = [p.read_text() for p in notes.iterdir() if p.name != parent]
    assert helpers == ["yes"], helpers  # one helper (two writers), the modules imported before its fork
    assert (tmp_path / "site" / "runs" / "1" / "problem_0003" / "checkpoint_2.html").is_file()
