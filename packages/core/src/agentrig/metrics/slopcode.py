"""``slopcode``: SlopCodeBench's headline code-quality figures of a snapshot, by the benchmark's
definitions (its ``metrics/driver.py``, ``checkpoint/mass.py``, ``checkpoint/extractors.py`` and
``summary/aggregators.py``): the composite ``erosion`` and ``verbosity`` scores, its symbol counts,
its cyclomatic-complexity extremes and concentration, complexity mass, waste and ast-grep
violations per category. See ``docs/metrics.md``."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from typing import Any

from agentrig.metrics.interface import Metric, SnapshotSources
from agentrig.metrics.lint import LintMetric
from agentrig.metrics.scb_ast_grep import CATEGORIES, RULES_VARIABLE, categorized_violations, rules_directory
from agentrig.metrics.scb_symbols import Symbol, symbols_of
from agentrig.metrics.scb_waste import file_waste
from agentrig.metrics.tools import require_module

#: Over this complexity a function is *high*; over :data:`EXTREME_CC`, *extreme* (the benchmark's).
HIGH_CC = 10
EXTREME_CC = 30
_TOP = (50, 75, 90)


def gini(values: list[float]) -> float:
    """The Gini coefficient of the positive values (0: even, towards 1: all in one); 0 for fewer than two."""
    positive = sorted(v for v in values if v > 1e-9)
    total = sum(positive)
    if len(positive) <= 1 or total < 1e-9:
        return 0.0
    weighted = sum((rank + 1) * value for rank, value in enumerate(positive))
    return (2 * weighted - (len(positive) + 1) * total) / (len(positive) * total)


def normalized_complexity(cc: list[int], cap: int = 50) -> float:
    """Where the sum of squared complexities lies between an even spread (0) and all of it in one
    function, at least ``cap`` (1)."""
    if not cc:
        return 0.0
    total = sum(cc)
    even = len(cc) * (total / len(cc)) ** 2
    worst = max(total, cap) ** 2
    return 0.0 if worst <= even else (sum(c * c for c in cc) - even) / (worst - even)


def mass(complexity: int, statements: int) -> float:
    """A function's complexity mass: its complexity over 1, times the square root of its statements."""
    return max(0, complexity - 1) * math.sqrt(max(1, statements))


def _top_share(masses: list[float]) -> dict[str, float]:
    """How many of the heaviest functions, and how much mass, make up 50/75/90% of the total."""
    figures: dict[str, float] = {}
    ordered = sorted(masses, reverse=True)
    total = sum(ordered)
    for share in _TOP:
        count, running = 0, 0.0
        if total >= 1e-9:
            for value in ordered:
                count, running = count + 1, running + value
                if running >= total * share / 100:
                    break
        figures[f"mass.top{share}_count"] = float(count)
        figures[f"mass.top{share}_mass"] = round(running, 2)
    return figures


def _function_figures(callables: list[Symbol]) -> dict[str, float]:
    cc = [symbol.complexity for symbol in callables]
    high = [c for c in cc if c > HIGH_CC]
    masses = [mass(s.complexity, s.statements) for s in callables]
    high_mass = sum(m for s, m in zip(callables, masses, strict=True) if s.complexity > HIGH_CC)
    figures = {
        "cc_max": float(max(cc, default=0)), "cc_mean": statistics.mean(cc) if cc else 0.0,
        "cc_std": statistics.stdev(cc) if len(cc) > 1 else 0.0,
        "cc_high_count": float(len(high)), "cc_extreme_count": float(sum(1 for c in cc if c > EXTREME_CC)),
        "high_cc_mean": statistics.mean(high) if high else 0.0,
        "cc_normalized": normalized_complexity(cc), "cc_concentration": gini([float(c) for c in cc]),
        "mass.complexity": round(sum(masses), 2), "mass.complexity_concentration": round(gini(masses), 3),
        "mass.high_cc": round(high_mass, 2),
        "mass.high_cc_pct": round(high_mass / sum(masses) * 100 if sum(masses) > 0 else 0.0, 1),
    }
    figures.update(_top_share(masses))
    return figures


