"""A Harbor task's compose file cannot hand a container a writable bind of the host's files.

Compose reads a short-syntax volume's options in order, the last ``ro``/``rw`` winning, and every part
after the target as options: ``./:/app:ro,rw`` and ``./:/app:ro:rw`` are writable binds of the task's
own directory (a container would then rewrite the task's tests, or plant links in them). The check
passed them because it asked whether ``ro`` was among the options. Each is refused at load, before
any engine is asked, in one line naming the file and the service; ``problems list`` and ``run`` alike.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from problem_kit import entries, harbor_task, one_error_line, run_cli

COMPOSE = "services:\n  main: {{}}\n  db:\n    image: agentrig-test/busybox\n    volumes:\n      - {volume}\n"


def _task(root: Path, volume: str) -> Path:
    task = harbor_task(root / "task")
    (task / "environment").mkdir(exist_ok=True)
    (task / "environment" / "Dockerfile").write_text("FROM agentrig-test/busybox\n")
    (task / "environment" / "docker-compose.yaml").write_text(COMPOSE.format(volume=volume))
    return task


@pytest.mark.parametrize(
    ("volume", "message"),
    [
        ("'./:/app:ro,rw'", "a writable mount of the task's own files"),  # the last mode wins: rw
        ("'./:/app:ro:rw'", "a writable mount of the task's own files"),  # a fourth part is options too
        ("'./:/app:rw,nocopy,ro,cached,rw'", "a writable mount of the task's own files"),
        ("'./:/app:ro,z'", "mount option 'z' relabels the host's files (SELinux)"),
        ("'./:/app:Z,ro'", "mount option 'Z' relabels the host's files (SELinux)"),
        ("'./:/app:ro,rshared'", "mount option 'rshared': mount propagation to the host is not supported"),
        ("'./:/app:ro,slave'", "mount option 'slave': mount propagation to the host is not supported"),
        ("{type: bind, source: ./, target: /app, read_only: false}", "a writable mount of the task's own files"),
        ("{type: bind, source: ./, target: /app, read_only: 'no'}", "a writable mount of the task's own files"),
        ("{type: bind, source: ./, target: /app, read_only: true, bind: {selinux: z}}",
         "relabelling the host's files (SELinux) is not supported"),
    ],
)
def test_a_bind_that_ends_writable_or_reaches_the_host_is_refused_at_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], volume: str, message: str
) -> None:
    task = _task(tmp_path, volume)
    before = entries(task)
    for argv in (["problems", "list", str(task)],
                 ["run", str(task), "--agent", "oracle", "--output", str(tmp_path / "run")]):
        status, _, err = run_cli(capsys, *argv)
        line = one_error_line(err)
        assert status == 2, err
        assert str(task / "environment" / "docker-compose.yaml") in line and "services.db.volumes[0]" in line, line
        assert message in line, line
    assert entries(task) == before and not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "volume",
    ["'./:/app:rw,ro'", "'./:/app:rw:ro'", "'./:/app:ro,nocopy,rprivate'",
     "{type: bind, source: ./, target: /app, read_only: 'yes'}", "'data:/data:rw'"],
)
def test_a_bind_that_ends_read_only_still_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str], volume: str) -> None:
    task = _task(tmp_path, volume)
    if "data:" in volume:
        (task / "environment" / "docker-compose.yaml").write_text(
            COMPOSE.format(volume=volume) + "volumes:\n  data: {}\n"
        )
    status, out, err = run_cli(capsys, "problems", "list", str(task))
    assert status == 0, err
    assert "task" in out
