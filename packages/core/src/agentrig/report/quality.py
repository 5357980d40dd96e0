"""The code-quality figures of a run read back (each checkpoint's ``quality.json``), as ``show``, ``compare``
and ``view`` present them: the headline figures per checkpoint (the erosion across checkpoints), the
functions that grew most since the previous checkpoint, and per-run totals at each problem's last measured
checkpoint with their growth over the run.

``quality.json`` read back is untrusted: it is read only inside the run directory, size-capped, and
validated tolerantly (:mod:`agentrig.report.tolerant`); a broken one becomes one notice naming it, and
the checkpoint then has no figures. A run without any ``quality.json`` has no :class:`RunQuality`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from agentrig.boundary import shorten
from agentrig.metrics.records import QualityRecord
from agentrig.report.quality_growth import FunctionGrowth, function_table, worst_growing
from agentrig.report.reader import CheckpointEntry, LoadedRun, ProblemEntry

QUALITY_FILE = "quality.json"
#: A ``quality.json`` read back larger than this is left out (with a notice).
MAX_QUALITY_BYTES = 20_000_000
#: How many worst-growing functions are kept per checkpoint, and over a run.
GROWING_PER_CHECKPOINT = 5
GROWING_PER_RUN = 10

Combine = Literal["sum", "max", "mean", "average"]


@dataclass(frozen=True)
class Headline:
    """One figure shown everywhere: ``key`` as reports name it, read from ``metric``'s ``figure``; ``combine``
    says how problems add up (``mean``: weighted by each problem's functions; ``average``: each problem
    alike, as SlopCodeBench averages its scores)."""

    key: str
    metric: str
    figure: str
    label: str
    combine: Combine
    #: The figure's name in records written before it was renamed (read when ``figure`` is absent).
    former: str | None = None


HEADLINES = (
    Headline("loc", "size", "loc", "lines of code", "sum"),
    Headline("lint", "lint", "violations", "lint violations", "sum"),
    Headline("functions", "complexity", "functions", "functions", "sum"),
    Headline("cc_mean", "complexity", "cc_mean", "mean CC", "mean"),
    Headline("cc_max", "complexity", "cc_max", "max CC", "max"),
    Headline("high_cc", "complexity", "high_cc", "functions over CC 10", "sum"),
    Headline("nesting", "complexity", "max_nesting", "max nesting", "max"),
    Headline("duplicated", "duplication", "cloned_lines", "duplicated lines", "sum"),
    Headline("patterns", "patterns", "violations", "AST pattern violations", "sum"),
    Headline("wrappers", "waste", "passthrough_wrappers", "pass-through wrappers", "sum", former="trivial_wrappers"),
    Headline("single_use", "waste", "single_reference_functions", "single-reference functions", "sum",
             former="single_use_functions"),
    Headline("erosion", "slopcode", "erosion", "erosion (SlopCodeBench)", "average"),
    Headline("verbosity", "slopcode", "verbosity", "verbosity (SlopCodeBench)", "average"),
    Headline("high_cc_mass", "slopcode", "mass.high_cc_pct", "% of complexity mass over CC 10", "average"),
)
BY_KEY = {h.key: h for h in HEADLINES}


class QualityPoint(BaseModel):
    """One checkpoint's headline figures (by :data:`HEADLINES` key; a metric not measured or failed has none),
    their change from the previous measured checkpoint, the metrics that failed (one line each) and the
    functions that grew most since the previous checkpoint."""

    problem: str
    checkpoint: str
    index: int
    previous: str | None = None
    figures: dict[str, float] = Field(default_factory=dict)
    delta: dict[str, float] | None = None
    failed: list[str] = Field(default_factory=list)
    growing: list[FunctionGrowth] = Field(default_factory=list)


class ProblemQuality(BaseModel):
    """A problem run's measured checkpoints, in order."""

    problem: str
    checkpoints: list[QualityPoint]


class QualityTotals(BaseModel):
    """Headline figures over ``problems`` problem runs at each one's last measured checkpoint (``final``) and
    their change since each one's first measured checkpoint (``growth``): sums, maxima, or the mean CC
    weighted by functions, as each :class:`Headline` combines."""

    problems: int
    final: dict[str, float] = Field(default_factory=dict)
    growth: dict[str, float] = Field(default_factory=dict)


class RunQuality(BaseModel):
    """``quality`` in ``show --json``: the run's totals, every measured checkpoint by problem run, and the
    functions that grew most over the run."""

    totals: QualityTotals
    problems: list[ProblemQuality]
    worst_growing: list[FunctionGrowth] = Field(default_factory=list)
    notices: list[str] = Field(default_factory=list)


def headline_figures(record: QualityRecord) -> dict[str, float]:
    """The headline figures a record holds (finite ones only: a crafted ``NaN`` is no figure)."""
    out: dict[str, float] = {}
    for headline in HEADLINES:
        result = record.metrics.get(headline.metric)
        value = None
        if result is not None and result.status == "ok":
            value = result.figures.get(headline.figure)
            if value is None and headline.former is not None:
                value = result.figures.get(headline.former)
        if isinstance(value, (int, float)) and math.isfinite(value):
            out[headline.key] = float(value)
    return out


def read_quality_record(run_root: os.PathLike[str] | str, entry: CheckpointEntry) -> tuple[QualityRecord | None, str | None]:
    """A checkpoint's ``quality.json``: ``(record, None)``, ``(None, None)`` when it has none, or
    ``(None, notice)`` naming the file when it cannot be read (outside the run, too large, not a record)."""
    from pathlib import Path

    from agentrig.boundary import BoundaryError, read_inside
    from agentrig.report.tolerant import RecordError, load_record_json

    path = entry.paths.root / QUALITY_FILE
    if not os.path.lexists(path):
        return None, None
    suffix = "its code-quality figures are left out"
    try:
        text = read_inside(Path(run_root), path, limit=MAX_QUALITY_BYTES)
        return load_record_json(QualityRecord, text, str(path)), None
    except (BoundaryError, RecordError) as exc:
        return None, f"{exc}; {suffix}"
    except OSError as exc:
        return None, f"{path}: {exc.strerror or exc}; {suffix}"


