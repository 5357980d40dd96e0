"""The real_model tier waits for a background build of its server's environment (``.ci/run``)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from agentrig.testing import llama


def _status(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, wait: str = "30") -> Path:
    status = tmp_path / "llama-build.status"
    monkeypatch.setenv("AGENTRIG_TEST_LLAMA_BUILD_STATUS", str(status))
    monkeypatch.setenv("AGENTRIG_TEST_LLAMA_BUILD_WAIT", wait)
    return status


def test_no_build_under_way_means_no_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTRIG_TEST_LLAMA_BUILD_STATUS", raising=False)
    assert llama._wait_for_build() is None


def test_a_build_that_ends_ok_while_waiting_lets_the_tier_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    status = _status(monkeypatch, tmp_path)

    def finish() -> None:
        time.sleep(0.5)
        status.with_suffix(".tmp").write_text("ok\n")
        status.with_suffix(".tmp").rename(status)

    writer = threading.Thread(target=finish)
    writer.start()
    try:
        assert llama._wait_for_build() is None
    finally:
        writer.join()
    assert status.read_text() == "ok\n"


def test_a_failed_build_is_said_with_the_end_of_its_log(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    status = _status(monkeypatch, tmp_path)
    (tmp_path / "llama-build.log").write_text("compiling...\nerror: no space left on device\n")
    status.write_text("failed\n")
    problem = llama._wait_for_build()
    assert problem is not None and "'failed'" in problem and "no space left on device" in problem
    # the tier's rule then fails (CI) or skips the test with that line
    monkeypatch.setattr(llama, "_problem", [])
    path, reason = llama._model_path()
    assert path is None and reason == problem


def test_a_build_that_does_not_end_in_time_is_said(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    status = _status(monkeypatch, tmp_path, wait="0.1")
    problem = llama._wait_for_build()
    assert problem is not None and "did not end within 0.1 s" in problem and str(status) in problem


def test_a_bad_wait_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _status(monkeypatch, tmp_path, wait="soon")
    assert llama._wait_for_build() == "AGENTRIG_TEST_LLAMA_BUILD_WAIT must be a number of seconds, not 'soon'"
