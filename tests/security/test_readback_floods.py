"""A Harbor ``tests/test.sh`` writing 250 files of 8 MB into ``/logs/verifier`` took agentrig to
2.1 GB of memory and 2 GB of run directory: only each file was capped. Every copy back from a
container or a workspace (a verifier's logs, a workspace snapshot) now stops at a count and a total
(``-c readback.max_files``, ``-c readback.max_bytes``; 10,000 files and 1 GiB by default), the
verifier's logs are streamed to disk rather than held in memory, and one line says what was left out
(logged, and recorded in ``evaluation.json`` or the snapshot's manifest). The reward file is
always read."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from problem_kit import harbor_task, native_problem, one_error_line, run_cli, run_subprocess

FLOOD_SH = """#!/bin/bash
for i in $(seq 1 30); do head -c 65536 /dev/zero > /logs/verifier/flood_$i.bin; done
echo 1 > /logs/verifier/reward.txt
"""
# the default count: 10,000 files taken, the rest left out (empty files: nothing large is moved)
MANY_SH = """#!/bin/bash
mkdir -p /logs/verifier/many && cd /logs/verifier/many && seq -f 'f%05g' 1 10050 | xargs touch
echo 1 > /logs/verifier/reward.txt
"""


def _evaluation(out: Path) -> dict[str, object]:
    return json.loads((out / "t1" / "task" / "evaluation.json").read_text())


def _kept(out: Path) -> list[Path]:
    return [p for p in (out / "t1" / "task" / "evaluation" / "verifier").rglob("*") if p.is_file()]


@pytest.mark.docker
def test_harbor_verifier_log_flood_is_capped_by_count_and_total(tmp_path: Path, node_test_image: str) -> None:
    task = harbor_task(tmp_path / "tasks" / "t1", "[verifier]\ntimeout_sec = 120.0\n", image=node_test_image)
    (task / "tests" / "test.sh").write_text(FLOOD_SH)
    out = tmp_path / "out"
    proc = run_subprocess(tmp_path, "run", str(task), "--agent", "oracle", "--runtime", "docker", "--output", str(out),
                          "-c", "readback.max_files=20", "-c", "readback.max_bytes=300000")
    evaluation = _evaluation(out)
    assert (evaluation["passed"], evaluation["error"]) == (True, None), proc.stderr[-3000:]
    kept = _kept(out)
    floods = [p for p in kept if p.name.startswith("flood_")]
    assert len(floods) == 4 and sum(p.stat().st_size for p in floods) <= 300000  # 4 x 64 KiB fit in 300,000 bytes
    assert (out / "t1" / "task" / "evaluation" / "verifier" / "reward.txt").read_text() == "1\n"
    left_out = str(evaluation["left_out"])
    assert left_out.startswith("the verifier's /logs/verifier: 26 files (1.625 MB) left out beyond the read-back limits"), left_out
    assert "-c readback.max_files=N, readback.max_bytes=N" in left_out
    assert left_out in proc.stderr  # said once, as it happened


@pytest.mark.docker
@pytest.mark.slow
def test_harbor_verifier_file_count_is_capped_by_default(tmp_path: Path, node_test_image: str) -> None:
    task = harbor_task(tmp_path / "tasks" / "t1", "[verifier]\ntimeout_sec = 120.0\n", image=node_test_image)
    (task / "tests" / "test.sh").write_text(MANY_SH)
    out = tmp_path / "out"
    proc = run_subprocess(tmp_path, "run", str(task), "--agent", "oracle", "--runtime", "docker", "--output", str(out))
    evaluation = _evaluation(out)
    assert evaluation["passed"] is True, proc.stderr[-3000:]
    assert len(_kept(out)) == 10_000 + 1  # the default count, and the reward file
    assert str(evaluation["left_out"]).startswith("the verifier's /logs/verifier: 50 files (0 bytes) left out")


def test_workspace_snapshot_is_capped_and_says_what_it_left_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The agent fills its workspace: the snapshot in the run directory stops at the limits; the checkpoint is kept."""
    problem = native_problem(tmp_path / "bench")
    (problem / "problem.yaml").write_text(
        (problem / "problem.yaml").read_text().replace(
            "checkpoints:", "setup:\n  - for i in 1 2 3 4 5 6 7 8; do head -c 1000 /dev/zero > big_$i.bin; done\ncheckpoints:"
        )
    )
    out = tmp_path / "out"
    status, _, err = run_cli(capsys, "run", str(problem), "--agent", "oracle", "--output", str(out),
                             "-c", "readback.max_files=5", "-c", "readback.max_bytes=2500")
    assert status == 0, err
    manifest = json.loads((out / "p" / "c1" / "snapshot" / "manifest.json").read_text())
    # in path order, each file that still fits: big_3 .. big_8 do not, the solution's done.txt does
    assert [f["path"] for f in manifest["files"]] == ["big_1.bin", "big_2.bin", "done.txt"]
    assert manifest["total_size"] == 2005
    assert manifest["left_out"].startswith("the snapshot of workspace ") and ": 6 files (5.85938 KB) left out" in manifest["left_out"]
    files = out / "p" / "c1" / "snapshot" / "files"
    assert sorted(p.name for p in files.iterdir()) == ["big_1.bin", "big_2.bin", "done.txt"]
    assert manifest["left_out"] in err  # said once, as it happened


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("readback.max_files=0", "-c readback.max_files: Input should be greater than 0"),
        ("readback.max_bytes=lots", "-c readback.max_bytes: Input should be a valid integer"),
        ("readback.max=1", "-c readback.max: unknown read-back limit (known: max_files, max_bytes)"),
    ],
)
def test_readback_options_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, message: str) -> None:
    problem = native_problem(tmp_path / "bench")
    status, _, err = run_cli(capsys, "run", str(problem), "--agent", "oracle", "--output", str(tmp_path / "out"), "-c", option)
    assert status == 2 and message in one_error_line(err)
    assert not (tmp_path / "out").exists()
