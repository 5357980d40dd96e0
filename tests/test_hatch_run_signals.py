"""The README's commands go through ``hatch run agentrig ...``: the documented exit statuses and the clean
stop hold through it (issue 37). The real hatch runs the real ``agentrig`` with the repository's own
hatch.toml script (read from it), in an environment pointing at this interpreter's (nothing installed).

- Ctrl-C (SIGINT to the terminal's process group): 130 for ``run``, 0 for a stopped viewer (hatch runs
  the command through ``sh -c``; without the script's ``exec`` the shell dies of SIGINT and hatch exits 254).
- SIGTERM to hatch alone (hatch dies at once and passes nothing on): ``agentrig run`` stops too, records
  the run as interrupted, and outlives nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import tomllib

REPO = Path(__file__).resolve().parents[1]


def _hatch() -> str:
    found = shutil.which("hatch")
    if found is None:
        message = "hatch is not installed (the README's commands run through it): pip install hatch"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A hatch project whose default environment is this interpreter's, with the repository's ``agentrig`` script."""
    scripts = tomllib.loads((REPO / "hatch.toml").read_text())["envs"]["default"]["scripts"]
    assert scripts["agentrig"].startswith("exec agentrig")
    root = tmp_path / "project"
    root.mkdir()
    lines = ["[envs.default]", 'type = "virtual"', f"path = {json.dumps(sys.prefix)}", "skip-install = true", "",
             "[envs.default.scripts]", *(f"{name} = {json.dumps(command)}" for name, command in scripts.items())]
    (root / "hatch.toml").write_text("\n".join(lines) + "\n")
    problem = tmp_path / "slow"
    (problem / "sol").mkdir(parents=True)
    (problem / "sol" / "out.txt").write_text("x\n")
    (problem / "c1.md").write_text("wait\n")
    (problem / "problem.yaml").write_text(
        "name: slow\ncheckpoints:\n  - name: c1\n    prompt: c1.md\n    test: sleep 600\n    solution: sol\n"
    )
    return root


def _start(project: Path, *argv: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HATCH_ENV")}  # not the test env's name
    return subprocess.Popen(
        [_hatch(), "run", "agentrig", *argv], cwd=project, env=env, start_new_session=True, text=True,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )


def _wait_for(process: subprocess.Popen[str], text: str) -> str:
    """Read the output until ``text`` (a line the command prints once it is under way)."""
    assert process.stdout is not None
    seen = ""
    for line in process.stdout:
        seen += line
        if text in line:
            return seen
    raise AssertionError(f"'{text}' never came; output: {seen}")


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(word) for word in text.split()]


def _gone(pid: int, patience: float = 120.0) -> bool:
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.2)
    return False


def test_ctrl_c_on_run_exits_130_through_hatch_run(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    process = _start(project, "run", str(tmp_path / "slow"), "--agent", "oracle", "-o", str(out))
    try:
        _wait_for(process, "checkpoint 1/1 started")
        os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        rest, _ = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, rest
    assert "Continue with: agentrig run" in rest
    assert json.loads((out / "run.json").read_text())["status"] == "interrupted"


def test_ctrl_c_on_view_exits_0_through_hatch_run(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = subprocess.run(
        [str(Path(sys.executable).with_name("agentrig")), "run", str(tmp_path / "slow"), "--agent", "oracle", "-o", str(out),
         "--test-timeout", "1", "-q"], capture_output=True, text=True, timeout=300,
    )
    assert (out / "run.json").is_file(), done.stderr
    process = _start(project, "view", str(out), "--port", "0")
    try:
        _wait_for(process, "serving http://")
        os.killpg(process.pid, signal.SIGINT)
        rest, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 0, rest


def test_sigterm_to_hatch_stops_the_run_it_started(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    process = _start(project, "run", str(tmp_path / "slow"), "--agent", "oracle", "-o", str(out))
    try:
        _wait_for(process, "checkpoint 1/1 started")
        agentrig = _children(process.pid)
        assert len(agentrig) == 1  # hatch's child is agentrig itself (the script's exec), no shell between
        assert "agentrig" in Path(f"/proc/{agentrig[0]}/cmdline").read_text().replace("\0", " ")
        process.send_signal(signal.SIGTERM)  # hatch alone, as a service manager or `kill PID` does
        process.wait(timeout=60)
        assert _gone(agentrig[0]), "agentrig outlived the hatch that started it"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        for pid in _children(process.pid):
            os.kill(pid, signal.SIGKILL)
    record = json.loads((out / "run.json").read_text())
    assert record["status"] == "interrupted"  # stopped as after any SIGTERM: cleanup done, records written
