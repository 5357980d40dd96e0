"""The options of ``replay`` and ``evaluate`` that say where a run directory's code runs:
``--runtime``, ``--image``, ``-c runtime.KEY=VALUE`` and ``--trust`` (:mod:`agentrig.run.rerun_runtime`)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from agentrig.cli.output import CLIError

if TYPE_CHECKING:
    from agentrig.run.rerun_runtime import RerunRequest, RerunRuntime


def add_rerun_options(parser: argparse.ArgumentParser, runs: str) -> None:
    """Add ``--runtime``, ``--image``, ``-c runtime.KEY=VALUE`` and ``--trust``; ``runs`` says what they run."""
    parser.add_argument(
        "--runtime", metavar="NAME",
        help=f"where {runs} run: docker, local (on this machine: unsandboxed unless -c runtime.sandbox=bwrap), or a "
        "plugin's runtime; default: the run's own runtime, sandboxed (docker, or local under bubblewrap)",
    )
    parser.add_argument("--image", help="container image for --runtime docker (default: the one the run recorded)")
    parser.add_argument(
        "-c", "--config", dest="overrides", action="append", default=[], metavar="runtime.KEY=VALUE",
        help="a runtime option (runtime.network=host, runtime.sandbox=bwrap, runtime.mem_limit=2g)",
    )
    parser.add_argument(
        "--trust", action="store_true",
        help=f"trust the run directory: {runs} run in the runtime run.json names, with its recorded options "
        "(unsandboxed when the run was)",
    )


def rerun_request(args: argparse.Namespace) -> RerunRequest:
    """The user's :class:`~agentrig.run.rerun_runtime.RerunRequest`; :class:`CLIError` (exit 2) for a bad option."""
    from agentrig.run.agent_config import AgentConfigError, parse_override
    from agentrig.run.rerun_runtime import RerunRequest

    options: dict[str, Any] = {}
    for text in args.overrides:
        try:
            key, value = parse_override(text)
        except AgentConfigError as exc:
            raise CLIError(str(exc), status=2) from None
        option = key.removeprefix("runtime.")
        if not key.startswith("runtime.") or not option or "." in option:
            raise CLIError(f"-c {text}: only runtime options are taken here (runtime.KEY=VALUE, e.g. runtime.network=host)", status=2)
        options[option] = value
    if args.image and args.runtime == "local":
        raise CLIError("--image needs a container runtime (--runtime docker)", status=2)
    if args.runtime is not None:
        _check_runtime(args.runtime, {**options, **({"image": args.image} if args.image else {})})
    return RerunRequest(runtime=args.runtime, image=args.image, options=options, trust=args.trust)


def _check_runtime(name: str, options: dict[str, Any]) -> None:
    from agentrig.errors import UnknownPluginError
    from agentrig.runtime.errors import RuntimeSetupError
    from agentrig.runtime.resolve import available_runtimes, check_runtime_options

    try:
        check_runtime_options(name, options)
    except UnknownPluginError:
        raise CLIError(f"--runtime {name}: unknown runtime (available: {', '.join(sorted(available_runtimes()))})", status=2) from None
    except RuntimeSetupError as exc:
        if "'image': Field required" not in str(exc):  # the run's recorded image may do
            raise CLIError(str(exc), status=2) from None


def announcer() -> Any:
    """A callback printing each :class:`~agentrig.run.rerun_runtime.RerunRuntime`'s line once, to standard error."""
    said: set[str] = set()

    def announce(runtime: RerunRuntime) -> None:
        if runtime.line not in said:
            said.add(runtime.line)
            print(f"agentrig: {runtime.line}", file=sys.stderr, flush=True)

    return announce


__all__ = ["add_rerun_options", "announcer", "rerun_request"]
