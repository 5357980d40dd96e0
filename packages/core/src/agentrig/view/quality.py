"""The report's code-quality parts (:mod:`agentrig.report.quality`): per-run totals on the index (side by side
with their differences when several runs are viewed), the erosion plots of each problem (each headline
figure across checkpoints, one line per run that ran the problem), and the functions that grew most on the
problem and checkpoint pages. A run without ``quality.json`` adds nothing to any page.
"""

from __future__ import annotations

from typing import Any

from agentrig.report.quality import HEADLINES, QualityPoint, RunQuality, checkpoint_quality, run_quality
from agentrig.report.quality_compare import compare_quality
from agentrig.report.quality_text import comparison_heading, comparison_table, totals_line
from agentrig.report.reader import CheckpointEntry, LoadedRun

#: The figures drawn, one plot each (a figure no run recorded is not drawn).
PLOTTED = ("loc", "lint", "cc_mean", "cc_max", "nesting", "duplicated", "patterns", "wrappers", "single_use", "erosion",
           "verbosity", "high_cc_mass")


def _labels(runs: list[LoadedRun]) -> tuple[list[str], list[str]]:
    from agentrig.view.pages import short_label

    return ([f"[{i}] {run.agent} · {short_label(run.model)}" for i, run in enumerate(runs, 1)],
            [f"[{i}] {run.agent} · {run.model}" for i, run in enumerate(runs, 1)])


def erosion_data(runs: list[LoadedRun], found: list[RunQuality | None], only: str | None = None) -> dict[str, Any]:
    """The plots' data: per problem run (``only``: that one) the checkpoint positions, the runs that measured
    it (indices from 0) and per figure one list of values per such run (``None`` where not measured)."""
    by_problem: dict[str, dict[int, list[QualityPoint]]] = {}
    for i, quality in enumerate(found):
        for problem in quality.problems if quality is not None else []:
            if only is None or problem.problem == only:
                by_problem.setdefault(problem.problem, {})[i] = problem.checkpoints
    problems = []
    for name, measured in by_problem.items():
        positions = max(point.index for points in measured.values() for point in points)
        xs = list(range(1, positions + 1))
        series: dict[str, list[list[float | None]]] = {}
        for key in PLOTTED:
            if not any(key in point.figures for points in measured.values() for point in points):
                continue
            series[key] = []
            for points in measured.values():
                at = {point.index: point.figures.get(key) for point in points}
                series[key].append([None if at.get(x) is None else round(at[x] or 0.0, 4) for x in xs])
        problems.append({"name": name, "x": xs, "runs": list(measured), "series": series})
    labels, titles = _labels(runs)
    metrics = [{"key": h.key, "label": h.label} for h in HEADLINES if h.key in PLOTTED]
    return {"problems": problems, "metrics": metrics, "labels": labels, "titles": titles}


def index_quality(runs: list[LoadedRun]) -> dict[str, Any] | None:
    """The index's code-quality parts: a totals line per run card (``lines``, ``None`` for a run without
    figures), the runs side by side (several runs), the erosion plots' data; ``None`` when no run has any."""
    from agentrig.view.pages import script_json

    found = [run_quality(run) for run in runs]
    if all(q is None for q in found):
        return None
    context: dict[str, Any] = {
        "lines": [totals_line(q.totals) if q is not None and q.problems else None for q in found],
        "notices": [(i, n) for i, q in enumerate(found, 1) if q is not None for n in q.notices],
        "table": None,
    }
    comparison = compare_quality(runs) if len(runs) > 1 else None
    if comparison is not None and comparison.problems:
        context["heading"] = comparison_heading(comparison)
        context["table"] = comparison_table(comparison, list(range(1, len(runs) + 1)))
    data = erosion_data(runs, found)
    context["problems"] = [p["name"] for p in data["problems"]]
    context["json"] = script_json(data)
    return context


def problem_quality_view(runs: list[LoadedRun], run_index: int, problem: str) -> dict[str, Any] | None:
    """The problem page's parts: the erosion plots of ``problem`` (a line for each run of the report that
    measured it) and per checkpoint the functions that grew most; ``None`` when the run did not measure it."""
    from agentrig.view.pages import script_json

    found = [run_quality(run, problem) if i == run_index else _problem_only(run, problem)
             for i, run in enumerate(runs, 1)]
    own = found[run_index - 1]
    if own is None:
        return None
    points = [point for p in own.problems if p.problem == problem for point in p.checkpoints]
    return {
        "json": script_json(erosion_data(runs, found, only=problem)),
        "growing": {point.checkpoint: point.growing for point in points},
        "notices": own.notices,
        "problems": [problem] if points else [],
    }


def _problem_only(run: LoadedRun, problem: str) -> RunQuality | None:
    """The quality of problem run ``problem`` in another run, if that run has a problem run of that name."""
    return run_quality(run, problem) if any(p.name == problem for p in run.problems) else None


def checkpoint_quality_view(run: LoadedRun, entry: CheckpointEntry) -> dict[str, Any] | None:
    """The checkpoint page's part: its figures with their change and the functions that grew most."""
    from agentrig.report.quality import BY_KEY
    from agentrig.report.quality_text import change, number

    point, notices = checkpoint_quality(run, entry)
    if point is None:
        return {"point": None, "figures": [], "notices": notices} if notices else None
    figures = [(BY_KEY[key].label, number(key, value),
                change(key, point.delta[key]) if point.delta is not None and key in point.delta else "")
               for key, value in point.figures.items()]
    return {"point": point, "figures": figures, "notices": notices}
