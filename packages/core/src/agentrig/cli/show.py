"""``agentrig show RUN_DIR [PROBLEM[/CHECKPOINT]] [--json]``: a run's results, or one checkpoint in detail."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agentrig.cli.output import CLIError, say


def add_parser(subparsers: Any) -> None:
    """Add the ``show`` command."""
    parser = subparsers.add_parser(
        "show",
        help="a run's results; one problem's, or one checkpoint in detail",
        description="Print a run's summary table (as at the end of `agentrig run`); with PROBLEM its "
        "checkpoints; with PROBLEM/CHECKPOINT the prompt, usage, evaluation, files changed and trajectory.",
    )
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a run directory (runs/latest is the newest)")
    parser.add_argument("target", nargs="?", metavar="PROBLEM[/CHECKPOINT]", help="one problem, or one checkpoint")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    add_reduce_option(parser)
    parser.set_defaults(handler=show_command)


def add_reduce_option(parser: Any) -> None:
    """``--reduce``: the reducer over attempts that the lines of a run with ``--attempts`` lead with (named
    here without importing the report package: ``agentrig agents list`` builds every parser)."""
    parser.add_argument(
        "--reduce", default=None, metavar="REDUCER",
        help="with --attempts runs: the figure the summary leads with, one of pass@1, pass@k, pass^k, majority, "
        "mean, max (pass^k: all k attempts pass; majority: more than half; mean, max: of the attempts' scores); "
        "default: pass@1 and pass@k. Every reducer is printed, and in --json",
    )


def reducer_or_exit(text: str | None) -> str | None:
    """``--reduce``: one of the reducers; a one-line usage error otherwise."""
    from agentrig.report.passk import REDUCERS

    if text is None or text in REDUCERS:
        return text
    raise CLIError(f"--reduce {text}: not a reducer (one of {', '.join(REDUCERS)})", status=2)


def check_reduce_applies(reduce: str | None, runs: list[Any]) -> None:
    """``--reduce`` reduces attempts: a usage error when none of ``runs`` was run with ``--attempts``."""
    if reduce is not None and not any(run.attempts > 1 for run in runs):
        which = "the run was not" if len(runs) == 1 else "none of the runs was"
        raise CLIError(
            f"--reduce {reduce}: {which} run with --attempts K: there are no attempts to reduce "
            "(drop --reduce, or run again with --attempts 5)",
            status=2,
        )


def open_run_or_exit(path: Path) -> Any:
    """The run in ``path``; a one-line usage error when it is not a run directory."""
    from agentrig.report.reader import NotARunError, open_run

    try:
        return open_run(path)
    except NotARunError as exc:
        raise CLIError(str(exc), status=2) from None


def select(run: Any, target: str) -> tuple[str, str | None]:
    """``(problem, checkpoint or None)`` named by ``target``, checked against the run."""
    problem, _, checkpoint = target.strip("/").partition("/")
    names = [p.name for p in run.problems]
    first, _, rest = checkpoint.partition("/")
    if f"{problem}/{first}" in names:  # PROBLEM/attempt_<i>[/CHECKPOINT] of a run with --attempts
        problem, checkpoint = f"{problem}/{first}", rest
    elif problem in {p.problem for p in run.problems} and checkpoint and len(run.find(problem, checkpoint)) > 1:
        attempts = ", ".join(p.name for p in run.problems if p.problem == problem)
        raise CLIError(f"{target}: the run has several attempts of '{problem}'; name one ({attempts})", status=2)
    names += sorted({p.problem for p in run.problems} - set(names))
    if problem not in names:
        raise CLIError(
            f"{target}: no problem '{problem}' in {run.root} (problems: {', '.join(names) or 'none'})", status=2
        )
    if checkpoint:
        found = run.find(problem, checkpoint)
        if not found:
            known = [e.checkpoint for e in run.find(problem)]
            raise CLIError(
                f"{target}: no checkpoint '{checkpoint}' in problem '{problem}' (checkpoints: {', '.join(known)})",
                status=2,
            )
    return problem, checkpoint or None


def print_run(summary: Any, per_checkpoint: bool = False) -> None:
    """The header, the results table, problem statuses and totals of a run summary; its code quality when
    measured (``per_checkpoint``: with the figures of each checkpoint)."""
    from agentrig.cli.output import print_table, warning_line
    from agentrig.report.metrics import has_several, metrics_text
    from agentrig.report.summary import seconds, table

    state = summary.status + (" (in progress)" if summary.live else "")
    say(f"run {summary.run_id}: agent {summary.agent}, model {summary.model}"
          + (f", runtime {summary.runtime}" if summary.runtime else "") + f" | {state}"
          + (f" | {seconds(summary.elapsed)}" if summary.elapsed else ""))
    fork = summary.fork_line()
    if fork is not None:
        say(fork)
    headers, rows = table(summary.checkpoints)
    if has_several(summary.checkpoints):  # a reward of several metrics: each beside the score
        at = headers.index("score") + 1 if "score" in headers else len(headers)
        headers.insert(at, "metrics")
        for cells, row in zip(rows, summary.checkpoints, strict=True):
            cells.insert(at, metrics_text(row.metrics))
    if rows:
        print_table(headers, rows)
    for problem in summary.problems:
        if problem.status not in ("completed", "unknown"):
            say(f"{problem.name}: {problem.status}" + (f": {problem.error}" if problem.error else ""))
        if problem.score is not None:
            say(f"{problem.name}: score {problem.score:.3f} ({problem.score_rule})")
    print_networks(summary.problems)
    say(summary.totals.line())
    if summary.metric_means is not None:
        say(summary.metric_means.line())
    problems_line = summary.problems_line()
    if problems_line:
        say(problems_line)
    if summary.pass_at_k is not None:
        from agentrig.report.passk import pass_at_k_lines

        for line in pass_at_k_lines(summary.pass_at_k, reduce=summary.reduce):
            say(line)
    if summary.quality is not None:
        print_quality(summary.quality, per_checkpoint)
    say(f"run directory: {summary.run_dir}")
    for notice in summary.notices:
        warning_line(notice)


def print_quality(quality: Any, per_checkpoint: bool) -> None:
    """The code-quality totals line, a warning line per metric failure (a missing tool names its install
    command), the figures per checkpoint (``per_checkpoint``), the functions that grew most, and a warning
    line per ``quality.json`` that could not be read."""
    from agentrig.cli.output import print_table, warning_line
    from agentrig.report.quality_text import failure_lines, growth_lines, point_table, totals_line

    if quality.problems:
        say(totals_line(quality.totals))
    for line in failure_lines(quality.problems):
        warning_line(line)
    if per_checkpoint and quality.problems:
        say("code quality per checkpoint (change since the previous one):")
        print_table(*point_table(quality.problems))
    if quality.worst_growing:
        say("functions that grew most since their previous checkpoint:")
        for line in growth_lines(quality.worst_growing):
            say(line)
    for notice in quality.notices:
        warning_line(notice)


def print_networks(problems: list[Any]) -> None:
    """``network: bridge (a, b); none (c)``: the networks problems' containers had (when recorded),
    then each notice once."""
    from agentrig.cli.output import warning_line

    groups: dict[str, list[str]] = {}
    notices: list[str] = []
    for problem in problems:
        text = problem.network_text()
        if text is not None:
            groups.setdefault(text, []).append(problem.name)
            notices += [n for n in problem.network.notices if n not in notices]
    if not groups:
        return
    if len(groups) == 1 and len(problems) == 1:
        say(f"network: {next(iter(groups))}")
    else:
        shown = "; ".join(
            f"{text} ({', '.join(names[:5])}{f' and {len(names) - 5} more' if len(names) > 5 else ''})"
            for text, names in groups.items()
        )
        say(f"network: {shown}")
    for notice in notices:
        warning_line(notice)


def show_command(args: argparse.Namespace) -> int:
    """Print the run, one problem, or one checkpoint."""
    from agentrig.cli.output import warning_line
    from agentrig.report.summary import RunSummary

    reduce = reducer_or_exit(args.reduce)
    run = open_run_or_exit(args.run_dir)
    check_reduce_applies(reduce, [run])
    problem, checkpoint = select(run, args.target) if args.target else (None, None)
    if checkpoint is None:
        summary = RunSummary.of(run, problem, reduce=reduce)
        if args.json:
            print(summary.model_dump_json(indent=2))
        else:
            print_run(summary, per_checkpoint=problem is not None)
        return 0
    from agentrig.report.quality import checkpoint_quality
    from agentrig.report.reader import load_checkpoint
    from agentrig.report.text import CheckpointReport, checkpoint_text

    entry = run.find(problem, checkpoint)[0]
    detail = load_checkpoint(entry)
    quality, quality_notices = checkpoint_quality(run, entry)
    if args.json:
        report = CheckpointReport.of(detail, quality)
        report.notices += quality_notices
        print(report.model_dump_json(indent=2))
    else:
        say(checkpoint_text(detail, quality))
        for notice in [*run.notices, *quality_notices]:
            warning_line(notice)
    return 0
