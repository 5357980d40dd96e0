"""Text from a record made safe to print on a terminal.

File names, tool output, model replies and error messages come from untrusted places (a run
directory someone sent, a problem file, the agent's workspace). Printed raw, an escape sequence in
them retitles the terminal (``ESC ] 0 ;``), colours it (``ESC [ 31 m``), moves the cursor over
earlier lines or, in some terminals, writes to the clipboard. :func:`terminal_text` is the one
function every command that prints such text (``show``, ``compare``, the progress lines, error and
warning lines, logged messages) passes it through.
"""

from __future__ import annotations

import logging
import re

# C0 controls but tab and newline, DEL, C1 controls, the bidirectional overrides and isolates (they
# reorder what is shown), the line and paragraph separators, and lone surrogates (bytes that were not
# UTF-8: a file name the agent made, decoded with surrogateescape)
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte, as surrogateescape keeps it
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_text(text: str) -> str:
    """``text`` with every character a terminal would act on, rather than show, written as a visible
    escape (``ESC`` as ``\\x1b``, a carriage return as ``\\x0d``, U+202E as ``\\u202e``, an undecodable
    byte ``0xff`` as ``\\xff``); newlines and tabs are kept."""
    return _UNSAFE.sub(_escape, text)


class TerminalFormatter(logging.Formatter):
    """A log formatter whose lines are :func:`terminal_text` (an exception's message may quote output)."""

    def format(self, record: logging.LogRecord) -> str:
        """The record formatted as usual, then made safe."""
        return terminal_text(super().format(record))


__all__ = ["TerminalFormatter", "terminal_text"]
