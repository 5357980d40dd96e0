"""Issue 32, section 4: a 160 KB run directory holding a 3 GB sparse ``trajectory.jsonl`` made ``show``
use 6.3 GB and 80 s; under a memory limit ``show``, ``view`` and the exports ended in ``MemoryError``.

Now every file of a run directory read back is read with a size limit (256 MB,
``AGENTRIG_MAX_RECORD_BYTES``): a larger one is refused by its size, unread, and the command says in
one line what it skipped and goes on. The file here is sparse (``truncate``): nothing of it is written."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from agentrig.testing.runs import outcome_run

#: The address space each command gets: far less than the file, enough for the interpreter and a run's records.
MEMORY_LIMIT = 1 << 30
HUGE = 3 << 30


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _agentrig(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    code = "import sys; from agentrig.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300,
                          preexec_fn=_limited, env={**os.environ, **(env or {})})


@pytest.fixture
def huge_run(tmp_path: Path) -> Path:
    run = outcome_run(tmp_path / "sent")
    trajectory = run / "alpha" / "first" / "trajectory.jsonl"
    os.truncate(trajectory, HUGE)
    assert os.stat(trajectory).st_blocks * 512 < 64 << 20  # sparse: the disk holds almost none of it
    return run


@pytest.mark.parametrize("command", ["show", "view", "export-jsonl", "export-atif"])
def test_a_huge_trajectory_is_skipped_in_one_line_not_read(huge_run: Path, tmp_path: Path, command: str) -> None:
    out = tmp_path / "out"
    args = {
        "show": ["show", str(huge_run), "alpha/first"],
        "view": ["view", str(huge_run), "--out", str(out)],
        "export-jsonl": ["export", str(huge_run), "--format", "jsonl", "-o", str(out)],
        "export-atif": ["export", str(huge_run), "--format", "atif", "-o", str(out)],
    }[command]

    done = _agentrig(*args)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "MemoryError" not in done.stderr and "Traceback" not in done.stderr, done.stderr[-2000:]
    shown = done.stdout + done.stderr
    if command == "view":
        shown = (out / "runs" / "1" / "alpha" / "first.html").read_text()
    skipped = [line for line in shown.splitlines() if "trajectory.jsonl" in line and "larger than 256 MB (3 GB); not read" in line]
    assert len(skipped) == 1, shown[-3000:]
    assert "AGENTRIG_MAX_RECORD_BYTES" in skipped[0]
    if command != "show":  # the rest of the run is there
        written = {p.relative_to(out).as_posix() for p in out.rglob("*")} if out.is_dir() else {out.name}
        assert written and (command == "export-jsonl" or any("beta" in w for w in written)), written


def test_the_limit_is_overridable(huge_run: Path) -> None:
    trajectory = huge_run / "alpha" / "second" / "trajectory.jsonl"
    trajectory.write_bytes(trajectory.read_bytes() * 4)  # the same steps again: larger than any record
    records = [huge_run / "run.json", huge_run / "results.jsonl", *trajectory.parent.glob("*.json")]
    limit = max(p.stat().st_size for p in records)  # the records are read; the trajectory is larger
    assert trajectory.stat().st_size > limit
    done = _agentrig("show", str(huge_run), "alpha/second", env={"AGENTRIG_MAX_RECORD_BYTES": str(limit)})
    assert done.returncode == 0, done.stderr
    assert f"{trajectory}: file is larger than" in done.stdout + done.stderr
