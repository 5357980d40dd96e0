"""``agentrig cache list|clear``, and the ``--cache`` options of ``agentrig run``: the model-call cache
(:mod:`agentrig.llm.cache`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentrig.cli.output import CLIError

if TYPE_CHECKING:
    from agentrig.llm.cache import ModelCallCache


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """``--cache [DIR]``, ``--no-cache``, ``--cache-policy`` and ``--cache-ttl`` on ``agentrig run``."""
    group = parser.add_argument_group("model-call cache")
    group.add_argument(
        "--cache", nargs="?", const="", default=None, metavar="DIR",
        help="answer a model call seen before from the cache, at no cost (DIR default: the user's cache"
        " directory, agentrig/model-calls); write --cache=DIR, or put it after the problems. Recorded in"
        " run.json: --resume goes on with the run's cache unless given other cache options",
    )
    group.add_argument(
        "--no-cache", action="store_true",
        help="with --resume: do not use the cache the run recorded (a new run uses none without --cache)",
    )
    group.add_argument(
        "--cache-policy", choices=["read", "write", "readwrite"], default=None,
        help="read: answer from the cache, never store; write: always call, store; readwrite (default): both",
    )
    group.add_argument(
        "--cache-ttl", metavar="DURATION", default=None,
        help="entries older than this (3600, 30m, 12h, 7d) are ignored and replaced (default: never expire)",
    )


def cache_from_args(args: argparse.Namespace) -> ModelCallCache | None:
    """The run's cache from ``--cache``/``--cache-policy``/``--cache-ttl`` (``None`` without ``--cache``);
    a bad value is a usage error naming its option."""
    from agentrig.llm.cache import CacheError, ModelCallCache, default_cache_dir, parse_duration

    given = getattr(args, "cache", None)
    if getattr(args, "no_cache", False) and (given is not None or args.cache_policy is not None or args.cache_ttl is not None):
        raise CLIError("--no-cache turns the model-call cache off: leave out --cache, --cache-policy and --cache-ttl", status=2)
    if given is None:
        if args.cache_policy is not None or args.cache_ttl is not None:
            raise CLIError("--cache-policy and --cache-ttl need --cache [DIR]", status=2)
        return None
    try:
        ttl = parse_duration(args.cache_ttl) if args.cache_ttl is not None else None
    except CacheError as exc:
        raise CLIError(str(exc), status=2) from None
    directory = Path(given).expanduser().resolve() if given else default_cache_dir()
    if directory.exists() and not directory.is_dir():
        raise CLIError(f"--cache {given}: not a directory", status=2)
    return ModelCallCache(directory=directory, policy=args.cache_policy or "readwrite", ttl=ttl)


def resume_words(cache: ModelCallCache | None) -> list[str]:
    """The cache options that give ``cache`` again, for the command that finishes a run (none without one)."""
    if cache is None:
        return []
    words = [f"--cache={cache.directory}"]
    if cache.policy != "readwrite":
        words += ["--cache-policy", cache.policy]
    if cache.ttl is not None:
        words += ["--cache-ttl", f"{cache.ttl:f}".rstrip("0").rstrip(".")]  # digits --cache-ttl reads back
    return words


def add_parser(subparsers: Any) -> None:
    """Add the ``cache`` command."""
    parser = subparsers.add_parser("cache", help="the model-call cache of `run --cache`: list, clear")
    commands = parser.add_subparsers(dest="cache_command", metavar="SUBCOMMAND")
    commands.required = True
    listing = commands.add_parser("list", help="entries, size, oldest and newest entry")
    listing.add_argument("--dir", type=Path, help="the cache directory (default: the user's)")
    listing.add_argument("--json", action="store_true", help="a JSON object")
    listing.set_defaults(handler=list_command)
    clearing = commands.add_parser("clear", help="delete every entry, or those older than --older-than")
    clearing.add_argument("--dir", type=Path, help="the cache directory (default: the user's)")
    clearing.add_argument("--older-than", metavar="DURATION", help="only entries written longer ago (30m, 12h, 7d)")
    clearing.set_defaults(handler=clear_command)


def _directory(args: argparse.Namespace) -> Path:
    from agentrig.llm.cache import default_cache_dir

    directory = args.dir.expanduser() if args.dir is not None else default_cache_dir()
    if directory.exists() and not directory.is_dir():
        raise CLIError(f"--dir {args.dir}: not a directory", status=2)
    return directory


def _when(stamp: float | None) -> str:
    from datetime import datetime

    return "-" if stamp is None else datetime.fromtimestamp(stamp).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def list_command(args: argparse.Namespace) -> int:
    """Print the cache's entries, size, oldest and newest entry."""
    from agentrig.cli.output import print_json
    from agentrig.llm.cache import summarize

    summary = summarize(_directory(args))
    if args.json:
        print_json(summary.model_dump(mode="json"))
        return 0
    print(f"{summary.directory}: {summary.entries} entries, {summary.bytes / 1e6:.2f} MB,"
          f" oldest {_when(summary.oldest)}, newest {_when(summary.newest)}")
    return 0


def clear_command(args: argparse.Namespace) -> int:
    """Delete the cache's entries (all, or those older than ``--older-than``)."""
    from agentrig.llm.cache import CacheError, clear, parse_duration

    try:
        older = parse_duration(args.older_than, "--older-than") if args.older_than is not None else None
    except CacheError as exc:
        raise CLIError(str(exc), status=2) from None
    directory = _directory(args)
    removed = clear(directory, older)
    print(f"{directory}: {removed} entries removed")
    return 0
