"""The report's pages and assets, rendered on request: one renderer for the server and the static writer."""

from __future__ import annotations

import hashlib
import mimetypes
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from agentrig.formatting import plural
from agentrig.pathnames import escape_undecodable
from agentrig.report.reader import CheckpointDetail, LoadedRun, NotARunError, load_checkpoint, open_run
from agentrig.run.layout import RESULTS_FILE, RUN_FILE
from agentrig.view import pages
from agentrig.view.paths import (
    ASSETS,
    INDEX,
    SEARCH,
    checkpoint_page,
    problem_of_segment,
    problem_page,
    root_prefix,
    search_shard,
)

PAGE_CACHE = 64
#: The most digits a number in a page's address may have (a run's index, a part of a trajectory).
ROUTE_DIGITS = 6
_ROUTE_NUMBER = re.compile(rf"[0-9]{{1,{ROUTE_DIGITS}}}", re.ASCII)
_CLOCK = re.compile(r'(<span class="clock" data-since="[0-9.]+">)[^<]*(</span>)')
#: The templates whose output is escaped (by extension); part of the key of a compiled template kept between runs.
AUTOESCAPED = ("html",)
ASSET_FILES = ("app.css", "trajectory.js", "app.js", "pages.css", "quality.js", "search.js",
               "uplot/uPlot.iife.min.js", "uplot/uPlot.min.css", "uplot/LICENSE")


@dataclass
class Response:
    """A rendered page or an asset."""

    body: bytes
    content_type: str
    status: int = 200


def _signature(root: Path) -> tuple[int, ...]:
    """What changes when a run directory's records change: size and mtime of run.json and results.jsonl."""
    out: list[int] = []
    for name in (RUN_FILE, RESULTS_FILE):
        try:
            info = (root / name).stat()
            out += [info.st_size, info.st_mtime_ns, info.st_ino]
        except OSError:
            out += [-1, -1, -1]
    return tuple(out)


def route_number(text: str) -> int | None:
    """The number a path segment of a page's address spells (``runs/<n>/``, ``.p<n>.html``): ASCII digits
    only, at most :data:`ROUTE_DIGITS` of them; ``None`` for anything else (``²``, ``١``, ``+1``, ``1_0``)."""
    return int(text) if _ROUTE_NUMBER.fullmatch(text) else None


