"""Threat: Codex writes ``shell_snapshots/*.sh`` holding ``declare -x OPENAI_API_KEY=...`` (mode 0644) into its
home under the run directory's ``.workspaces`` during each checkpoint (issue 32, section 2). Such CLI state
stays in the session's home, private to its user (the home 0700, the CLI's state directory 0700) while the
checkpoint runs, and is gone with the session: after the run, no file of the run directory holds the key."""

from __future__ import annotations

import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from agentrig.agents.session import Session
from agentrig.testing.fake_server import FakeReply, RecordedRequest

sys.path.insert(0, str(Path(__file__).parent))

from secret_canary import CASES, canary, files_holding, run_agent, run_env

pytestmark = pytest.mark.timeout(900)


class StateSeen:
    """What the model's second request found of the CLI's state under ``.workspaces`` while the checkpoint ran."""

    def __init__(self, run_dir: Path, key: str) -> None:
        self.run_dir, self.key = run_dir, key
        self.homes: list[tuple[str, int]] = []
        self.snapshots: list[tuple[str, int, bool]] = []

    def look(self, request: RecordedRequest) -> FakeReply:
        for home in (self.run_dir / ".workspaces").glob("*/home"):
            self.homes.append((str(home), stat.S_IMODE(home.stat().st_mode)))
            codex = home / ".codex"
            if codex.is_dir():
                self.homes.append((str(codex), stat.S_IMODE(codex.stat().st_mode)))
            for snapshot in home.rglob("shell_snapshots/*"):
                self.snapshots.append((snapshot.name, stat.S_IMODE(snapshot.stat().st_mode), self.key in snapshot.read_text()))
        return FakeReply(text="Done.")


@pytest.mark.codex_cli
def test_codex_shell_snapshots_are_private_and_gone_with_the_session(fake_openai_server: Any, tmp_path: Path) -> None:
    case = CASES["codex"]
    key = canary("codex")
    seen = StateSeen(tmp_path / "run", key)
    fake_openai_server.add_reply("Working.", tool_calls=[case.shell("echo done > done.txt")])  # type: ignore[misc]
    fake_openai_server.respond_with(seen.look)
    env = run_env(case, key)
    result = run_agent(case, fake_openai_server, tmp_path, env)
    assert result.returncode == 0, result.stdout + result.stderr
    # while the checkpoint ran, the CLI's snapshot of its environment held the key: only its user could reach it
    assert seen.snapshots and any(has_key for _, _, has_key in seen.snapshots), seen.snapshots
    assert seen.homes and all(mode == 0o700 for _, mode in seen.homes), seen.homes
    # nothing of it outlived the session
    assert files_holding(tmp_path / "run", key) == []
    assert list((tmp_path / "run" / ".workspaces").glob("*/home")) == []


def test_a_session_home_is_private_whatever_the_umask(tmp_path: Path) -> None:
    import os

    old = os.umask(0o022)
    try:
        with Session.create(runtime="local", base_dir=tmp_path) as session:
            assert stat.S_IMODE(session.home.stat().st_mode) == 0o700
            directory = session.directory
            assert directory is not None
        assert not directory.exists()
    finally:
        os.umask(old)
