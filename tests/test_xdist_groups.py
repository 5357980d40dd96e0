"""The suite's ``xdist_group`` marks hold: ``--dist loadgroup`` (hatch.toml) runs a group's tests on one worker.

The root ``conftest.py`` keeps a shared resource (a Ray cluster, an agent image, a browser) on one worker
with these marks; a pytest and pytest-xdist pair under which they silently do nothing (pytest 9.2 with
pytest-xdist 3.8) starts that resource once per worker instead. This runs a small suite of grouped tests
with two workers, as ``hatch test`` runs the real one, and reads which worker ran each.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

GROUPED = '''
import os
import pytest

@pytest.mark.xdist_group("shared")
@pytest.mark.parametrize("index", range(6))
def test_grouped(index):
    with open(os.environ["AGENTRIG_GROUP_OUT"], "a") as log:
        log.write(f"grouped {os.environ.get('PYTEST_XDIST_WORKER')}\\n")

@pytest.mark.parametrize("index", range(6))
def test_free(index):
    with open(os.environ["AGENTRIG_GROUP_OUT"], "a") as log:
        log.write(f"free {os.environ.get('PYTEST_XDIST_WORKER')}\\n")
'''


def test_a_groups_tests_run_on_one_worker(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "pytest.ini").write_text("[pytest]\n")
    (suite / "test_grouped.py").write_text(GROUPED)
    out = tmp_path / "workers.txt"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadgroup", "-p", "no:randomly",
         "-p", "no:cacheprovider", "--rootdir", str(suite), "-c", str(suite / "pytest.ini"), str(suite)],
        capture_output=True, text=True, timeout=240, cwd=suite,
        env={"AGENTRIG_GROUP_OUT": str(out), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    ran = [line.split() for line in out.read_text().splitlines()]
    grouped = {worker for kind, worker in ran if kind == "grouped"}
    assert len([1 for kind, _ in ran if kind == "grouped"]) == 6
    assert len(grouped) == 1, f"the group's tests ran on {sorted(grouped)}: xdist_group has no effect"
    # the other tests are spread as usual (both workers exist and took work)
    assert {worker for _, worker in ran} == {"gw0", "gw1"}
