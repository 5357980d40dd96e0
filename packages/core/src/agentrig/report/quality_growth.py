"""The functions whose cyclomatic complexity or length grew most from one checkpoint to the next, read from
the ``complexity`` metric's per-function details in two ``quality.json`` records.

A function is matched by file and qualified name (``Class.method``); a name defined twice in one file is
told apart by its order (``name#2``). Functions new at a checkpoint are not "grown" (their whole size is
in the headline figures); a record written before ``lines`` was recorded per function compares
complexity only.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel

from agentrig.boundary import shorten
from agentrig.metrics.records import QualityRecord

Row = dict[str, float | int | None]
#: The most functions read from one record (a crafted record may list millions).
MAX_FUNCTIONS = 100_000
#: The most characters of a file's or function's name kept (longer ones are cut, saying so).
NAME_CHARS = 200


class FunctionGrowth(BaseModel):
    """One function's complexity and length at the previous checkpoint and at this one."""

    problem: str
    checkpoint: str
    previous: str
    file: str
    function: str
    line: int
    cc_before: int
    cc_after: int
    lines_before: int | None = None
    lines_after: int | None = None

    @property
    def cc_growth(self) -> int:
        """How much the complexity grew."""
        return self.cc_after - self.cc_before

    @property
    def lines_growth(self) -> int:
        """How many lines it grew by (0 when a side did not record its length)."""
        if self.lines_before is None or self.lines_after is None:
            return 0
        return self.lines_after - self.lines_before

    def rank(self) -> tuple[int, int, str, str]:
        """Sort key: the largest growth of complexity first, then of length."""
        return (-self.cc_growth, -self.lines_growth, self.file, self.function)

    def text(self) -> str:
        """``src/app.py:parse  CC 3 -> 11 (+8), 12 -> 40 lines (+28)``."""
        out = f"{self.file}:{self.function}  CC {self.cc_before} -> {self.cc_after} ({self.cc_growth:+d})"
        if self.lines_before is not None and self.lines_after is not None:
            out += f", {self.lines_before} -> {self.lines_after} lines ({self.lines_growth:+d})"
        return out


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return int(value)


def function_table(record: QualityRecord) -> dict[tuple[str, str], Row] | None:
    """The record's functions by ``(file, name)`` with ``line``, ``cc`` and ``lines`` (``None`` when not
    recorded); ``None`` when the record has no complexity details. Rows that are not a function's (a
    crafted record) are left out."""
    complexity = record.metrics.get("complexity")
    rows = complexity.details.get("functions") if complexity is not None and complexity.status == "ok" else None
    if not isinstance(rows, list):
        return None
    table: dict[tuple[str, str], Row] = {}
    seen: dict[tuple[str, str], int] = {}
    usable = [r for r in rows[:MAX_FUNCTIONS] if isinstance(r, dict)]
    usable = [r for r in usable if isinstance(r.get("file"), str) and isinstance(r.get("name"), str)
              and _int(r.get("cc")) is not None]
    for row in sorted(usable, key=lambda r: (r["file"], _int(r.get("line")) or 0)):
        key = (shorten(row["file"], NAME_CHARS), shorten(row["name"], NAME_CHARS))  # printed: one bounded line
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            key = (key[0], f"{key[1]}#{seen[key]}")
        table[key] = {"line": _int(row.get("line")) or 0, "cc": _int(row.get("cc")), "lines": _int(row.get("lines"))}
    return table


def worst_growing(problem: str, checkpoint: str, previous: str, before: dict[tuple[str, str], Row],
                  after: dict[tuple[str, str], Row], limit: int) -> list[FunctionGrowth]:
    """The ``limit`` functions of both tables that grew most (complexity first, then length)."""
    grown: list[FunctionGrowth] = []
    for key, now in after.items():
        then = before.get(key)
        if then is None:
            continue
        growth = FunctionGrowth(
            problem=problem, checkpoint=checkpoint, previous=previous, file=key[0], function=key[1], line=int(now["line"] or 0),
            cc_before=int(then["cc"] or 0), cc_after=int(now["cc"] or 0),
            lines_before=None if then["lines"] is None else int(then["lines"]),
            lines_after=None if now["lines"] is None else int(now["lines"]),
        )
        if growth.cc_growth > 0 or growth.lines_growth > 0:
            grown.append(growth)
    grown.sort(key=FunctionGrowth.rank)
    return grown[:limit]
