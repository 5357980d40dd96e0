"""Where each page of the report lives, relative to the report's root (served or on disk)."""

from __future__ import annotations

from urllib.parse import quote

INDEX = "index.html"
ASSETS = "assets"
STEPS_PER_PAGE = 400


def checkpoint_page(run: int, problem: str, checkpoint: str, part: int = 1) -> str:
    """``runs/<run>/<problem>/<checkpoint>.html`` (``.p<part>.html`` for later parts of long trajectories)."""
    suffix = "" if part == 1 else f".p{part}"
    return f"runs/{run}/{quote(problem, safe='')}/{quote(checkpoint, safe='')}{suffix}.html"


def root_prefix(page: str) -> str:
    """The relative path from ``page`` back to the report's root (``../../../`` for a checkpoint page)."""
    return "../" * page.count("/")
