"""What is particular to the ``local`` runtime: its options, limits and teardown."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from agentrig.runtime.decoding import OutputBuffer, StreamDecoder
from agentrig.runtime.errors import RuntimeSetupError
from agentrig.runtime.interface import Invocation
from agentrig.runtime.local import LocalRuntime
from agentrig.workspace import WorkspaceError


def test_output_beyond_the_limit_keeps_the_end(tmp_path: Path) -> None:
    runtime = LocalRuntime(tmp_path, config={"max_output": 1000})
    result = runtime.exec("seq 1 10000")
    assert result.output_truncated
    assert len(result.stdout) == 1000
    assert result.stdout.endswith("9999\n10000\n")


def test_signal_death_reads_like_a_shell(tmp_path: Path) -> None:
    runtime = LocalRuntime(tmp_path)
    assert runtime.exec("kill -9 $$").exit_code == 137
    assert runtime.exec("kill -15 $$").exit_code == 143


def test_inherit_env_is_configurable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTRIG_PASS_ME", "yes")
    runtime = LocalRuntime(tmp_path, config={"inherit_env": ["PATH", "AGENTRIG_PASS_ME"]})
    assert runtime.exec('echo "$AGENTRIG_PASS_ME"').stdout == "yes\n"
    assert "AGENTRIG_PASS_ME" not in LocalRuntime(tmp_path).environment


def test_bad_workspace_and_options_are_named(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match=r"workspace '.*nowhere' is not an existing directory"):
        LocalRuntime(tmp_path / "nowhere")
    with pytest.raises(RuntimeSetupError, match="runtime 'local' option 'max_output'"):
        LocalRuntime(tmp_path, config={"max_output": 0})
    with pytest.raises(ValueError, match="timeout must be positive"):
        LocalRuntime(tmp_path).exec(Invocation("true", timeout=0))
    with pytest.raises(ValueError, match="empty command"):
        LocalRuntime(tmp_path).exec([])


def test_env_errors_never_show_values(tmp_path: Path) -> None:
    with pytest.raises(ValueError) as info:
        LocalRuntime(tmp_path).exec(Invocation("true", env={"BAD=NAME": "sk-secret"}))
    assert "sk-secret" not in str(info.value)


def test_a_bad_working_directory_is_reported(tmp_path: Path) -> None:
    result = LocalRuntime(tmp_path).exec(Invocation("true", cwd="missing"))
    assert result.exit_code == 126 and "missing" in result.stderr


def test_decoder_handles_every_split_point() -> None:
    data = "a€𝄞ö\n".encode()
    for cut in range(len(data) + 1):
        decoder = StreamDecoder()
        assert decoder.feed(data[:cut]) + decoder.feed(data[cut:]) + decoder.finish() == "a€𝄞ö\n"
    decoder = StreamDecoder()
    assert decoder.feed(b"x\xe2\x82") + decoder.finish() == "x\ufffd"


def test_output_buffer_keeps_the_tail() -> None:
    buffer = OutputBuffer(5)
    for part in ["abc", "def", "gh"]:
        buffer.append(part)
    assert buffer.text() == "defgh" and buffer.truncated


SCRIPT = """
import os, sys, time
from agentrig.agents.session import Session
from agentrig.runtime.teardown import install_signal_handlers
install_signal_handlers()
session = Session.create(base_dir=sys.argv[1])
session.runtime.exec("setsid sleep 60 > /dev/null 2>&1 & echo $! > pids")
process = session.runtime.start("sleep 60")
print(session.directory, flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_tears_the_session_down(tmp_path: Path, signum: int) -> None:
    script = tmp_path / "victim.py"
    script.write_text(textwrap.dedent(SCRIPT))
    base = tmp_path / "sessions"
    child = subprocess.Popen([sys.executable, str(script), str(base)], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    directory = Path(child.stdout.readline().strip())
    pids = [int(p) for p in (directory / "workspace" / "pids").read_text().split()]
    child.send_signal(signum)
    code = child.wait(timeout=20)
    # SIGINT: an uncaught KeyboardInterrupt, which Python reports by dying of SIGINT
    assert code == (143 if signum == signal.SIGTERM else -signal.SIGINT)
    assert not directory.exists()
    deadline = time.monotonic() + 5
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in pids)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return ") Z " not in handle.read()
    except FileNotFoundError:
        return False


def test_kill_marked_finds_a_process_that_one_scan_missed(monkeypatch: pytest.MonkeyPatch) -> None:
    # a process in the middle of execve shows no environment for an instant: the first scan of /proc
    # misses it (seen once in 200 kills of `setsid sleep 60` on a loaded machine); a later scan must not
    from agentrig.runtime import proctree

    marker = f"agentrig-test-{os.getpid()}-{time.monotonic_ns()}"
    child = subprocess.Popen(["sleep", "60"], env={**os.environ, "AGENTRIG_TEST_MARK": marker})
    try:
        real = proctree.marked_processes
        scans: list[list[int]] = []

        def first_scan_misses(name: str, value: str) -> list[int]:
            found = real(name, value) if scans else []
            scans.append(found)
            return found

        monkeypatch.setattr(proctree, "marked_processes", first_scan_misses)
        assert proctree.kill_marked("AGENTRIG_TEST_MARK", marker) == 1
        assert scans[0] == [] and child.pid in scans[1]
        assert child.wait(timeout=5) == -signal.SIGKILL
    finally:
        child.kill()
        child.wait()


def test_kill_tree_returns_once_the_tree_is_gone(tmp_path: Path) -> None:
    # a signal is delivered asynchronously: kill_tree waits until what it signalled no longer runs
    # (here a child that takes 0.5 s to die after SIGTERM), so a check right after it sees no survivor
    from agentrig.runtime import proctree

    script = "trap 'sleep 0.5; exit 0' TERM; echo ready; while :; do sleep 0.05; done"
    parent = subprocess.Popen(["sh", "-c", f"sh -c \"{script}\" & wait"], stdout=subprocess.PIPE, start_new_session=True)
    try:
        assert parent.stdout is not None and parent.stdout.readline() == b"ready\n"
        (child,) = proctree.descendants(parent.pid)[:1]
        proctree.kill_tree(parent.pid, sig=signal.SIGTERM)
        assert not proctree.is_running(child)  # it took 0.5 s to die: kill_tree waited for it
    finally:
        proctree.kill_tree(parent.pid)
        parent.wait()
