"""A checkpoint's earlier tries on its page (``--retries``, ``--retry-errors``): why each was tried again,
how it ended, and its trajectory.

A run directory read back may come from someone else: every file is read
through :func:`agentrig.boundary.read_inside`, and a ``tries`` folder that
leaves the run directory is not listed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentrig.run.layout import CheckpointPaths

#: The steps of one try shown on the checkpoint's page (the file holds them all).
TRY_STEPS_SHOWN = 400


@dataclass
class TryView:
    """One earlier try as its checkpoint's page shows it; ``anchor`` is the id of its trajectory section, whose
    first :data:`TRY_STEPS_SHOWN` steps the page's script draws from ``steps_script``."""

    number: int
    reason: str
    cause: str
    status: str
    stop_reason: str
    cost: float | None
    delay: float | None
    anchor: str
    steps_script: Any = ""


def _inside(run_root: Path, path: Path) -> bool:
    try:
        return path.resolve().is_relative_to(run_root.resolve())
    except OSError:
        return False


def try_views(run_root: Path, paths: CheckpointPaths) -> list[TryView]:
    """The checkpoint's kept tries, oldest first, each with its trajectory (none when the ``tries`` folder is missing
    or leaves ``run_root``)."""
    if not os.path.lexists(paths.tries):  # no earlier try: what nearly every checkpoint has
        return []
    from agentrig.boundary import read_inside
    from agentrig.report.raw_trajectory import read_raw_trajectory
    from agentrig.run.layout import RunDirectory
    from agentrig.view.steps import trajectory_script

    if not _inside(run_root, paths.tries):
        return []
    views = []
    for record in RunDirectory(run_root).kept_tries(paths):
        raw = read_raw_trajectory(paths.tries / str(record.number) / "trajectory.jsonl", lambda p: read_inside(run_root, p))
        result = record.result
        views.append(TryView(
            number=record.number,
            reason="automatic retry" if record.reason == "retries" else "--retry-errors",
            cause=record.cause,
            status=result.status if result is not None else "",
            stop_reason=(result.stop_reason or "") if result is not None else "",
            cost=result.cost if result is not None else None,
            delay=record.delay,
            anchor=f"try-{record.number}",
            steps_script=trajectory_script(raw, prefix=f"try-{record.number}-step-", limit=TRY_STEPS_SHOWN),
        ))
    return views


__all__ = ["TRY_STEPS_SHOWN", "TryView", "try_views"]
