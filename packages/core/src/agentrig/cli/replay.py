"""``agentrig replay RUN_DIR/PROBLEM/CHECKPOINT``: re-run a recorded checkpoint offline and compare verdicts."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agentrig.cli.output import CLIError


def add_parser(subparsers: Any) -> None:
    """Add the ``replay`` command."""
    parser = subparsers.add_parser(
        "replay",
        help="re-run a recorded checkpoint with its recorded model replies",
        description="Re-run one checkpoint of a run in a fresh workspace with the recorded model replies, "
        "and report whether the test verdict matches the recorded one (exit 0: it matches).",
    )
    parser.add_argument("checkpoint", type=Path, metavar="RUN_DIR/PROBLEM/CHECKPOINT", help="a checkpoint directory of a run")
    parser.add_argument("--output", "-o", type=Path, help="keep the replay's trajectory and verdict in this directory")
    parser.set_defaults(handler=replay_command)


def _verdict(passed: bool | None) -> str:
    return "no test" if passed is None else ("passed" if passed else "failed")


def replay_command(args: argparse.Namespace) -> int:
    """Replay, print the verdicts; 0 when they match, 1 when they differ."""
    from agentrig.errors import PluginError, UnknownAgentError
    from agentrig.run.problems import ProblemError
    from agentrig.run.replay import ReplayError, replay_checkpoint

    try:
        outcome = replay_checkpoint(args.checkpoint, keep=args.output)
    except (ReplayError, ProblemError) as exc:
        raise CLIError(str(exc), status=2) from None
    except (UnknownAgentError, PluginError) as exc:
        raise CLIError(f"{args.checkpoint}: {exc}") from None
    except KeyboardInterrupt:
        raise
    where = f"{outcome.problem}/{outcome.checkpoint}"
    same = "matches" if outcome.matches else "DIFFERS from"
    print(f"{where}: replay {_verdict(outcome.passed)}, {same} the recorded result ({_verdict(outcome.recorded_passed)})")
    if not outcome.matches and outcome.evaluation.output_tail:
        print(outcome.evaluation.output_tail.rstrip())
    return 0 if outcome.matches else 1
