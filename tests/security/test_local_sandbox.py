"""The local runtime's bubblewrap sandbox (``-c runtime.sandbox=bwrap``): each escape of an agent's command.

Without a sandbox, a command of the local runtime runs as the user running
agentrig: it reads agentrig's ``/proc/<pid>/environ`` (the API key), reaches
the Docker engine's socket and the host's loopback, writes anywhere the user
can. In the sandbox it cannot. Real bubblewrap, real sockets, real runs; the
tests skip without bubblewrap and fail under ``CI``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "fixtures" / "scripted-agent" / "src"))

from agentrig_scripted import testkit
from escape_sockets import PROBE, abstract_listener, tcp_listener, unix_listener

from agentrig.agents.session import Session
from agentrig.cli import main
from agentrig.run.records import CheckpointResultLine
from agentrig.runtime.interface import Invocation
from agentrig.runtime.local import MARKER_ENV
from agentrig.runtime.proctree import is_running, marked_processes
from agentrig.runtime.sandbox import bwrap_problem
from agentrig.testing.sandbox import require_bwrap

API_KEY = "sk-test-not-a-secret"  # what testkit.cli_env gives the agentrig process


@pytest.fixture
def sandboxed(tmp_path: Path) -> Iterator[Session]:
    """A local session whose commands run in the bubblewrap sandbox (skips without bwrap, fails under CI)."""
    require_bwrap()
    with Session.create(base_dir=tmp_path / "sessions", runtime_options={"sandbox": "bwrap"}) as made:
        yield made


def _probe(session: Session, kind: str, address: str) -> str:
    result = session.runtime.exec(Invocation([sys.executable, "-I", "-S", "-c", PROBE, kind, address], timeout=30))
    assert result.exit_code == 0, result.stderr
    return result.stdout


def _run_dir_text(directory: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in directory.rglob("*") if p.is_file())


def test_local_sandbox_hides_agentrigs_environment(tmp_path: Path, fake_openai_server) -> None:
    """The agent's command reads agentrig's /proc/<pid>/environ: the API key reached trajectory.jsonl."""
    require_bwrap()
    fake_openai_server.respond_with(testkit.solver())
    steal = testkit.bash("cat /proc/$PPID/environ; for f in /proc/[0-9]*/environ; do cat $f; done; echo")
    # the test writes where it runs (a workspace copy, writable in the sandbox too)
    problem = testkit.make_problem(tmp_path / "p", "steal", [("Look around.", [steal], "touch tested && test -f tested\n")])
    env = testkit.cli_env(tmp_path, fake_openai_server.base_url)
    leaked, sandboxed = tmp_path / "leaked", tmp_path / "sandboxed"

    def run(out: Path, *options: str) -> None:
        proc = subprocess.run(
            [testkit.agentrig_bin(), "run", str(problem), "--agent", "scripted", "--model", "openai/gpt-4o-mini",
             "--output", str(out), "--quiet", *options],
            env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path,
        )
        assert proc.returncode == 0, proc.stderr

    # the unsandboxed local runtime: the probe works, the key reaches the agent's output (where the one scrub
    # every recorded step passes through redacts it: the key itself is in no file either way)
    run(leaked)
    leaked_text = _run_dir_text(leaked)
    assert "[redacted]" in leaked_text and API_KEY not in leaked_text
    run(sandboxed, "-c", "runtime.sandbox=bwrap")
    (line,) = (sandboxed / "results.jsonl").read_text().splitlines()
    assert CheckpointResultLine.model_validate_json(line).passed is True
    text = _run_dir_text(sandboxed)
    assert "/proc/$PPID/environ" in text  # the command ran and was recorded
    assert API_KEY not in text and "[redacted]" not in text  # the key never reached the agent


def test_local_sandbox_cannot_read_agentrigs_credential_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_bwrap()
    # outside /tmp (the sandbox's /tmp is its own, which would hide the file whatever the sandbox did)
    config = Path("/var/tmp") / f"agentrig-test-{uuid.uuid4().hex}"
    (config / "agentrig" / "credentials").mkdir(parents=True)
    key = config / "agentrig" / "credentials" / "openai"
    key.write_text("sk-from-the-credentials-file")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    try:
        with Session.create(base_dir=tmp_path, runtime_options={"sandbox": "bwrap"}) as session:
            result = session.runtime.exec(f"cat {key}")
            beside = session.runtime.exec(f"ls {config}/agentrig")  # the directory above stays visible
    finally:
        key.unlink()
        for directory in (key.parent, key.parent.parent, config):
            directory.rmdir()
    assert "sk-from-the-credentials-file" not in result.stdout and result.exit_code != 0
    assert beside.stdout.split() == ["credentials"]


def test_local_sandbox_cannot_reach_the_docker_socket(
    sandboxed: Session, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The engine's socket lives under /run (a read-only bind would not stop connect()): a stand-in there,
    # and one named by DOCKER_HOST anywhere else.
    run_dir = Path("/run") if os.access("/run", os.W_OK) else Path(os.environ.get("XDG_RUNTIME_DIR", "/nonexistent"))
    if not os.access(run_dir, os.W_OK):
        pytest.skip("neither /run nor XDG_RUNTIME_DIR is writable here: no place for a stand-in socket")
    stand_in = run_dir / f"agentrig-test-{uuid.uuid4().hex}" / "docker.sock"
    elsewhere = tmp_path / "engine" / "docker.sock"
    monkeypatch.setenv("DOCKER_HOST", f"unix://{elsewhere}")
    try:
        with unix_listener(stand_in) as (under_run, path), unix_listener(elsewhere) as (named, named_path):
            outputs = [_probe(sandboxed, "unix", path), _probe(sandboxed, "unix", named_path)]
    finally:
        stand_in.parent.rmdir()
    assert all(output.startswith("REFUSED") for output in outputs), outputs
    assert under_run.accepted == 0 and named.accepted == 0


@pytest.mark.docker
def test_local_sandbox_cannot_reach_the_real_docker_socket(sandboxed: Session, docker_engine: object) -> None:
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    if not host.startswith("unix://"):
        pytest.skip(f"the Docker engine is not on a Unix socket here ({host})")
    output = _probe(sandboxed, "unix", host[len("unix://") :])
    assert output.startswith("REFUSED"), output


def test_local_sandbox_cannot_connect_to_tcp_on_loopback(sandboxed: Session) -> None:
    with tcp_listener() as (listener, port):
        output = _probe(sandboxed, "tcp", port)
    assert output.startswith("REFUSED"), output
    assert listener.accepted == 0


def test_local_sandbox_cannot_connect_to_abstract_unix_socket(sandboxed: Session) -> None:
    with abstract_listener() as (listener, name):
        output = _probe(sandboxed, "abstract", name)
    assert output.startswith("REFUSED"), output
    assert listener.accepted == 0


def test_local_sandbox_with_network_host_reaches_loopback(tmp_path: Path) -> None:
    """``-c runtime.network=host`` gives the host's network back (the same option name as the docker runtime's)."""
    require_bwrap()
    with (
        Session.create(base_dir=tmp_path, runtime_options={"sandbox": "bwrap", "network": "host"}) as session,
        tcp_listener() as (listener, port),
    ):
        output = _probe(session, "tcp", port)
    assert output.startswith("CONNECTED"), output
    assert listener.accepted == 1


def test_local_sandbox_cannot_write_outside_the_workspace(sandboxed: Session) -> None:
    # outside /tmp (the sandbox's /tmp is its own): a directory of the host, bound read-only
    outside = Path("/var/tmp") / f"agentrig-test-{uuid.uuid4().hex}"
    outside.mkdir()
    try:
        (outside / "kept.txt").write_text("kept")
        result = sandboxed.runtime.exec(
            f"echo x > {outside}/new.txt; echo x > {outside}/kept.txt; rm -f {outside}/kept.txt; "
            "echo y > ~/in-home.txt; echo z > mine.txt"
        )
        assert result.stderr.count("Read-only file system") == 3, result.stderr
        assert sorted(p.name for p in outside.iterdir()) == ["kept.txt"] and (outside / "kept.txt").read_text() == "kept"
    finally:
        for path in outside.iterdir():
            path.unlink()
        outside.rmdir()
    assert (sandboxed.workspace.path / "mine.txt").read_text() == "z\n"
    assert (sandboxed.home / "in-home.txt").read_text() == "y\n"  # the session's HOME stays writable


def test_local_sandbox_cannot_signal_agentrig(sandboxed: Session) -> None:
    result = sandboxed.runtime.exec(f"kill -0 {os.getpid()} && echo SIGNALLED; ls /proc | grep -c '^[0-9]'")
    assert "SIGNALLED" not in result.stdout
    assert int(result.stdout.split()[-1]) < 10  # only the sandbox's own processes


def test_local_sandbox_timeout_leaves_no_process_behind(sandboxed: Session) -> None:
    runtime = sandboxed.runtime
    result = runtime.exec(Invocation("sleep 60 & setsid sleep 60 & sleep 60", timeout=1.0))
    assert result.timed_out and result.killed
    runtime.exec("setsid sleep 60 > /dev/null 2>&1 &")
    runtime.kill()
    marker = runtime.environment[MARKER_ENV]
    assert [pid for pid in marked_processes(MARKER_ENV, marker) if is_running(pid)] == []


def test_local_sandbox_without_bwrap_is_refused_in_one_line_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], plugin_registry
) -> None:
    from agentrig_scripted import plugin

    plugin_registry.register(plugin, "scripted")
    problem = testkit.make_problem(tmp_path / "p", "hello", [("Say hi.", [testkit.write_file("hi.txt", "hi\n")], None)])
    empty = tmp_path / "no-bwrap"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # a machine without bubblewrap
    bwrap_problem.cache_clear()
    out = tmp_path / "run"
    try:
        status = main(["run", str(problem), "--agent", "scripted", "--model", "openai/gpt-4o-mini",
                       "-c", "runtime.sandbox=bwrap", "--output", str(out)])
    finally:
        bwrap_problem.cache_clear()
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("agentrig: error:")]
    assert status == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert "option 'sandbox'" in lines[0] and "apt-get install bubblewrap" in lines[0]
    assert not out.exists()
