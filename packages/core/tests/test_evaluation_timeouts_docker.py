"""Timeouts in a container on the real engine: a test command whose time is up is interrupted inside the
container (and writes what it has) before it is killed; a Harbor verifier that timed out keeps the reward
it wrote (its ``[verifier] timeout_sec`` stays Harbor's rule)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentrig.evaluation.engine import ReportSpec, TestCommand, run_limited, run_test_command
from agentrig.formats.resolve import load_problem
from agentrig.run.evaluation import evaluate_checkpoint
from agentrig.run.sessions import open_session
from agentrig.runtime.docker import DockerRuntime

pytestmark = pytest.mark.docker

HARBOR_TASKS = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "harbor-tasks"

#: A test runner that writes its report of what ran when interrupted, as pytest does on SIGINT.
RUNNER = """import json, time
done = []
try:
    for name in ("a", "b", "c"):
        time.sleep(0.2 if name == "a" else 60)
        done.append(name)
except KeyboardInterrupt:
    pass
json.dump({"tests": [{"nodeid": n, "outcome": "passed", "call": {"outcome": "passed"}} for n in done],
           "summary": {"collected": 3}}, open("report.json", "w"))
raise SystemExit(2)
"""


@pytest.fixture
def runtime(tmp_path: Path, node_test_image: str) -> Iterator[Any]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "runner.py").write_text(RUNNER)
    rt = DockerRuntime(workspace, config={"image": node_test_image})
    yield rt
    rt.cleanup()


def test_the_interrupt_reaches_the_command_in_the_container(runtime: Any, tmp_path: Path) -> None:
    result, timed_out = run_limited(runtime, "python3 runner.py", cwd=runtime.workdir, env={}, limit=3.0, grace=10)
    assert timed_out and result.exit_code == 2 and not result.killed  # it ended on the interrupt, not the kill
    record = run_test_command(
        runtime, TestCommand(command="python3 runner.py", timeout=3.0, report=ReportSpec.parse("pytest-json:report.json")),
        report_dir=tmp_path / "reports",
    )
    assert record.timed_out and record.passed is False and not record.infrastructure_failure, record.error
    assert [t.id for t in record.tests] == ["a"] and record.not_run == 2 and record.score == pytest.approx(1 / 3)
    assert (tmp_path / "reports" / "report.json").is_file()
    left = runtime.exec("for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done | grep -c '[r]unner.py' || true")
    assert left.stdout.strip() == "0"  # nothing outlives it


def test_a_harbor_verifier_that_timed_out_keeps_the_reward_it_wrote(tmp_path: Path, docker_engine: Any) -> None:
    task_dir = tmp_path / "tasks" / "word-count"
    shutil.copytree(HARBOR_TASKS / "word-count", task_dir, symlinks=True)
    toml = task_dir / "task.toml"
    toml.write_text(toml.read_text().replace("timeout_sec = 60.0", "timeout_sec = 2.0"))
    (task_dir / "tests" / "test.sh").write_text("echo 0.5 > /logs/verifier/reward.txt\necho halfway\nsleep 30\n")
    task = load_problem(task_dir)
    session = open_session("docker", None, None, task.name, tmp_path / "sessions", {}, problem=task)
    try:
        record = evaluate_checkpoint(session.runtime, session.workspace.path, task, task.checkpoints[0],
                                     report_dir=tmp_path / "evaluation", session_timeout=0.5)
    finally:
        session.close()
    # Harbor's own limit (task.toml), not --test-session-timeout: the verifier ran 2 s and wrote its reward
    assert record.timed_out and record.passed is False and not record.infrastructure_failure
    assert record.score == 0.5 and record.report == "verifier/reward.txt"
    assert (tmp_path / "evaluation" / "verifier" / "reward.txt").read_text() == "0.5\n"
    assert (record.test_elapsed or 0) >= 2.0  # its own 2 s fired, not the session's 0.5 s (timed_out: not the sleep's end)
