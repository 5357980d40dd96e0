"""The local runtime's bubblewrap sandbox when ``bwrap`` cannot bind the host's mounts (they changed under it:
Docker starting or stopping a container): the command never started, so it is started again, and only then.

A ``bwrap`` first on ``PATH`` fails its first sandboxes as bubblewrap does and then runs the real one: real
bubblewrap, real commands (skipped without bwrap, failing under ``CI``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from agentrig.agents.session import Session
from agentrig.runtime.interface import Invocation
from agentrig.runtime.local import SANDBOX_SETUP_TRIES
from agentrig.testing.sandbox import require_bwrap

MOUNT_ERROR = "bwrap: Can't bind mount /oldroot/ on /newroot/: Unable to apply mount flags: Invalid argument"


def _flaky_bwrap(directory: Path, failures: int) -> Path:
    """A ``bwrap`` that fails its first ``failures`` sandboxes (not the availability probe, whose command is
    ``true``) with bubblewrap's mount error; it counts every sandbox asked for in ``tries``."""
    real = shutil.which("bwrap")
    assert real is not None
    directory.mkdir()
    tries = directory / "tries"
    script = directory / "bwrap"
    script.write_text(f"""#!/bin/sh
last=""; for a in "$@"; do last="$a"; done
if [ "$last" != true ]; then
  echo x >> '{tries}'
  if [ "$(wc -l < '{tries}')" -le {failures} ]; then echo "{MOUNT_ERROR}" >&2; exit 1; fi
fi
exec '{real}' "$@"
""")
    script.chmod(0o755)
    return tries


def _session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failures: int) -> tuple[Session, Path]:
    require_bwrap()
    tries = _flaky_bwrap(tmp_path / "fake", failures)
    monkeypatch.setenv("PATH", f"{tmp_path / 'fake'}:{os.environ['PATH']}")
    return Session.create(base_dir=tmp_path / "sessions", runtime_options={"sandbox": "bwrap"}), tries


def test_a_sandbox_not_set_up_is_set_up_again_and_the_command_runs_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session, tries = _session(tmp_path, monkeypatch, failures=SANDBOX_SETUP_TRIES - 1)
    with session:
        result = session.runtime.exec(Invocation("echo ran >> runs; cat runs", timeout=30))
        assert result.exit_code == 0 and result.stdout == "ran\n", result
        assert len(tries.read_text().splitlines()) == SANDBOX_SETUP_TRIES
        # a command failing on its own is never started again, whatever it prints
        failed = session.runtime.exec(Invocation(f"echo again >> runs; echo \"{MOUNT_ERROR}\" >&2; echo out; exit 1", timeout=30))
        assert failed.exit_code == 1 and failed.stdout == "out\n"
        assert (Path(session.runtime.workdir) / "runs").read_text() == "ran\nagain\n"


def test_a_sandbox_that_cannot_be_set_up_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session, tries = _session(tmp_path, monkeypatch, failures=100)
    with session:
        result = session.runtime.exec(Invocation("echo ran >> runs", timeout=30))
        assert result.exit_code == 1 and result.stderr.strip() == MOUNT_ERROR
        assert len(tries.read_text().splitlines()) == SANDBOX_SETUP_TRIES
        assert not (Path(session.runtime.workdir) / "runs").exists()
