"""``agentrig evaluate RUN_DIR [PROBLEM[/CHECKPOINT]] [--policy P]``: re-evaluate recorded snapshots."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agentrig.cli.exits import ExitStatus
from agentrig.cli.output import CLIError
from agentrig.cli.rerun_options import add_rerun_options, announcer, rerun_request
from agentrig.cli.test_options import add_test_time_options
from agentrig.formatting import plural


def add_parser(subparsers: Any) -> None:
    """Add the ``evaluate`` command."""
    parser = subparsers.add_parser(
        "evaluate",
        help="re-run the evaluation of recorded snapshots, without the agent",
        description="Evaluate the finished checkpoints of a run again from their recorded snapshots, with the "
        "problems' tests as they are now (after a test fix) or under another pass policy. Each new evaluation is "
        "written beside the old ones as CHECKPOINT/evaluations/<n>.json (evaluation.json is never rewritten); the "
        "checkpoints whose verdict changed are printed.",
    )
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a run directory (e.g. runs/latest)")
    parser.add_argument(
        "target", nargs="?", metavar="PROBLEM[/CHECKPOINT]",
        help="only this problem, or one checkpoint (PROBLEM/attempt_<i>[/CHECKPOINT] for one attempt)",
    )
    parser.add_argument(
        "--policy", "--pass-policy", dest="policy", metavar="POLICY",
        help="the pass policy to decide with (all, score>=0.5, ...); default: the one the run used",
    )
    parser.add_argument(
        "--metrics", nargs="?", const="", default=None, metavar="NAME,...",
        help="measure the recorded snapshots' code quality into CHECKPOINT/quality.json instead of running the "
        "tests (default: every installed metric; `agentrig plugins` lists them)",
    )
    add_test_time_options(parser, test_timeout_default=None)
    add_rerun_options(parser, "the snapshots' code and the tests")
    parser.set_defaults(handler=evaluate_command)


def _metrics_command(args: argparse.Namespace) -> int:
    """``--metrics``: write quality.json per selected checkpoint and print one line each; 0, 2 (before anything
    is measured) when a metric's tool is missing, 3 when a metric failed (its record says why; figures a
    ``quality.json`` had already are kept, not replaced by the failure)."""
    from agentrig.boundary import BoundaryError
    from agentrig.cli.output import warning_line
    from agentrig.errors import UnknownPluginError
    from agentrig.metrics.compute import metric_names
    from agentrig.metrics.records import QualityRecord
    from agentrig.metrics.remeasure import remeasure
    from agentrig.run.reevaluate import EvaluateError

    asked = [n.strip() for n in args.metrics.split(",") if n.strip()] or None
    try:
        names = metric_names(asked, source="--metrics")
    except UnknownPluginError as exc:
        raise CLIError(str(exc), status=2) from None
    from agentrig.metrics.preflight import unavailable_line, unavailable_metrics

    missing = unavailable_metrics(names)
    if missing:
        raise CLIError(f"--metrics: {unavailable_line(missing)}", status=2)
    kept: list[str] = []

    def keep(where: str, failure: str) -> None:
        kept.append(failure)
        print(f"{where}: failed: {failure}; the figures quality.json had are kept", flush=True)

    def report(name: str, quality: QualityRecord) -> None:
        failed = [m.error or n for n, m in quality.metrics.items() if m.status == "failed"]
        print(f"{name}: {quality.files} files, {len(quality.metrics) - len(failed)} metrics in {quality.seconds:.2f} s"
              + "".join(f"; failed: {line}" for line in failed), flush=True)

    try:
        measured = remeasure(args.run_dir, args.target, names, on_result=report, on_notice=warning_line, on_kept=keep)
    except (EvaluateError, BoundaryError) as exc:
        raise CLIError(str(exc), status=2) from None
    print(f"{len(measured)} checkpoints measured: quality.json written")
    failed = kept or any(m.status == "failed" for q in measured for m in q.metrics.values())
    return ExitStatus.ERROR if failed else ExitStatus.OK


def evaluate_command(args: argparse.Namespace) -> int:
    """Evaluate again; print every changed verdict and a count. The exit status is that of the new
    verdicts (:func:`~agentrig.cli.exits.checkpoints_status`): 3 when an evaluation could not run,
    1 when a checkpoint failed, else 0."""
    from agentrig.boundary import BoundaryError, positive_finite
    from agentrig.cli.exits import checkpoints_status
    from agentrig.cli.output import warning_line
    from agentrig.run.problems import ProblemError
    from agentrig.run.reevaluate import EvaluateError, Reevaluation, reevaluate

    if args.metrics is not None:
        return _metrics_command(args)
    request = rerun_request(args)
    for value, option in ((args.test_timeout, "--test-timeout"), (args.test_session_timeout, "--test-session-timeout")):
        if value is not None:
            try:
                positive_finite(value, option)
            except BoundaryError as exc:
                raise CLIError(str(exc), status=2) from None

    def report(outcome: Reevaluation) -> None:
        name = f"{outcome.unit}/{outcome.checkpoint}"
        if outcome.changed:
            print(f"{name}: {outcome.before} -> {outcome.after} ({outcome.file}; was {outcome.before_file})", flush=True)

    try:
        outcomes = reevaluate(
            args.run_dir, args.target, args.policy, timeout=args.test_timeout,
            session_timeout=args.test_session_timeout, on_result=report, on_notice=warning_line,
            request=request, on_runtime=announcer(),
        )
    except (EvaluateError, ProblemError, BoundaryError) as exc:
        raise CLIError(str(exc), status=2) from None
    changed = sum(o.changed for o in outcomes)
    counts = {v: sum(o.after == v for o in outcomes) for v in ("passed", "failed", "error", "not_evaluated")}
    parts = [f"{n} {v.replace('_', ' ')}" for v, n in counts.items() if n]
    print(f"{plural(len(outcomes), 'checkpoint')} evaluated again: {', '.join(parts)}; {changed} changed verdict")
    errors = [o for o in outcomes if o.after == "error"]
    for outcome in errors[:3]:
        print(f"{outcome.unit}/{outcome.checkpoint}: evaluation failed: {outcome.evaluation.error or 'infrastructure failure'}")
    return checkpoints_status((o.after, False) for o in outcomes)
