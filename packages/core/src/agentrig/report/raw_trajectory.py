"""A checkpoint's ``trajectory.jsonl`` as read, not parsed: what a report page embeds for its script to read.

The report's pages read a trajectory in the browser (``agentrig/view/static/trajectory.js``, with the rules of
:func:`agentrig.report.reader.read_steps`): the Python side only reads the file (through the run directory's
boundary, as every file read back), keeps its complete lines, and marks the lines that are not UTF-8 text. Parsing
and formatting every step of every checkpoint in Python was most of the time a static report took to write.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentrig.boundary import BoundaryError


@dataclass
class RawTrajectory:
    """A trajectory file's complete lines (a torn last line, a run killed mid-write, left out).

    ``text`` holds them joined by ``\\n``, in place so that line numbers hold: a line that is not UTF-8 text is left
    empty and numbered in ``bad``; a carriage return is written as a space (a page's HTML would turn it into a line
    break; in JSON it can only be whitespace between values). ``notices``: why the file could not be read.
    """

    path: Path
    text: str = ""
    bad: list[int] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    @property
    def lines(self) -> int:
        """How many lines ``text`` holds, blank ones too: at least the number of steps."""
        return self.text.count("\n") + 1 if self.text else 0

    def step_count(self) -> int:
        """How many lines are JSON objects (each a step, known or not, as the reader counts them); parses every line,
        so it is asked only of a trajectory longer than a page."""
        count = 0
        for line in self.text.split("\n"):
            if not line.strip(" \t\r\n\x0b\x0c"):
                continue
            try:
                count += isinstance(json.loads(line), dict)
            except (ValueError, RecursionError):
                continue
        return count

    def parts(self, per_page: int) -> int:
        """How many pages of ``per_page`` steps its steps take (at least one)."""
        if self.lines <= per_page:
            return 1
        return max(1, -(-self.step_count() // per_page))


def read_raw_trajectory(path: Path, read: Callable[[Path], bytes]) -> RawTrajectory:
    """The trajectory at ``path`` read by ``read`` (a reader that keeps to the run directory: a
    :class:`~agentrig.report.reader.CheckpointFiles` or :func:`~agentrig.boundary.read_inside`); a missing file is
    an empty trajectory, one that cannot be read an empty one with a notice."""
    try:
        data = read(path)
    except FileNotFoundError:
        return RawTrajectory(path)
    except BoundaryError as exc:
        return RawTrajectory(path, notices=[str(exc)])
    except OSError as exc:
        return RawTrajectory(path, notices=[f"{path}: {exc.strerror or exc}"])
    data = data[: max(0, data.rfind(b"\n"))]  # every line before the last line break is whole
    bad: list[int] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        kept = []
        for number, line in enumerate(data.split(b"\n"), 1):
            try:
                kept.append(line.decode("utf-8"))
            except UnicodeDecodeError:
                kept.append("")
                bad.append(number)
        text = "\n".join(kept)
    if "\r" in text:
        text = text.replace("\r", " ")
    return RawTrajectory(path, text, bad)


__all__ = ["RawTrajectory", "read_raw_trajectory"]
