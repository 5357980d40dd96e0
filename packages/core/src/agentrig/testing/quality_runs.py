"""Slopcode-shaped fixture runs whose checkpoints' snapshots hold real Python code, measured by the real
``agentrig evaluate --metrics`` (radon, ruff, ast-grep): the code-quality tests of ``show``, ``compare``
and ``view`` read the ``quality.json`` files it writes.

Problem ``erosion``: ``app.py``'s ``parse`` gains ``grow`` branches at each checkpoint (two lines each), so
its cyclomatic complexity is 2, 2 + grow, 2 + 2 * grow and its length 4, 4 + 2 * grow, 4 + 4 * grow lines;
with ``sloppy``, checkpoint 3 adds an unused import (one lint violation) and two copies of a ten-line
function (a clone). Problem ``steady``: the same small file at both checkpoints.
"""

from __future__ import annotations

from pathlib import Path

from agentrig.cli import main
from agentrig.testing.runs import CheckpointPlan, write_run

COPY = '''

def copy_{n}(values):
    out = []
    for value in values:
        if value % 2:
            out.append(value * 3)
        else:
            out.append(value - 1)
    return out
'''


def parse_source(branches: int) -> str:
    """``parse`` with ``branches`` ifs (complexity ``branches + 1``, ``2 * branches + 2`` lines) and ``main``."""
    body = "".join(f"    if text == '{k}':\n        return {k}\n" for k in range(branches))
    return f"def parse(text):\n{body}    return -1\n\n\ndef main():\n    return parse('1')\n"


def erosion_sources(grow: int, sloppy: bool) -> list[dict[str, str]]:
    """The snapshot of each of the three checkpoints of problem ``erosion``."""
    out = []
    for i in range(3):
        files = {"app.py": parse_source(1 + grow * i)}
        if sloppy and i == 2:
            files["app.py"] = "import os\n\n\n" + files["app.py"]
            files["copies.py"] = COPY.format(n=1).lstrip("\n") + COPY.format(n=2)
        out.append(files)
    return out


def measured_run(root: Path, grow: int, *, sloppy: bool = False, steady: bool = True, measure: bool = True) -> Path:
    """A completed run of ``erosion`` (three checkpoints) and ``steady`` (two), every checkpoint passed with
    its tests counted, each snapshot written; with ``measure``, ``agentrig evaluate --metrics`` run on it."""
    plans = {"erosion": [CheckpointPlan(f"checkpoint_{i}", "passed", tests=6) for i in (1, 2, 3)]}
    if steady:
        plans["steady"] = [CheckpointPlan(f"checkpoint_{i}", "passed", tests=3) for i in (1, 2)]
    write_run(root, plans)
    snapshots = {"erosion": erosion_sources(grow, sloppy), "steady": [{"lib.py": parse_source(2)}] * 2}
    for problem in plans:
        for i, files in enumerate(snapshots[problem], 1):
            snapshot = root / problem / f"checkpoint_{i}" / "snapshot"
            snapshot.mkdir(parents=True, exist_ok=True)
            for name, text in files.items():
                (snapshot / name).write_text(text)
    if measure:
        assert main(["evaluate", str(root), "--metrics"]) == 0
    return root
