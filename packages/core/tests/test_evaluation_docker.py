"""Evaluation in a container on the real engine: the workspace copy, uploads and reports live
inside the container (the runtime's equivalent of the local runtime's host copy)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentrig.evaluation.engine import ReportSpec, TestCommand, run_test_command
from agentrig.runtime.docker import DockerRuntime

pytestmark = pytest.mark.docker


@pytest.fixture
def runtime(tmp_path: Path, docker_test_image: str) -> Iterator[Any]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "answer.txt").write_text("42\n")
    rt = DockerRuntime(workspace, config={"image": docker_test_image})
    yield rt
    rt.cleanup()


def test_upload_and_read_file_in_a_container(runtime: Any, tmp_path: Path) -> None:
    source = tmp_path / "suite"
    (source / "sub").mkdir(parents=True)
    (source / "check.sh").write_text("echo hi\n")
    (source / "sub" / "data.txt").write_text("data\n")
    runtime.upload(source, "/tmp/uploaded")
    assert runtime.read_file("/tmp/uploaded/sub/data.txt") == b"data\n"
    assert runtime.read_file("/tmp/uploaded/nothing") is None
    runtime.upload(source / "check.sh", "/tmp/single/renamed.sh")
    assert runtime.read_file("/tmp/single/renamed.sh") == b"echo hi\n"


def test_tests_run_on_a_copy_inside_the_container(runtime: Any, tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "check.sh").write_text(
        "grep -q 42 answer.txt || exit 1\n"
        "echo scribble > answer.txt\n"
        "echo 0.5 > reward.txt\n"
    )
    record = run_test_command(
        runtime,
        TestCommand(command="sh tests/check.sh", files=[(suite, "tests")], report=ReportSpec.parse("reward:reward.txt"),
                    generated={"note.txt": "generated\n"}),
        report_dir=tmp_path / "reports",
    )
    assert record.error is None and not record.infrastructure_failure, record.output_tail
    assert (record.score, record.passed, record.report) == (0.5, False, "reward.txt")
    assert (tmp_path / "reports" / "reward.txt").read_text() == "0.5\n"
    assert (runtime.workspace / "answer.txt").read_text() == "42\n"
    assert sorted(p.name for p in runtime.workspace.iterdir()) == ["answer.txt"]
    leftovers = runtime.exec(["sh", "-c", "ls /tmp | grep -c tmp. || true"]).stdout.strip()
    assert leftovers == "0"  # the copy was removed
