"""``agentrig replay RUN_DIR/PROBLEM/CHECKPOINT``: re-run a recorded checkpoint offline and compare verdicts."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agentrig.cli.output import CLIError
from agentrig.cli.rerun_options import add_rerun_options, announcer, rerun_request
from agentrig.formatting import plural


def add_parser(subparsers: Any) -> None:
    """Add the ``replay`` command."""
    parser = subparsers.add_parser(
        "replay",
        help="re-run recorded checkpoints with their recorded model replies",
        description="Re-run a checkpoint of a run (or every finished checkpoint of a problem or of the run) in a "
        "fresh workspace with the recorded model replies, and report whether each test verdict matches the "
        "recorded one (exit 0: all match; 1: one differs; 3: one ended in an error, in the replay or the record).",
    )
    parser.add_argument(
        "checkpoint", type=Path, metavar="RUN_DIR[/PROBLEM[/CHECKPOINT]]",
        help="a checkpoint directory of a run, a problem's directory, or the run directory",
    )
    parser.add_argument(
        "--output", "-o", type=Path,
        help="keep the replay's trajectory and verdict in this directory (under PROBLEM/CHECKPOINT when replaying several);"
        " a new or empty directory outside the run",
    )
    add_rerun_options(parser, "the recorded model's commands and the tests")
    parser.set_defaults(handler=replay_command)


def _run_root(path: Path) -> Path | None:
    """The run directory ``path`` (a run, a problem, an attempt or a checkpoint of one) lies in."""
    resolved = path.resolve()
    for candidate in (resolved, *list(resolved.parents)[:3]):
        if (candidate / "run.json").is_file():
            return candidate
    return None


def _check_output(output: Path, source: Path) -> None:
    """``--output``: a new or empty directory outside the run being replayed (a replay's files are never
    mixed with another's, nor written into the record it is compared with); created here."""
    from agentrig.boundary import is_inside

    if output.exists() and not output.is_dir():
        raise CLIError(f"--output {output}: exists and is not a directory; give a new or empty directory", status=2)
    run = _run_root(source)
    if run is not None and is_inside(run, output, strict=False):
        raise CLIError(f"--output {output}: inside the run directory {run} being replayed; give a directory outside it",
                       status=2)
    if output.is_dir() and any(output.iterdir()):
        raise CLIError(f"--output {output}: not empty; give a new or empty directory", status=2)
    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CLIError(f"--output {output}: {exc.strerror or exc}", status=2) from None


def _verdict(passed: bool | None) -> str:
    return "no test" if passed is None else ("passed" if passed else "failed")


def replay_command(args: argparse.Namespace) -> int:
    """Replay, print the verdicts; 0 when they all match, 1 when one differs, 3 when a checkpoint has
    no verdict to compare (the replay or the recorded checkpoint ended in an error)."""
    from agentrig.boundary import BoundaryError
    from agentrig.cli.exits import ExitStatus
    from agentrig.cli.output import warning_line
    from agentrig.errors import PluginError, UnknownAgentError
    from agentrig.run.problems import ProblemError
    from agentrig.run.replay import ReplayError, replay_checkpoint, replay_targets
    from agentrig.run.rerun_runtime import RerunRuntimeError

    request = rerun_request(args)
    announce = announcer()
    try:
        targets = replay_targets(args.checkpoint, on_notice=warning_line)
    except ReplayError as exc:
        raise CLIError(str(exc), status=2) from None
    if args.output is not None:
        _check_output(args.output, args.checkpoint)
    matched = errors = 0
    for target in targets:
        keep = args.output
        if keep is not None and len(targets) > 1:
            keep = keep / target.parent.name / target.name
        try:
            outcome = replay_checkpoint(target, keep=keep, request=request, on_runtime=announce)
        except (ReplayError, ProblemError, BoundaryError, RerunRuntimeError) as exc:
            raise CLIError(str(exc), status=2) from None
        except (UnknownAgentError, PluginError) as exc:
            raise CLIError(f"{target}: {exc}") from None
        _report(outcome)
        matched += outcome.matches
        errors += outcome.had_error or outcome.recorded_had_error
    if len(targets) > 1:
        differ = len(targets) - matched - errors
        print(f"{plural(len(targets), 'checkpoint')} replayed: {matched} match, {differ} differ"
              + (f", {errors} without a verdict to compare (an error)" if errors else ""))
    if errors:
        return ExitStatus.ERROR
    return ExitStatus.OK if matched == len(targets) else ExitStatus.FAILED


def _report(outcome: Any) -> None:
    where = f"{outcome.problem}/{outcome.checkpoint}"
    replay = f"replay {_verdict(outcome.passed)}"
    if outcome.had_error:
        replay = f"replay ended in an error ({outcome.stop_reason or 'error'})"
    if outcome.recorded_had_error:
        print(
            f"{where}: {replay}; the recorded checkpoint ended in an error"
            f" ({outcome.recorded_stop_reason or 'error'}), so there is no verdict to compare with"
        )
        return
    same = "matches" if outcome.matches else "DIFFERS from"
    print(f"{where}: {replay}, {same} the recorded result ({_verdict(outcome.recorded_passed)})")
    if not outcome.matches and outcome.evaluation.output_tail:
        print(outcome.evaluation.output_tail.rstrip())
