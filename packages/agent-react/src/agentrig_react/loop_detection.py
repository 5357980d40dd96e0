"""Spotting an agent stuck repeating the same tool call."""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from typing import Any


class RepeatVerdict(str, enum.Enum):
    """What to do about a tool call: run it, run it and warn the model, or stop."""

    OK = "ok"
    WARN = "warn"
    STOP = "stop"


def call_signature(name: str, arguments: Mapping[str, Any]) -> str:
    """A canonical text of a call: same tool and same arguments (any key order) give the same text."""
    return name + "\0" + json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)


class RepeatDetector:
    """Counts identical tool calls in a row.

    The ``limit``-th identical call in a row is run with a warning to the
    model; one more identical call after that stops the run. Any different
    call resets the count.
    """

    def __init__(self, limit: int) -> None:
        """``limit``: identical calls in a row that earn the warning (2 or more)."""
        if limit < 2:
            raise ValueError("the repeat limit must be 2 or more")
        self.limit = limit
        self._last: str | None = None
        self.count = 0

    def observe(self, name: str, arguments: Mapping[str, Any]) -> RepeatVerdict:
        """Record a call about to run and say what to do about it."""
        signature = call_signature(name, arguments)
        if signature == self._last:
            self.count += 1
        else:
            self._last = signature
            self.count = 1
        if self.count > self.limit:
            return RepeatVerdict.STOP
        if self.count == self.limit:
            return RepeatVerdict.WARN
        return RepeatVerdict.OK

    def reset(self) -> None:
        """Forget the calls seen so far."""
        self._last = None
        self.count = 0

    def warning(self, name: str) -> str:
        """The message the model gets with the warned call's result."""
        return (
            f"[warning: {self.limit} identical {name} calls in a row with the same arguments. "
            "Repeating it will not change the result: do something different; "
            "one more identical call stops the run.]"
        )
