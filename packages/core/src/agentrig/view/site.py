"""Writing the report as static files that open from disk: no server, no network.

The problem runs' pages are independent of each other: a large report (at least :data:`PARALLEL_FROM`
problem runs) is written by the process and up to ``os.cpu_count() - 1`` forked helpers, each writing
the pages of a share of the problem runs; the search page and the index are written last, by the
process itself.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from agentrig.atomic import write_bytes_atomic
from agentrig.boundary import guard
from agentrig.view.paths import ASSETS, INDEX, SEARCH
from agentrig.view.render import ASSET_FILES, Report

#: The fewest problem runs worth forking helpers for (below, the pages take less than the forks).
PARALLEL_FROM = 16
#: The most processes writing pages at once.
MAX_WRITERS = 4

#: The templates of a problem run's pages, their includes too (an include is compiled on its first use, in
#: every helper that had not had it compiled before the fork).
PAGE_TEMPLATES = ("base.html", "checkpoint.html", "problem.html", "quality_checkpoint.html", "quality_problem.html",
                  "quality_growth.html", "quality_plots.html")

#: Problem runs, ``(run index, problem run)``: a helper's share of the pages.
Share = list[tuple[int, str]]


#: The directories of the report already checked by :func:`guard` (and made): ``(out, directory as the page's path
#: spells it)`` to the directory resolved. A report writes hundreds of pages per directory; resolving each page's
#: directory again was a fifth of the time spent writing files.
_CHECKED: dict[tuple[Path, str], str] = {}


def _replace_file(directory: str, name: str, body: bytes) -> None:
    """Replace the file ``name`` of ``directory`` with ``body`` in one step, as
    :func:`~agentrig.atomic.write_bytes_atomic` does (a temporary file beside it, renamed over it: a link there
    is replaced, never followed), in four system calls rather than its ten (it makes the directory, draws a
    random name, checks the mode to keep): a report writes a file per page, and those calls were a fifth of its
    writing time."""
    path = f"{directory}{os.sep}{name}"
    tmp = f"{directory}{os.sep}.{name[:200]}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    except FileExistsError:  # left by a writer killed outright whose process id this one has now
        write_bytes_atomic(Path(path), body, sync=False)
        return
    try:
        try:
            view = memoryview(body)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _write(out: Path, page: str, body: bytes, *, sync: bool = False) -> None:
    """Write ``body`` at ``page`` (a report path) under ``out``; a path that would leave ``out`` is
    refused (:class:`~agentrig.boundary.BoundaryError`): names read back are checked when the run is
    read, this is the second line of defence.

    Every file is replaced in one step; only the index is synced to disk (``sync``): the pages are
    made again by writing the report again, and an fsync per page was a third of the writing time."""
    head, _, name = page.rpartition("/")
    name = unquote(name)
    directory = _CHECKED.get((out, head))
    if directory is None or name in ("", ".", "..") or "/" in name:  # a name that is not one component: checked
        path = guard(out, out.joinpath(*(unquote(part) for part in page.split("/"))), "write")
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.name == name:  # one component: its directory is the page's, as the page spells it
            _CHECKED[(out, head)] = str(path.parent)
        directory, name = str(path.parent), path.name
    if sync:
        write_bytes_atomic(Path(directory, name), body, sync=True)
    else:
        _replace_file(directory, name, body)


def _write_pages(report: Report, out: Path, share: Share) -> int:
    """Write every file of the problem runs of ``share`` (their checkpoint pages, problem page and search
    shard); the number of files written.

    The collector runs once per problem run, on the young objects only: left to run on its own, it went
    through every object the run read, again and again, as each trajectory's steps were read and let go
    (a tenth of the writing time). What a problem run's pages leave is freed by its reference counts."""
    count = 0
    automatic = gc.isenabled()
    gc.disable()
    try:
        for run_index, problem in share:
            for page, response in report.problem_files(run_index, problem):
                _write(out, page, response.body)
                count += 1
            gc.collect(1)
    finally:
        if automatic:
            gc.enable()
    return count


def _helper(report: Report, out: Path, share: Share, pipe: Any) -> None:
    """A forked helper's whole life: its share of the pages, then ``(files, None)`` or ``(0, error)``."""
    try:
        pipe.send((_write_pages(report, out, share), None))
    except BaseException as exc:
        try:
            pipe.send((0, exc))
        except Exception:  # an error that cannot be pickled: its text
            pipe.send((0, RuntimeError(str(exc))))
    finally:
        pipe.close()


def _writers(jobs: int) -> int:
    if jobs < PARALLEL_FROM or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(MAX_WRITERS, os.cpu_count() or 1))


def _write_all_pages(report: Report, out: Path, jobs: Share) -> int:
    """Every page of the problem runs of ``jobs``: by this process alone, or shared with forked helpers (which see
    the runs as this process read them). A helper's error is raised here; no helper outlives the call."""
    writers = _writers(len(jobs))
    if writers == 1:
        return _write_pages(report, out, jobs)
    context = multiprocessing.get_context("fork")
    for template in PAGE_TEMPLATES:  # compiled once, not once per helper
        report.template(template)
    # this process's first problem run written before the fork: what the pages import and cache on first use (the
    # quality, search and tries modules, the run's index by problem) is then done once, not once in every helper
    count = _write_pages(report, out, jobs[:1])
    gc.freeze()  # the helpers share the runs read: their collections would copy every page of memory holding them
    helpers = []
    try:
        for share in (jobs[i::writers] for i in range(1, writers)):
            receive, send = context.Pipe(duplex=False)
            process = context.Process(target=_helper, args=(report, out, share, send), daemon=True)
            process.start()
            send.close()
            helpers.append((process, receive))
        count += _write_pages(report, out, jobs[writers::writers])
        for process, receive in helpers:
            try:
                written, error = receive.recv()
            except EOFError:  # the helper died without a word (killed)
                raise RuntimeError(f"a process writing the report's pages ended with exit code {process.exitcode}") from None
            if error is not None:
                raise error
            count += written
        return count
    finally:
        for process, receive in helpers:
            receive.close()
            if process.is_alive():
                process.terminate()
            process.join()
        gc.unfreeze()


def write_site(report: Report, out: Path) -> int:
    """Write every page and asset of ``report`` under ``out``; returns the number of files written.

    The index is written last, so a report being rewritten is never opened on a
    half-written set of pages.
    """
    out.mkdir(parents=True, exist_ok=True)
    _CHECKED.clear()  # made again, and checked again, for every report written
    count = 0
    for name in ASSET_FILES:
        asset = report.asset(name)
        assert asset is not None
        _write(out, f"{ASSETS}/{name}", asset.body)
        count += 1
    report.runs()  # read once, before any helper is forked
    count += _write_all_pages(report, out, report.problem_runs())
    _write(out, SEARCH, report.search().body)
    count += 1
    _write(out, INDEX, report.index().body, sync=True)
    return count + 1