class Report:
    """The report of ``runs`` (run directories, in the order given); every page rendered on request.

    Runs are read again for each page (``cache_runs=False``) so that a run in
    progress shows its newest steps; the static writer reads them once.
    """

    def __init__(self, run_dirs: list[Path], *, cache_runs: bool = False) -> None:
        """Check that every directory is a run (:class:`NotARunError` otherwise)."""
        self.run_dirs = [Path(p) for p in run_dirs]
        self.cache_runs = cache_runs
        self._runs: list[LoadedRun] | None = None
        self._read: dict[Path, tuple[tuple[int, ...], LoadedRun]] = {}
        self._pages: dict[tuple[str, tuple[tuple[int, ...], ...]], Response] = {}
        self._templates: dict[str, Any] = {}
        self._runs = [open_run(p) for p in self.run_dirs]  # fails early on a directory that is not a run
        if not cache_runs:
            self._runs = None
        from jinja2 import Environment, PackageLoader, select_autoescape

        from agentrig.view.template_cache import template_cache

        self.env = Environment(
            loader=PackageLoader("agentrig.view", "templates"),
            autoescape=select_autoescape(list(AUTOESCAPED)),
            trim_blocks=True,
            lstrip_blocks=True,
            auto_reload=False,  # package data: not checked on disk again at every page
        )
        self.env.bytecode_cache = template_cache(self.env, AUTOESCAPED)
        self.env.globals["plural"] = plural

    def runs(self) -> list[LoadedRun]:
        """The runs as on disk now (or as read once, with ``cache_runs``).

        A finished run whose ``run.json`` and ``results.jsonl`` are unchanged is
        not read again; a run in progress is read for every page.
        """
        if self._runs is not None:
            return self._runs
        runs = []
        for path in self.run_dirs:
            key = _signature(path)
            cached = self._read.get(path)
            if cached is not None and cached[0] == key and not cached[1].live:
                runs.append(cached[1])
                continue
            run = open_run(path)
            self._read[path] = (key, run)
            runs.append(run)
        if self.cache_runs:
            self._runs = runs
        return runs

    def template(self, name: str) -> Any:
        """The compiled template ``name`` of ``templates/`` (a :class:`jinja2.Template`), looked up once per report:
        the environment's own lookup, at every page, was a tenth of the time spent rendering pages."""
        found = self._templates.get(name)
        if found is None:
            found = self._templates[name] = self.env.get_template(name)
        return found

    # -- pages ------------------------------------------------------------------

    def _page(self, template: str, path: str, title: str, context: dict[str, Any]) -> Response:
        root = root_prefix(path)
        # a file name that is not UTF-8 (the agent's) shows its bytes as \xNN, as `show` does
        main = escape_undecodable(self.template(template).render(root=root, **context))
        # a live run's clock changes at every render and is kept out of the version: the page is
        # replaced when the run's records change, the clock counts on in the browser
        steady = _CLOCK.sub(r"\1\2", main) if 'class="clock"' in main else main
        version = hashlib.sha1(steady.encode("utf-8")).hexdigest()[:16]
        html = self.template("base.html").render(
            root=root, title=title, main=main, version=version, live=context.get("live", False),
            shard=context.get("trajectory_shard"),
        )
        return Response(html.encode("utf-8"), "text/html; charset=utf-8")

    def index(self) -> Response:
        """``index.html``."""
        runs = self.runs()
        title = "agentrig: " + (runs[0].name if len(runs) == 1 else f"{len(runs)} runs")
        from agentrig.view.quality import index_quality

        return self._page("index.html", INDEX, title, {**pages.index_page(runs), "quality": index_quality(runs)})

    def checkpoint(self, run_index: int, problem: str, checkpoint: str, part: int = 1) -> Response | None:
        """One checkpoint's page (``part`` of a long trajectory), ``None`` when the run has no such checkpoint."""
        rendered = self.checkpoint_parts(run_index, problem, checkpoint, only=part)
        return rendered[0][1] if rendered else None

    def checkpoint_parts(self, run_index: int, problem: str, checkpoint: str,
                         only: int | None = None) -> list[tuple[str, Response]]:
        """Every part of a checkpoint's page (or only part ``only``) with its path; reads the checkpoint once."""
        runs = self.runs()
        if not 1 <= run_index <= len(runs):
            return []
        run = runs[run_index - 1]
        found = run.find(problem, checkpoint)
        if not found:
            return []
        return self._checkpoint_parts(run_index, run, load_checkpoint(found[0], parse_steps=False), only)

    def _checkpoint_parts(self, run_index: int, run: LoadedRun, detail: CheckpointDetail,
                          only: int | None = None) -> list[tuple[str, Response]]:
        from agentrig.view.quality import checkpoint_quality_view

        problem, checkpoint = detail.entry.problem, detail.entry.checkpoint
        out: list[tuple[str, Response]] = []
        part = only or 1
        quality = checkpoint_quality_view(run, detail.entry)
        while True:
            context = {**pages.checkpoint_page_context(run_index, run, detail, part), "quality": quality}
            if context["part"] != part:  # past the last part
                return out
            path = checkpoint_page(run_index, problem, checkpoint, part)
            out.append((path, self._page("checkpoint.html", path, f"{problem}/{checkpoint} · {run.name}", context)))
            if only is not None or part >= context["parts"]:
                return out
            part += 1

    def _problem_details(self, run_index: int, problem: str) -> tuple[LoadedRun, list[CheckpointDetail]] | None:
        """The run and the started checkpoints of problem run ``problem``, each read; ``None`` when unknown."""
        runs = self.runs()
        if not 1 <= run_index <= len(runs):
            return None
        run = runs[run_index - 1]
        # the run's index by problem (one pass over the run), not a pass over every checkpoint per problem run
        entries = [e for e in run.find(problem) if e.problem == problem]
        if not entries:
            return None
        return run, [load_checkpoint(e, parse_steps=False) for e in entries if e.state != "pending"]

    def _problem_page(self, run_index: int, run: LoadedRun, problem: str, details: list[CheckpointDetail]) -> Response:
        from agentrig.view.forks import fork_link
        from agentrig.view.problem_page import problem_page_context

        context = problem_page_context(run_index, run, problem, {d.entry.checkpoint: d for d in details})
        context["fork"] = fork_link(run, self.runs())
        from agentrig.view.quality import problem_quality_view

        context["quality"] = problem_quality_view(self.runs(), run_index, problem)
        return self._page("problem.html", problem_page(run_index, problem), f"{problem} · {run.name}", context)

    def problem(self, run_index: int, problem: str) -> Response | None:
        """The page of one problem run (every checkpoint in order), ``None`` when the run has no such problem."""
        found = self._problem_details(run_index, problem)
        return self._problem_page(run_index, found[0], problem, found[1]) if found else None

    def search_shard(self, run_index: int, problem: str) -> Response | None:
        """The search shard of one problem run (:mod:`agentrig.view.search`), ``None`` when unknown."""
        from agentrig.view.search import shard_script

        found = self._problem_details(run_index, problem)
        if found is None:
            return None
        return Response(shard_script(run_index, problem, found[1]).encode("utf-8"), "text/javascript; charset=utf-8")

    def search(self) -> Response:
        """``search.html``: search the trajectories of every run."""
        from agentrig.view.search import search_page_context

        runs = self.runs()
        return self._page("search.html", SEARCH, "search · agentrig", search_page_context(runs))

    def problem_runs(self) -> list[tuple[int, str]]:
        """``(run index, problem run)`` of every problem run with a started checkpoint."""
        seen: dict[tuple[int, str], None] = {}
        for index, problem, _ in self.checkpoints():
            seen.setdefault((index, problem), None)
        return list(seen)

    def problem_files(self, run_index: int, problem: str) -> list[tuple[str, Response]]:
        """Every file of one problem run, each checkpoint read once: its checkpoints' pages (every part),
        the problem page and the search shard."""
        from agentrig.view.search import shard_script

        found = self._problem_details(run_index, problem)
        if found is None:
            return []
        run, details = found
        out = [page for detail in details for page in self._checkpoint_parts(run_index, run, detail)]
        out.append((problem_page(run_index, problem), self._problem_page(run_index, run, problem, details)))
        shard = shard_script(run_index, problem, details).encode("utf-8")
        out.append((search_shard(run_index, problem), Response(shard, "text/javascript; charset=utf-8")))
        return out

    def asset(self, name: str) -> Response | None:
        """A file of ``static/``, ``None`` when the package has no such asset."""
        if name not in ASSET_FILES:
            return None
        data = resources.files("agentrig.view").joinpath("static", *name.split("/")).read_bytes()
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
        if kind.startswith("text/") or kind.endswith("javascript"):
            kind += "; charset=utf-8"
        return Response(data, kind)

    def render(self, path: str) -> Response | None:
        """The page or asset at ``path`` (relative to the report's root), ``None`` when there is none.

        Pages of finished runs are kept once rendered (up to :data:`PAGE_CACHE` of them) until
        a run's records change; a run in progress is rendered afresh for every request.
        """
        path = unquote(path.split("?", 1)[0].split("#", 1)[0]).lstrip("/")
        runs = self.runs()
        if any(run.live for run in runs):
            return self._render(path)
        key = (path, tuple(_signature(p) for p in self.run_dirs))
        cached = self._pages.get(key)
        if cached is None:
            cached = self._render(path)
            if cached is not None:
                if len(self._pages) >= PAGE_CACHE:
                    self._pages.pop(next(iter(self._pages)))
                self._pages[key] = cached
        return cached

    def _render(self, path: str) -> Response | None:
        if path in ("", INDEX):
            return self.index()
        if path.startswith(f"{ASSETS}/"):
            return self.asset(path[len(ASSETS) + 1:])
        if path == SEARCH:
            return self.search()
        parts = path.split("/")
        if len(parts) == 3 and parts[0] in ("runs", "search"):
            return self._render_problem(parts)
        if len(parts) == 4 and parts[0] == "runs" and parts[3].endswith(".html"):
            run_index = route_number(parts[1])
            if run_index is None:
                return None
            name = parts[3][: -len(".html")]
            part = 1
            head, dot, tail = name.rpartition(".p")
            later = route_number(tail) if dot else None
            if later is not None:  # a later part of a long trajectory: .p<n>.html
                name, part = head, later
            return self.checkpoint(run_index, problem_of_segment(parts[2]), name, part)
        return None

    def _render_problem(self, parts: list[str]) -> Response | None:
        """``runs/<n>/<problem>.html`` (the problem page) or ``search/<n>/<problem>.js`` (its search shard)."""
        run_index = route_number(parts[1])
        suffix = ".html" if parts[0] == "runs" else ".js"
        if run_index is None or not parts[2].endswith(suffix):
            return None
        problem = problem_of_segment(parts[2][: -len(suffix)])
        if parts[0] == "runs":
            return self.problem(run_index, problem)
        return self.search_shard(run_index, problem)

    def checkpoints(self) -> list[tuple[int, str, str]]:
        """``(run index, problem, checkpoint)`` of every checkpoint that has a page (started ones)."""
        return [
            (index, entry.problem, entry.checkpoint)
            for index, run in enumerate(self.runs(), 1)
            for entry in run.entries()
            if entry.state != "pending"
        ]


__all__ = ["ASSET_FILES", "NotARunError", "Report", "Response"]
