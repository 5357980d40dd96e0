"""The one rule for tests that need more than Python (Docker, Chromium, bubblewrap, a real model):
skipped when their prerequisite is missing, failed when ``CI`` is set (CI installs all of it)."""

from __future__ import annotations

import os

import pytest


def require(problem: str | None, what: str) -> None:
    """Nothing when ``problem`` is ``None``; else fail the current test under ``CI``
    (``"CI is set but {what}: {problem}"``) or skip it (``"{problem}"``)."""
    if problem is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI is set but {what}: {problem}", pytrace=False)
    pytest.skip(problem)