def problem_quality(run: LoadedRun, problem: ProblemEntry, notices: list[str]) -> ProblemQuality | None:
    """The measured checkpoints of one problem run (computed once per run read), ``None`` when none was."""
    first = problem.checkpoints[0] if problem.checkpoints else None
    if first is None:
        return None
    cached = first.cache.get("quality")
    if cached is None:
        cached = first.cache["quality"] = _problem_quality(run, problem)
    found, own_notices = cached
    notices += own_notices
    return found


def _problem_quality(run: LoadedRun, problem: ProblemEntry) -> tuple[ProblemQuality | None, list[str]]:
    if not any(os.path.lexists(os.path.join(e.paths.root, QUALITY_FILE)) for e in problem.checkpoints):
        return None, []  # the common case of a run without metrics: one lstat per checkpoint, nothing else
    notices: list[str] = []
    points: list[QualityPoint] = []
    functions: dict[str, dict[tuple[str, str], dict[str, float | int | None]]] = {}
    figures: dict[str, dict[str, float]] = {}
    for entry in problem.checkpoints:
        record, notice = read_quality_record(run.root, entry)
        if notice is not None:
            notices.append(notice)
        if record is None:
            continue
        point = QualityPoint(problem=problem.name, checkpoint=entry.checkpoint, index=entry.index,
                             figures=headline_figures(record),
                             failed=[shorten(m.error or name, 300) for name, m in record.metrics.items() if m.status == "failed"])
        table = function_table(record)
        previous = record.previous if record.previous in figures else (points[-1].checkpoint if points else None)
        if previous is not None:
            point.previous = previous
            before = figures[previous]
            point.delta = {k: v - before[k] for k, v in point.figures.items() if k in before}
            if table is not None and functions.get(previous) is not None:
                point.growing = worst_growing(problem.name, entry.checkpoint, previous, functions[previous], table,
                                              GROWING_PER_CHECKPOINT)
        if table is not None:
            functions[entry.checkpoint] = table
        figures[entry.checkpoint] = point.figures
        points.append(point)
    return (ProblemQuality(problem=problem.name, checkpoints=points) if points else None), notices


def combine(values: Iterable[dict[str, float]]) -> dict[str, float]:
    """Headline figures of several problem runs as one: summed, the largest, the mean CC weighted by
    each one's functions, or a score averaged over them."""
    rows = list(values)
    out: dict[str, float] = {}
    for headline in HEADLINES:
        have = [row for row in rows if headline.key in row]
        if not have:
            continue
        numbers = [row[headline.key] for row in have]
        if headline.combine == "sum":
            out[headline.key] = sum(numbers)
        elif headline.combine == "max":
            out[headline.key] = max(numbers)
        elif headline.combine == "average":
            out[headline.key] = sum(numbers) / len(numbers)
        else:
            weights = [row.get("functions", 0.0) for row in have]
            total = sum(weights)
            out[headline.key] = sum(n * w for n, w in zip(numbers, weights, strict=True)) / total if total else 0.0
    return out


def totals_of(problems: list[ProblemQuality]) -> QualityTotals:
    """The totals of ``problems`` at their last measured checkpoints, and the growth since their first."""
    final = combine(p.checkpoints[-1].figures for p in problems)
    start = combine(p.checkpoints[0].figures for p in problems)
    return QualityTotals(problems=len(problems), final=final,
                         growth={k: v - start[k] for k, v in final.items() if k in start})


def run_quality(run: LoadedRun, problem: str | None = None) -> RunQuality | None:
    """The run's code quality (of one problem if given: a problem run, or every attempt of a problem);
    ``None`` when no selected checkpoint has a ``quality.json`` nor a broken one."""
    notices: list[str] = []
    problems: list[ProblemQuality] = []
    for entry in run.problems if problem is None else run.problems_named(problem):
        found = problem_quality(run, entry, notices)
        if found is not None:
            problems.append(found)
    if not problems and not notices:
        return None
    growing = [g for p in problems for point in p.checkpoints for g in point.growing]
    growing.sort(key=FunctionGrowth.rank)
    return RunQuality(totals=totals_of(problems), problems=problems, worst_growing=growing[:GROWING_PER_RUN],
                      notices=notices)


def checkpoint_quality(run: LoadedRun, entry: CheckpointEntry) -> tuple[QualityPoint | None, list[str]]:
    """One checkpoint's point (``None`` when it has no readable ``quality.json``) and the notices of its problem run."""
    notices: list[str] = []
    problem = next(iter(p for p in run.problems_named(entry.problem) if p.name == entry.problem), None)
    found = problem_quality(run, problem, notices) if problem is not None else None
    point = next((c for c in found.checkpoints if c.checkpoint == entry.checkpoint), None) if found else None
    if not notices:  # the common case (a run without metrics): no path spelled per checkpoint
        return point, []
    own = os.path.join(entry.paths.root, QUALITY_FILE)
    return point, [n for n in notices if n.startswith(own)]


__all__ = [
    "HEADLINES", "FunctionGrowth", "Headline", "ProblemQuality", "QualityPoint", "QualityTotals", "RunQuality",
    "checkpoint_quality", "combine", "headline_figures", "problem_quality", "read_quality_record", "run_quality",
    "totals_of",
]
