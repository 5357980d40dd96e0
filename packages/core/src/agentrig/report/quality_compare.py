"""Runs' code quality side by side (``compare``, and the viewer's index with several runs): each run's totals
over the problem runs that every run with figures measured, and each later run's difference from the first."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentrig.report.quality import QualityTotals, RunQuality, run_quality, totals_of
from agentrig.report.reader import LoadedRun


class QualityComparison(BaseModel):
    """``quality`` in ``compare --json``: ``problems``, the problem runs measured in every run that has
    figures; ``runs``, each run's totals over them (``None``: the run recorded no ``quality.json``);
    ``difference``, for each run after the first, its final figures minus the first run's (``None`` when
    either has none)."""

    problems: list[str]
    runs: list[QualityTotals | None]
    difference: list[dict[str, float] | None] = Field(default_factory=list)
    notices: list[str] = Field(default_factory=list)


def compare_quality(runs: list[LoadedRun]) -> QualityComparison | None:
    """The runs' code quality over their common measured problem runs; ``None`` when no run has any."""
    found: list[RunQuality | None] = [run_quality(run) for run in runs]
    measured = [q for q in found if q is not None]
    if not measured:
        return None
    common = set.intersection(*({p.problem for p in q.problems} for q in measured))
    order = [p.problem for p in measured[0].problems if p.problem in common]
    totals: list[QualityTotals | None] = [
        None if q is None else totals_of([p for p in q.problems if p.problem in common]) for q in found
    ]
    base = totals[0]
    difference: list[dict[str, float] | None] = []
    for other in totals[1:]:
        if base is None or other is None:
            difference.append(None)
            continue
        difference.append({k: v - base.final[k] for k, v in other.final.items() if k in base.final})
    notices = [f"[{i}] {n}" for i, q in enumerate(found, 1) if q is not None for n in q.notices]
    return QualityComparison(problems=order, runs=totals, difference=difference, notices=notices)
