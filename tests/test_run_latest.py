"""``runs/latest`` points at the newest run, so ``agentrig show runs/latest`` works after ``agentrig run``."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_runs_latest_follows_the_newest_run(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "AGENTRIG_"))}
    agentrig = str(Path(sys.executable).with_name("agentrig"))
    command = [agentrig, "run", str(REPO / "examples/greeter"), "--agent", "react",
               "--model", f"replay/{REPO / 'examples/greeter/replay.jsonl'}", "-q"]
    first = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    latest = tmp_path / "runs" / "latest"
    assert latest.is_symlink()
    first_target = os.readlink(latest)
    assert (tmp_path / "runs" / first_target / "run.json").is_file() and "/" not in first_target
    time.sleep(1.1)  # run directories are named by the second
    second = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr
    assert os.readlink(latest) != first_target
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == sorted([first_target, os.readlink(latest), "latest"])
    show = subprocess.run([agentrig, "show", "runs/latest"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert show.returncode == 0, show.stderr
    assert "greeter  command_line    passed  submitted" in show.stdout
    assert "2 checkpoints: 2 passed, 0 failed | cost $0.0016 | tokens 9.4k | steps 7" in show.stdout
