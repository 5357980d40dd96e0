"""The argument parser of every ``agentrig`` command: argparse's, with usage errors in one line that
name an unknown option first (with the closest known one) instead of a screen of usage."""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Sequence
from typing import ClassVar, NoReturn


class AgentrigParser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` (its sub-commands' parsers are of this class too) whose
    :meth:`error` prints one line: ``agentrig run: error: unknown option --agnet; did you mean --agent?
    (agentrig run --help lists the options)``, exit 2. An unknown option outranks any other complaint
    (a required option reported missing only because it was misspelt)."""

    _arguments: list[str] | None = None
    #: The parser that parsed last: a sub-command's, whose leftovers its parent reports as "unrecognized".
    _last: ClassVar[AgentrigParser | None] = None

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """As argparse's, remembering the words (for :meth:`error`)."""
        self._arguments = list(sys.argv[1:] if args is None else args)
        AgentrigParser._last = self
        return super().parse_known_args(args, namespace)

    def unknown_option(self) -> str | None:
        """The first word of the parsed arguments that looks like an option this parser does not know
        (nor abbreviates), or ``None``; words after ``--`` and negative numbers are values."""
        for word in self._arguments or []:
            if word == "--":
                return None
            if not word.startswith("-") or word == "-" or _is_number(word):
                continue
            name = word.split("=", 1)[0] if word.startswith("--") else word[:2]
            if name in self._option_string_actions:
                continue
            if name.startswith("--") and any(known.startswith(name) for known in self._option_string_actions):
                continue  # an abbreviation argparse resolves (or reports as ambiguous itself)
            return name
        return None

    def error(self, message: str) -> NoReturn:
        """One line on stderr and exit 2; an unknown option is named first, with the closest known one."""
        parser = self
        if message.startswith("unrecognized arguments") and AgentrigParser._last is not None:
            parser = AgentrigParser._last  # the sub-command's words were left over: its options are the ones
        unknown = parser.unknown_option()
        if unknown is not None:
            known = [option for option in parser._option_string_actions if option.startswith("--")]
            close = difflib.get_close_matches(unknown, known, n=1, cutoff=0.6)
            message = f"unknown option {unknown}" + (f"; did you mean {close[0]}?" if close else "")
        text = " ".join(message.split())
        self.exit(2, f"{parser.prog}: error: {text} ({parser.prog} --help lists the options)\n")


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True
