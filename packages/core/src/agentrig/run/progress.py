"""Progress of a run: events from the problem runs, shown live on a terminal or as log lines.

Problem runs only *emit* :class:`ProgressEvent` records through a callable;
they never touch the display, so a run in another process (or on another
machine) reports the same way. The dispatcher feeds events to a
:class:`ProgressDisplay`.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Literal, TextIO

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

from agentrig.formatting import money, tokens_text
from agentrig.run.records import CheckpointResultLine
from agentrig.terminal import terminal_text

EventKind = Literal[
    "problem_start", "checkpoint_start", "step", "checkpoint_end", "problem_end", "log"
]


class ProgressEvent(BaseModel):
    """One thing that happened in a problem run, with the usage so far in the checkpoint.

    A ``checkpoint_end`` event carries the checkpoint's ``results.jsonl`` line
    as ``result``: the dispatcher, the only writer of ``results.jsonl``, records
    it on receipt (the checkpoint's commit point). ``result`` is left out of the
    JSON of every other event.
    """

    model_config = ConfigDict(extra="forbid")

    kind: EventKind
    problem: str
    checkpoint: str | None = None
    index: int = 0
    total: int = 0
    steps: int = 0
    tokens: int = 0
    cost: float | None = 0.0
    status: str | None = None
    message: str | None = None
    time: float = 0.0
    result: CheckpointResultLine | None = None

    @model_serializer(mode="wrap")
    def _omit_no_result(self, handler: SerializerFunctionWrapHandler) -> object:
        data = handler(self)
        if isinstance(data, dict) and data.get("result", 0) is None:
            del data["result"]
        return data


EventSink = Callable[[ProgressEvent], None]


def _money(cost: float | None) -> str:
    return money(cost, 4 if cost is None or cost < 1 else 2)


def _tokens(count: int) -> str:
    return tokens_text(count)


def _add(a: float | None, b: float | None) -> float | None:
    """A sum of costs: unknown once either part is."""
    return None if a is None or b is None else a + b


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}:{secs:02d}"


class _Line:
    def __init__(self, problem: str) -> None:
        self.problem = problem
        self.checkpoint = "-"
        self.position = ""
        self.steps = 0
        self.tokens = 0
        self.cost: float | None = 0.0
        self.prior_cost: float | None = 0.0
        self.state = "starting"
        self.started = time.monotonic()
        self.done = False


class ProgressDisplay:
    """Shows events: ``live`` redraws one line per problem; otherwise one log line per event.

    ``verbosity``: 0 quiet (nothing but errors), 1 normal, 2 verbose (every step).
    Thread-safe: events may arrive from a reader thread.
    """

    def __init__(self, stream: TextIO | None = None, *, live: bool | None = None, verbosity: int = 1) -> None:
        """Write to ``stream`` (stderr by default); ``live`` defaults to whether it is a terminal."""
        self.stream = stream or sys.stderr
        self.verbosity = verbosity
        self.live = (self.stream.isatty() if live is None else live) and verbosity > 0
        self._lines: dict[str, _Line] = {}
        self._drawn = 0
        self._last_draw = 0.0
        self._lock = threading.Lock()

    # -- events ----------------------------------------------------------------

    def __call__(self, event: ProgressEvent) -> None:
        """Take one event."""
        with self._lock:
            line = self._lines.setdefault(event.problem, _Line(event.problem))
            self._update(line, event)
            if self.live:
                if event.kind == "log" and event.status in ("error", "warning"):
                    self._clear()
                    self._write(terminal_text(f"{event.problem}: {event.message}") + "\n")
                self._draw(force=event.kind != "step")
            else:
                text = self._log_text(line, event)
                if text:
                    self._write(terminal_text(text) + "\n")

    def _update(self, line: _Line, event: ProgressEvent) -> None:
        if event.kind == "checkpoint_start":
            line.checkpoint = event.checkpoint or "-"
            line.position = f"{event.index + 1}/{event.total}"
            line.steps = line.tokens = 0
            line.cost = 0.0
            line.state = "running"
        elif event.kind == "step":
            line.steps, line.tokens, line.cost = event.steps, event.tokens, event.cost
        elif event.kind == "checkpoint_end":
            line.steps, line.tokens, line.cost = event.steps, event.tokens, event.cost
            line.prior_cost = _add(line.prior_cost, event.cost)
            line.cost = 0.0
            line.state = event.status or "done"
        elif event.kind == "problem_end":
            line.done = True
            line.state = event.status or "done"

    def _log_text(self, line: _Line, event: ProgressEvent) -> str | None:
        where = f"{event.problem}/{event.checkpoint}" if event.checkpoint else event.problem
        if event.kind == "log":
            if event.status in ("error", "warning") or self.verbosity >= 1:
                return f"{where}: {event.message}"
            return None
        if self.verbosity == 0:
            return None
        if event.kind == "problem_start":
            return f"{where}: started" + (f" ({event.message})" if event.message else "")
        if event.kind == "checkpoint_start":
            return f"{where}: checkpoint {event.index + 1}/{event.total} started"
        if event.kind == "step":
            if self.verbosity < 2:
                return None
            spent = f" - checkpoint so far: steps {event.steps}, tokens {_tokens(event.tokens)}, cost {_money(event.cost)}"
            return f"{where}: step {event.steps}: {event.message or 'step'}" + spent
        if event.kind == "checkpoint_end":
            detail = f" ({event.message})" if event.message else ""
            return (
                f"{where}: {event.status}{detail} - steps {event.steps}, tokens {_tokens(event.tokens)},"
                f" cost {_money(event.cost)}"
            )
        if event.kind == "problem_end":
            return f"{where}: {event.status}" + (f": {event.message}" if event.message else "")
        return None

    # -- live drawing ------------------------------------------------------------

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()

    def _clear(self) -> None:
        if self._drawn:
            self._write(f"\x1b[{self._drawn}F\x1b[J")
            self._drawn = 0

    def _draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_draw < 0.1:
            return
        self._last_draw = now
        rows = []
        for line in self._lines.values():
            rows.append(
                f"{line.problem:<20.20} {line.checkpoint:<16.16} {line.position:>5} {line.state:<13.13}"
                f" steps {line.steps:>4}  tokens {_tokens(line.tokens):>7}"
                f"  cost {_money(_add(line.prior_cost, line.cost)):>9}  {_clock(now - line.started):>6}"
            )
        self._clear()
        if rows:
            self._write(terminal_text("\n".join(rows)) + "\n")
            self._drawn = len(rows)

    def tick(self) -> None:
        """Redraw elapsed times (call about once a second while waiting)."""
        if self.live:
            with self._lock:
                self._draw(force=True)

    def close(self) -> None:
        """Leave the final live display on screen."""
        if self.live:
            with self._lock:
                self._draw(force=True)
                self._drawn = 0
