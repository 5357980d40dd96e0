"""``agentrig compare RUN_DIR RUN_DIR... [--json]``: runs side by side, verdict changes first, then each run
tested against the first (intervals, p-values, cost per pass, pass rate at equal cost)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agentrig.cli.output import CLIError, say


def add_parser(subparsers: Any) -> None:
    """Add the ``compare`` command."""
    parser = subparsers.add_parser(
        "compare",
        help="runs side by side: verdicts, score, steps, tokens, cost, time",
        description="Compare runs checkpoint by checkpoint (the first run is the baseline); checkpoints whose "
        "verdict changed are listed first, regressions before fixes.",
    )
    parser.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR", help="two or more run directories")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument(
        "--budget-unit", choices=["usd", "tokens"], default=None,
        help="the unit of the equal-cost cut: dollars (the default when every cost is known) or tokens",
    )
    parser.add_argument(
        "--budget", default=None, metavar="AMOUNT",
        help="cut both runs at this budget per problem (in --budget-unit) for the pass rate at equal cost; "
        "default: each problem's cheaper spend",
    )
    from agentrig.cli.show import add_reduce_option

    add_reduce_option(parser)
    parser.set_defaults(handler=compare_command)


def budget_amount(text: str | None) -> float | None:
    """``--budget``: a positive, finite amount; a one-line usage error otherwise."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise CLIError(f"--budget {text}: must be a positive amount (dollars, or tokens with --budget-unit tokens, "
                       "per problem)", status=2)
    return value


def compare_command(args: argparse.Namespace) -> int:
    """Read every run, print the comparison."""
    from agentrig.cli.output import print_table, warning_line
    from agentrig.cli.show import check_reduce_applies, open_run_or_exit, reducer_or_exit
    from agentrig.report.compare import compare
    from agentrig.report.metrics import metric_value, metrics_text
    from agentrig.report.summary import informative_score, money, seconds, tokens_text

    if len(args.run_dirs) < 2:
        raise CLIError("compare needs at least two run directories (agentrig compare RUN_DIR RUN_DIR...)", status=2)
    budget = budget_amount(args.budget)
    reduce = reducer_or_exit(args.reduce)
    runs = [open_run_or_exit(path) for path in args.run_dirs]
    check_reduce_applies(reduce, runs)
    result = compare(runs, budget_unit=args.budget_unit, budget=budget)
    if args.json:
        print(result.model_dump_json(indent=2))
        return 0
    say("runs:")
    for run in result.runs:
        say(f"  [{run.index}] {run.run_id}: agent {run.agent}, model {run.model}, {run.status} ({run.run_dir})")
    say("verdict changes against [1]:" if result.changes else "verdict changes against [1]: none")
    for change in result.changes:
        say(f"  {change.kind:<10} {change.problem}/{change.checkpoint}: {change.before} [1] -> {change.after} [{change.run}]")
    with_score = any(c is not None and informative_score(c) for item in result.checkpoints for c in item.cells)
    with_metrics = bool(result.metrics)  # rewards of several metrics: each beside the score
    headers = (["problem", "checkpoint", "run", "result"] + (["score"] if with_score else [])
               + (["metrics"] if with_metrics else []) + ["steps", "tokens", "cost", "time"])
    rows: list[list[Any]] = []
    for item in result.checkpoints:
        for index, cell in enumerate(item.cells, 1):
            first = index == 1
            lead = [item.problem if first else "", item.checkpoint if first else "", f"[{index}]"]
            if cell is None:
                rows.append(lead + ["missing"] + ([""] if with_score else []) + ([""] if with_metrics else []) + ["", "", "", ""])
                continue
            finished = cell.steps is not None
            rows.append(lead + [cell.status] + ([f"{cell.score:.2f}" if cell.score is not None else ""] if with_score else [])
                        + ([metrics_text(cell.metrics)] if with_metrics else [])
                        + [cell.steps if finished else "", tokens_text(cell.tokens),
                           money(cell.cost) if finished else "", seconds(cell.elapsed)])
    if rows:
        print_table(headers, rows)
    totals_rows = []
    for run in result.runs:
        t = run.totals
        totals_rows.append([
            f"[{run.index}]", t.finished, t.passed, t.failed, t.errors,
            "" if run.pass_rate is None else f"{run.pass_rate:.0%}",
            "" if t.score is None else f"{t.score:.2f}",
            money(t.cost), tokens_text(t.tokens), t.steps, seconds(t.elapsed),
        ])
    say("totals:")
    print_table(["run", "checkpoints", "passed", "failed", "errors", "pass rate", "score", "cost", "tokens", "steps", "time"],
                totals_rows)
    if with_metrics:
        say("metric means (over each run's judged checkpoints; a missing metric counts 0, as Harbor's mean):")
        print_table(["run", "checkpoints", *result.metrics], [
            [f"[{run.index}]", run.metric_means.checkpoints if run.metric_means else 0,
             *(metric_value(run.metric_means.means[name]) if run.metric_means else "" for name in result.metrics)]
            for run in result.runs
        ])
    print_quality(result)
    print_statistics(result, reduce)
    for run in runs:
        for notice in run.notices:
            warning_line(f"{run.root}: {notice}")
    return 0


def print_quality(result: Any) -> None:
    """The runs' code quality side by side with the differences, when any run measured it; a warning line per
    ``quality.json`` that could not be read."""
    from agentrig.cli.output import print_table, warning_line
    from agentrig.report.quality_text import comparison_heading, comparison_table

    quality = result.quality
    if quality is None:
        return
    if quality.problems:
        say(comparison_heading(quality))
        print_table(*comparison_table(quality, [run.index for run in result.runs]))
    else:
        say("code quality: no problem was measured in every run that has figures")
    for notice in quality.notices:
        warning_line(notice)


def print_statistics(result: Any, reduce: str | None = None) -> None:
    """Each run's pass@k line and interval (``--attempts``), then each run tested against the first."""
    from agentrig.report.passk import pass_at_k_lines
    from agentrig.report.significance_text import comparison_lines, method_line, pass_at_k_interval_line

    for run in result.runs:
        if run.pass_at_k is not None:
            say(f"[{run.index}] " + pass_at_k_lines(run.pass_at_k, reduce=reduce)[0])
            if run.pass_at_k_interval is not None:
                say(pass_at_k_interval_line(run.index, run.pass_at_k_interval))
    for item in result.statistics:
        for line in comparison_lines(item):
            say(line)
    if result.statistics:
        say(method_line(result.method))
