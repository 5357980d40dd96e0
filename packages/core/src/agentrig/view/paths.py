"""Where each page of the report lives, relative to the report's root (served or on disk)."""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import quote as _quote, quote_plus

INDEX = "index.html"
ASSETS = "assets"
STEPS_PER_PAGE = 400


@lru_cache(maxsize=4096)
def quote(segment: str, safe: str = "") -> str:
    """``segment`` quoted for a page's path (:func:`urllib.parse.quote`), each name once: a report spells the same
    problem and checkpoint names in thousands of links."""
    return _quote(segment, safe=safe)


def checkpoint_page(run: int, problem: str, checkpoint: str, part: int = 1) -> str:
    """``runs/<run>/<problem>/<checkpoint>.html`` (``.p<part>.html`` for later parts of long trajectories)."""
    suffix = "" if part == 1 else f".p{part}"
    return f"runs/{run}/{quote(problem_segment(problem), safe='')}/{quote(checkpoint, safe='')}{suffix}.html"


def problem_page(run: int, problem: str) -> str:
    """``runs/<run>/<problem>.html``: every checkpoint of one problem run, in order."""
    return f"runs/{run}/{quote(problem_segment(problem), safe='')}.html"


SEARCH = "search.html"


@lru_cache(maxsize=4096)
def _form_value(value: str) -> str:
    return quote_plus(value)


def search_link(run: int, problem: str, checkpoint: str | None = None) -> str:
    """``search.html#run=<run>&problem=<problem>[&checkpoint=<checkpoint>]``: the search page set to one problem run
    (or one checkpoint), as :func:`urllib.parse.urlencode` spells it (each name quoted once per report)."""
    link = f"{SEARCH}#run={run}&problem={_form_value(problem)}"
    return link if checkpoint is None else f"{link}&checkpoint={_form_value(checkpoint)}"


def search_shard(run: int, problem: str) -> str:
    """``search/<run>/<problem>.js``: the searchable text of one problem run's trajectories."""
    return f"search/{run}/{quote(problem_segment(problem), safe='')}.js"


def problem_segment(problem: str) -> str:
    """The path segment of a problem run: ``<problem>~attempt_<i>`` for an attempt (one segment, as
    problem names never hold ``~``)."""
    return problem.replace("/", "~")


def problem_of_segment(segment: str) -> str:
    """The problem run a segment of :func:`problem_segment` names."""
    return segment.replace("~", "/")


def root_prefix(page: str) -> str:
    """The relative path from ``page`` back to the report's root (``../../../`` for a checkpoint page)."""
    return "../" * page.count("/")
