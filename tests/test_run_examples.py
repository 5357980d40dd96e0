"""The README's first command: the greeter example with the react agent, offline, from a recorded replay."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from agentrig.run.records import CheckpointResultLine, RunRecord

REPO = Path(__file__).resolve().parents[1]


def test_readme_demo_runs_offline(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "AGENTRIG_"))}
    env["OPENAI_BASE_URL"] = "http://127.0.0.1:9"  # nothing listens: a model call would fail
    agentrig = str(Path(sys.executable).with_name("agentrig"))
    out = tmp_path / "run"
    proc = subprocess.run(
        [agentrig, "run", "examples/greeter", "--agent", "react",
         "--model", "replay/examples/greeter/replay.jsonl", "--output", str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "2 checkpoints: 2 passed, 0 failed" in proc.stdout
    run = RunRecord.model_validate_json((out / "run.json").read_bytes())
    assert run.status == "completed" and run.identity.agent.type == "react"
    lines = [CheckpointResultLine.model_validate_json(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert [(x.checkpoint, x.status, x.stop_reason) for x in lines] == [
        ("greet_function", "passed", "submitted"), ("command_line", "passed", "submitted")
    ]
    replay = subprocess.run([agentrig, "replay", str(out / "greeter" / "command_line")],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert replay.returncode == 0, replay.stderr
    assert "greeter/command_line: replay passed, matches the recorded result (passed)" in replay.stdout
