"""Printing for the CLI: one-line errors and warnings, plain tables, JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from agentrig.cli.exits import ExitStatus
from agentrig.terminal import terminal_text


class CLIError(Exception):
    """An error the CLI reports as one line; ``status`` is the exit code (see
    :class:`agentrig.cli.exits.ExitStatus`: 2 for a usage error or bad input, 3 for an error)."""

    def __init__(self, message: str, status: int = ExitStatus.ERROR) -> None:
        super().__init__(message)
        self.status = status


def say(text: str = "") -> None:
    """Print ``text`` (which may quote a record: names, output) on stdout, safe for a terminal
    (:func:`agentrig.terminal.terminal_text`)."""
    print(terminal_text(text))


def error_line(message: str) -> None:
    """Print ``agentrig: error: <message>`` to stderr, on one line, safe for a terminal."""
    print(terminal_text(f"agentrig: error: {' '.join(message.split())}"), file=sys.stderr)


def warning_line(message: str) -> None:
    """Print ``agentrig: warning: <message>`` to stderr, on one line."""
    print(terminal_text(f"agentrig: warning: {' '.join(message.split())}"), file=sys.stderr)


def describe_exception(exc: BaseException) -> str:
    """``Type: message`` on one line."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON on stdout."""
    print(json.dumps(data, indent=2, default=str))


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], max_width: int = 60) -> None:
    """Print a plain aligned table; on a terminal, cells longer than ``max_width`` are cut with an
    ellipsis (output to a pipe or a file keeps every cell whole, for the program reading it)."""
    cut = sys.stdout.isatty()

    def cell(value: Any) -> str:
        text = "" if value is None else terminal_text(str(value))
        return text if not cut or len(text) <= max_width else text[: max_width - 1] + "…"

    cells = [[cell(v) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    lines = ["  ".join(h.upper().ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    print("\n".join(lines))