def composite(figures: dict[str, float], rubric_flags: float = 0.0) -> dict[str, float]:
    """``erosion`` and ``verbosity`` of one checkpoint from its figures, as the benchmark's summary
    computes them (``rubric_flags``: its LLM judge's flags; agentrig has none, the benchmark's
    value without a judge). A score the benchmark leaves out (no functions; for verbosity also no
    code) is absent; ``verbosity`` also when the ast-grep violations were not measured."""
    callables = figures["functions"] + figures["methods"]
    scores: dict[str, float] = {}
    if callables > 0:
        high = (figures["cc_high_count"] + 2 * figures["cc_extreme_count"]) / callables
        scores["erosion"] = high + figures.get("lint_per_loc", 0.0)
        if figures["loc"] > 0 and "ast_grep_violations" in figures:
            flags = (figures["ast_grep_violations"] + rubric_flags) / figures["loc"]
            scores["verbosity"] = (flags + figures["trivial_wrappers"] / callables
                                   + figures["single_use_functions"] / callables)
    return scores


class SlopCodeMetric(Metric):
    """Figures (SlopCodeBench's names): ``erosion``, ``verbosity``; ``functions``, ``methods``,
    ``classes``, ``variables``, ``symbols_total``, ``statements``; ``cc_max``, ``cc_mean``,
    ``cc_std``, ``cc_high_count`` (over 10), ``cc_extreme_count`` (over 30), ``high_cc_mean``,
    ``cc_normalized``, ``cc_concentration``; ``mass.complexity``, ``mass.complexity_concentration``,
    ``mass.high_cc``, ``mass.high_cc_pct``, ``mass.top50/75/90_count`` and ``_mass``;
    ``single_use_functions``, ``trivial_wrappers``; ``loc``, ``lint_errors``, ``lint_per_loc``; with
    ast-grep rules (:data:`~agentrig.metrics.scb_ast_grep.RULES_VARIABLE`) ``ast_grep_violations``,
    ``ast_grep_per_loc``, ``sg_<category>_violations``. Details: the heaviest functions, the
    single-use functions and wrappers by file, the rules directory and rule count."""

    def compute(self, sources: SnapshotSources) -> tuple[dict[str, float], dict[str, Any]]:
        """Symbols and waste per file from the syntax trees, loc by radon, lint by ruff, then the scores."""
        raw = require_module("radon.raw", "radon")
        kinds: Counter[str] = Counter()
        callables: list[tuple[str, Symbol]] = []
        statements = single = wrappers = loc = 0
        waste_details: dict[str, dict[str, list[str]]] = {}
        for source in sources.files:
            assert source.tree is not None
            symbols = symbols_of(source.tree, source.text)
            kinds.update(symbol.kind for symbol in symbols)
            statements += sum(symbol.statements for symbol in symbols)
            callables += [(source.path, s) for s in symbols if s.kind in ("function", "method")]
            waste = file_waste(source.tree, source.text, symbols)
            single, wrappers = single + len(waste.single_use), wrappers + len(waste.wrappers)
            if waste.single_use or waste.wrappers:
                waste_details[source.path] = {"single_use_functions": waste.single_use, "trivial_wrappers": waste.wrappers}
            loc += raw.analyze(source.text).sloc
        lint_errors = LintMetric().compute(sources)[0]["violations"]
        figures: dict[str, float] = {
            "functions": float(kinds["function"]), "methods": float(kinds["method"]), "classes": float(kinds["class"]),
            "variables": float(kinds["variable"]), "symbols_total": float(sum(kinds.values())),
            "statements": float(statements), "single_use_functions": float(single), "trivial_wrappers": float(wrappers),
            "loc": float(loc), "lint_errors": lint_errors,
        }
        figures.update(_function_figures([symbol for _, symbol in callables]))
        if loc > 0:
            figures["lint_per_loc"] = lint_errors / loc
        rules = rules_directory()
        details: dict[str, Any] = {"ast_grep_rules": str(rules) if rules else None, "waste": waste_details}
        if rules is not None:
            by_category, checked = categorized_violations(rules, sources)
            violations = float(sum(by_category.values()))
            figures["ast_grep_violations"] = violations
            figures.update({f"sg_{category}_violations": float(by_category[category]) for category in CATEGORIES})
            if loc > 0:
                figures["ast_grep_per_loc"] = violations / loc
            details.update(ast_grep_rules_checked=checked, ast_grep_by_category=dict(sorted(by_category.items())))
        else:
            details["ast_grep_note"] = f"no ast-grep rules ({RULES_VARIABLE} unset): verbosity not computed"
        figures.update(composite(figures))
        heaviest = sorted(callables, key=lambda item: -mass(item[1].complexity, item[1].statements))[:10]
        details["heaviest"] = [{"file": path, "name": s.name, "line": s.line, "cc": s.complexity,
                                "statements": s.statements, "mass": round(mass(s.complexity, s.statements), 2)}
                               for path, s in heaviest]
        return figures, details
