"""The ``agentrig`` command line.

Each sub-command lives in its own module exposing ``add_parser(subparsers)``;
those modules import only argparse at load time and do their heavy imports
inside their handlers, so ``agentrig agents list`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from agentrig.cli.exits import EPILOG, ExitStatus
from agentrig.cli.output import CLIError, error_line

# Sub-command modules, in the order `agentrig --help` lists them.
COMMANDS = ("agents", "plugins", "run", "replay", "evaluate", "problems", "datasets", "show", "compare", "view", "export", "cache", "new")


def build_parser(plugin_commands: bool = True) -> argparse.ArgumentParser:
    """The full argument parser with every sub-command: the core's, then (``plugin_commands``)
    those plugins add through ``agentrig_commands``."""
    from agentrig.cli.parser import AgentrigParser

    parser = AgentrigParser(
        prog="agentrig",
        description="Run coding agents on multi-checkpoint tasks; agents are installed as plugins.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from agentrig import __version__

    parser.add_argument("--version", action="version", version=f"agentrig {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in COMMANDS:
        importlib.import_module(f"agentrig.cli.{name}").add_parser(subparsers)
    if plugin_commands:
        _add_plugin_commands(subparsers)
    return parser


def _add_plugin_commands(subparsers: Any) -> None:
    """Plugins' commands; a plugin whose hook fails is one warning line, every other command stays."""
    from agentrig.cli.output import warning_line
    from agentrig.cli.plugin_commands import PluginCommands
    from agentrig.errors import PluginError
    from agentrig.registry import get_registry

    try:
        failed = get_registry().add_commands(PluginCommands(subparsers, COMMANDS))
    except PluginError as exc:
        raise CLIError(f"{exc} (AGENTRIG_STRICT_PLUGINS is set)") from exc
    for plugin in failed:
        where = f"{plugin.distribution} {plugin.version or ''}".strip() if plugin.distribution else "in-process"
        warning_line(f"plugin '{plugin.name}' ({where}): {plugin.error}")


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    """Warnings as one ``agentrig: warning:`` line, without the source line Python adds."""
    from agentrig.cli.output import warning_line

    text = str(message)
    if not category.__module__.startswith("agentrig"):
        text = f"{category.__name__}: {text}"
    warning_line(text)


def _safe_log_lines() -> None:
    """Log records that reach stderr through Python's last-resort handler (the core configures no
    logging) printed safe for a terminal: an agent's error may quote its output."""
    import logging

    from agentrig.terminal import TerminalFormatter

    if logging.lastResort is not None and not isinstance(logging.lastResort.formatter, TerminalFormatter):
        logging.lastResort.setFormatter(TerminalFormatter())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``agentrig`` script; returns the exit status."""
    import warnings

    warnings.showwarning = _show_warning
    _safe_log_lines()
    argv = sys.argv[1:] if argv is None else list(argv)
    # the core's own commands never build plugins' commands: a plugin cannot slow or break them
    try:
        parser = build_parser(plugin_commands=not (argv and argv[0] in COMMANDS))
    except CLIError as exc:
        error_line(str(exc))
        return exc.status
    if not argv:  # a bare `agentrig`: what it can do, not an error
        parser.print_help()
        return 0
    args = parser.parse_args(argv)
    try:
        status = args.handler(args)
    except CLIError as exc:
        error_line(str(exc))
        status = exc.status
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly, as Unix tools do
        _silence_stdout()
        status = SIGPIPE_STATUS
    except KeyboardInterrupt as exc:
        from agentrig.run.signals import interrupt_status

        error_line("interrupted")
        status = interrupt_status(exc)
    except Exception as exc:  # the last line of defence: one line, never a bare traceback
        if os.environ.get("AGENTRIG_DEBUG"):
            raise
        from agentrig.cli.output import describe_exception

        error_line(f"{describe_exception(exc)} (set AGENTRIG_DEBUG=1 to see the traceback)")
        status = ExitStatus.ERROR
    return int(status or 0)


#: The status of a process ended by SIGPIPE (128 + 13), what `yes | head -1` leaves for `yes`.
SIGPIPE_STATUS = ExitStatus.PIPE_CLOSED


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush cannot fail on the closed pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def run() -> None:
    """Console-script wrapper: exit with :func:`main`'s status (stopped with hatch under ``hatch run``:
    :mod:`agentrig.cli.wrapper`)."""
    from agentrig.cli.wrapper import stop_with_hatch

    stop_with_hatch()
    status = main()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        status = SIGPIPE_STATUS
    sys.exit(status)
