"""The code-quality figures as text: ``show``'s totals line, its table per checkpoint and its worst-growing
functions, one checkpoint's section, and ``compare``'s table of runs side by side."""

from __future__ import annotations

from typing import Any

from agentrig.formatting import plural
from agentrig.report.quality import BY_KEY, HEADLINES, ProblemQuality, QualityPoint, QualityTotals
from agentrig.report.quality_compare import QualityComparison
from agentrig.report.quality_growth import FunctionGrowth

#: Column titles of the table per checkpoint.
SHORT = {"loc": "loc", "lint": "lint", "functions": "functions", "cc_mean": "CC mean", "cc_max": "CC max",
         "high_cc": "CC>10", "nesting": "nesting", "duplicated": "dup lines", "patterns": "patterns",
         "wrappers": "wrappers", "single_use": "single-ref", "erosion": "erosion", "verbosity": "verbosity",
         "high_cc_mass": "CC>10 mass %"}


def number(key: str, value: float) -> str:
    """``2,129``; a mean or score to two decimals (``2.85``)."""
    if BY_KEY[key].combine in ("mean", "average"):
        return f"{value:.2f}"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


def change(key: str, value: float) -> str:
    """``+230``, ``-3``, ``+0.85``, ``±0``."""
    if abs(value) < 0.005:
        return "±0"
    sign = "+" if value > 0 else "-"
    return sign + number(key, abs(value))


#: The figures of the one-line totals (every figure is in the tables and in ``--json``).
TOTALS_KEYS = ("loc", "lint", "cc_mean", "cc_max", "nesting", "duplicated", "erosion", "verbosity")


def totals_line(totals: QualityTotals) -> str:
    """``code quality at the last checkpoint of 2 problems (change over the run): lines of code: 412 (+230), ...``."""
    parts = [f"{BY_KEY[key].label}: {number(key, totals.final[key])}"
             + (f" ({change(key, totals.growth[key])})" if key in totals.growth else "")
             for key in TOTALS_KEYS if key in totals.final]
    where = plural(totals.problems, "problem")
    return f"code quality at the last checkpoint of {where} (change over the run): " + (", ".join(parts) or "no figures")


def failure_lines(problems: list[ProblemQuality]) -> list[str]:
    """One line per distinct metric failure over the measured checkpoints, with how many it hit
    (``metric failed at 2 checkpoints: size: radon.raw is not installed: ...``)."""
    counts: dict[str, int] = {}
    for problem in problems:
        for point in problem.checkpoints:
            for line in point.failed:
                counts[line] = counts.get(line, 0) + 1
    return [f"metric failed at {plural(count, 'checkpoint')}: {line}" for line, count in counts.items()]


def point_table(problems: list[ProblemQuality]) -> tuple[list[str], list[list[Any]]]:
    """Headers and rows of the figures per measured checkpoint (with the change since the previous one)."""
    keys = [h.key for h in HEADLINES if any(h.key in c.figures for p in problems for c in p.checkpoints)]
    several = len(problems) > 1
    headers = (["problem"] if several else []) + ["checkpoint"] + [SHORT[k] for k in keys]
    rows: list[list[Any]] = []
    for problem in problems:
        for point in problem.checkpoints:
            cells: list[Any] = [problem.problem] if several else []
            cells.append(point.checkpoint)
            for key in keys:
                value = point.figures.get(key)
                delta = (point.delta or {}).get(key)
                text = "" if value is None else number(key, value)
                if value is not None and delta is not None and abs(delta) >= 0.005:
                    text += f" ({change(key, delta)})"
                cells.append(text)
            rows.append(cells)
    return headers, rows


def growth_lines(growing: list[FunctionGrowth], where: bool = True) -> list[str]:
    """One line per function: ``  roman/checkpoint_3 (since checkpoint_2): app.py:parse  CC 3 -> 11 (+8), ...``."""
    return [("  " + (f"{g.problem}/{g.checkpoint} (since {g.previous}): " if where else "") + g.text()) for g in growing]


def checkpoint_lines(point: QualityPoint) -> list[str]:
    """``show RUN PROBLEM/CHECKPOINT``'s code-quality section: each figure with its change, failed metrics,
    the functions that grew most."""
    since = f" since {point.previous}" if point.previous else ""
    out = [f"== code quality (change{since})" if point.delta is not None else "== code quality"]
    figures = []
    for key, value in point.figures.items():
        delta = (point.delta or {}).get(key)
        figures.append(f"{BY_KEY[key].label}: {number(key, value)}" + (f" ({change(key, delta)})" if delta is not None else ""))
    out.append("    " + (", ".join(figures) or "no figures"))
    out += [f"    failed: {line}" for line in point.failed]
    if point.growing:
        out.append(f"    functions that grew most{since}:")
        out += ["    " + line for line in growth_lines(point.growing, where=False)]
    return out


def comparison_table(comparison: QualityComparison, indices: list[int]) -> tuple[list[str], list[list[Any]]]:
    """Headers and rows of ``compare``'s code-quality table: one row per figure, each run's final figure with
    its change over the run, and each later run's difference from the first (run ``indices[0]``)."""
    runs = comparison.runs
    keys = [h.key for h in HEADLINES if any(t is not None and h.key in t.final for t in runs)]
    headers = ["figure"] + [f"[{i}]" for i in indices] + [f"[{i}] - [{indices[0]}]" for i in indices[1:]]
    rows: list[list[Any]] = []
    for key in keys:
        cells: list[Any] = [BY_KEY[key].label]
        for totals in runs:
            value = totals.final.get(key) if totals is not None else None
            growth = totals.growth.get(key) if totals is not None else None
            cells.append("" if value is None else number(key, value) + (f" ({change(key, growth)})" if growth is not None else ""))
        for difference in comparison.difference:
            cells.append(change(key, difference[key]) if difference is not None and key in difference else "")
        rows.append(cells)
    return headers, rows


def comparison_heading(comparison: QualityComparison) -> str:
    """``code quality at the last checkpoint of the 2 problems every measured run has (change over each run):``."""
    return (f"code quality at the last checkpoint of the {plural(len(comparison.problems), 'problem')} every measured"
            " run has (change over each run):")
