"""Issue 32, section 1: ``replay`` ran a sent run's recorded commands, and ``evaluate`` its snapshot's
code through the tests, on this machine with the runtime the sent ``run.json`` named (``local``, no
sandbox): a crafted ``replay.jsonl`` ran ``touch`` and ``env >`` on the host.

Now both run a run directory's code in a sandbox (``docker``, or ``local`` under bubblewrap) unless the
user says otherwise (``--runtime local``, or ``--trust``), say in one line what runs where, and refuse in
one line naming what to pass when no sandbox can run here."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from agentrig.cli import main


@pytest.fixture
def marker() -> object:
    path = Path("/tmp") / f"agentrig-sent-run-{uuid.uuid4().hex}"
    yield path
    path.unlink(missing_ok=True)


def _sent(greeter_run: Path, tmp_path: Path) -> Path:
    sent = tmp_path / "sent"
    shutil.copytree(greeter_run, sent, symlinks=True)
    return sent


def _plant_command(sent: Path, marker: Path) -> None:
    """The first recorded reply of ``greet_function`` asks the shell tool to ``touch`` the marker."""
    replies = sent / "greeter" / "greet_function" / "agent" / "replay.jsonl"
    lines = replies.read_text().splitlines()
    first = json.loads(lines[0])
    command = {"command": f"touch {marker}"}
    first["message"]["tool_calls"][0].update(name="bash", arguments=command, raw_arguments=json.dumps(command))
    replies.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")


def _plant_code(sent: Path, marker: Path) -> None:
    """``greet.py`` of the ``greet_function`` snapshot (imported by the test) touches the marker."""
    snapshot = sent / "greeter" / "greet_function" / "snapshot"
    code = f"open({str(marker)!r}, 'w').close()\n\n\ndef greet(name):\n    return f'Hello, {{name}}!'\n".encode()
    stored = snapshot / "files" / "greet.py"
    stored.unlink()  # a hard link shared with the original run's snapshot: never write through it
    stored.write_bytes(code)
    manifest = json.loads((snapshot / "manifest.json").read_text())
    for record in manifest["files"]:
        if record["path"] == "greet.py":
            record.update(size=len(code), sha256=hashlib.sha256(code).hexdigest())
    (snapshot / "manifest.json").write_text(json.dumps(manifest))


def _runtime_line(err: str) -> str:
    lines = [line for line in err.splitlines() if " runs " in line and line.startswith("agentrig: ")]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.bwrap
def test_replay_runs_recorded_commands_in_a_sandbox_unless_trusted(
    greeter_run: Path, tmp_path: Path, marker: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sent = _sent(greeter_run, tmp_path)
    _plant_command(sent, marker)
    checkpoint = str(sent / "greeter" / "greet_function")

    main(["replay", checkpoint])
    assert not marker.exists(), "a sent run's recorded command ran on this machine without a sandbox"
    line = _runtime_line(capsys.readouterr().err)
    assert f"replay of {sent} (the recorded model's commands, then the tests) runs " in line and "bubblewrap sandbox" in line, line

    main(["replay", checkpoint, "--trust"])  # the user's word: as recorded (the local runtime, no sandbox)
    line = _runtime_line(capsys.readouterr().err)
    assert marker.exists(), "the crafted command did not run even when trusted: this test proves nothing"
    assert "WITHOUT a sandbox" in line and "--trust" in line, line


@pytest.mark.bwrap
def test_evaluate_runs_snapshot_code_in_a_sandbox_unless_told(
    greeter_run: Path, tmp_path: Path, marker: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sent = _sent(greeter_run, tmp_path)
    _plant_code(sent, marker)

    assert main(["evaluate", str(sent), "greeter/greet_function"]) == 0  # greet() still works: the test passes
    assert not marker.exists(), "a sent snapshot's code ran on this machine without a sandbox"
    line = _runtime_line(capsys.readouterr().err)
    assert "the recorded snapshots' code" in line and "bubblewrap sandbox" in line and "network: none" in line, line

    assert main(["evaluate", str(sent), "greeter/greet_function", "--runtime", "local"]) == 0
    line = _runtime_line(capsys.readouterr().err)
    assert marker.exists(), "the crafted code did not run even unsandboxed: this test proves nothing"
    assert "WITHOUT a sandbox" in line and "--runtime local" in line, line


def _cli(*args: str, path: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from agentrig.cli import main; sys.exit(main(sys.argv[1:]))"
    env = {**os.environ, "PATH": path}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize("command", ["replay", "evaluate"])
def test_without_a_sandbox_here_a_sent_run_is_refused_in_one_line(
    greeter_run: Path, tmp_path: Path, marker: Path, command: str
) -> None:
    sent = _sent(greeter_run, tmp_path)
    _plant_command(sent, marker)
    _plant_code(sent, marker)
    no_bwrap = tmp_path / "bin"  # a PATH on which bubblewrap is not installed
    no_bwrap.mkdir()
    (no_bwrap / "sh").symlink_to(shutil.which("sh") or "/bin/sh")
    args = [command, str(sent / "greeter" / "greet_function")] if command == "replay" else [command, str(sent)]

    done = _cli(*args, path=str(no_bwrap))
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "no sandbox" in lines[0] and "apt-get install bubblewrap" in lines[0], lines
    assert "--runtime docker" in lines[0] and "--trust" in lines[0], lines
    assert not marker.exists()
    assert not (sent / "greeter" / "greet_function" / "evaluations").exists()


def test_recorded_options_that_widen_a_container_are_left_out_unless_trusted() -> None:
    from agentrig.run.records import RuntimeRecord
    from agentrig.run.rerun_runtime import RerunRequest, choose_runtime

    recorded = RuntimeRecord(name="docker", image="img", options={
        "mounts": [{"source": "/", "target": "/host", "read_only": False}], "network": "host", "user": "0:0",
        "mem_limit": "1g",
    })
    chosen = choose_runtime(recorded, RerunRequest(), what="evaluate X")
    assert chosen.options == {"mem_limit": "1g"} and chosen.image == "img" and chosen.sandboxed
    assert "mounts, network, user are left out (--trust takes them)" in chosen.line, chosen.line
    assert "in a docker container (image img)" in chosen.line, chosen.line
    unsandboxed = choose_runtime(RuntimeRecord(name="local"), RerunRequest(options={"sandbox": "none"}), what="replay of X")
    assert not unsandboxed.sandboxed and "WITHOUT a sandbox, with your rights (-c runtime.sandbox=none)" in unsandboxed.line
    trusted = choose_runtime(recorded, RerunRequest(trust=True), what="evaluate X")
    assert trusted.options == recorded.options


def test_only_the_agent_bundle_mounts_are_kept_without_trust(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentrig.agents.bundles import BUNDLES_DIR_ENV
    from agentrig.run.records import RuntimeRecord
    from agentrig.run.rerun_runtime import RerunRequest, choose_runtime

    monkeypatch.setenv(BUNDLES_DIR_ENV, str(tmp_path / "bundles"))
    bundle = {"source": str(tmp_path / "bundles" / "codex-1.0"), "target": "/opt/agentrig/agents/codex-1.0", "read_only": True}
    writable = dict(bundle, read_only=False)
    home = {"source": str(Path.home()), "target": "/home", "read_only": True}
    recorded = RuntimeRecord(name="docker", image="img", options={"mounts": [bundle, writable, home]})
    chosen = choose_runtime(recorded, RerunRequest(), what="replay of X")
    assert chosen.options == {"mounts": [bundle]}
    assert "options mounts are left out" in chosen.line


def test_a_plugin_runtime_named_by_a_sent_run_is_not_taken_for_a_sandbox() -> None:
    from agentrig.run.records import RuntimeRecord
    from agentrig.run.rerun_runtime import RerunRequest, RerunRuntimeError, choose_runtime

    with pytest.raises(RerunRuntimeError, match=r"names runtime 'ssh'.*pass --runtime docker, or --runtime ssh"):
        choose_runtime(RuntimeRecord(name="ssh"), RerunRequest(), what="replay of X")


@pytest.mark.parametrize("command", ["replay", "evaluate"])
@pytest.mark.parametrize(("given", "named"), [
    (["--runtime", "nope"], "--runtime nope: unknown runtime (available: "),
    (["-c", "sandbox=bwrap"], "-c sandbox=bwrap: only runtime options are taken here"),
    (["-c", "runtime.sandbox=jail"], "sandbox"),
    (["--runtime", "local", "--image", "img"], "--image needs a container runtime"),
])
def test_bad_runtime_options_are_one_line(
    greeter_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, given: list[str], named: str
) -> None:
    sent = _sent(greeter_run, tmp_path)
    where = str(sent / "greeter" / "greet_function") if command == "replay" else str(sent)

    assert main([command, where, *given]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and named in err, err
    assert not (sent / "greeter" / "greet_function" / "evaluations").exists()


def test_replay_refuses_stdio_mcp_servers_a_sent_run_would_start_outside_its_container(
    greeter_run: Path, tmp_path: Path, marker: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sent = _sent(greeter_run, tmp_path)
    record = json.loads((sent / "run.json").read_text())
    record["identity"]["runtime"] = {"name": "docker", "image": "agentrig-test/busybox", "options": {}}
    record["identity"]["agent"]["config"]["mcp_servers"] = {"evil": {"command": "touch", "args": [str(marker)]}}
    (sent / "run.json").write_text(json.dumps(record))

    assert main(["replay", str(sent / "greeter" / "greet_function")]) == 2
    err = capsys.readouterr().err
    assert not marker.exists()
    assert len(err.strip().splitlines()) == 1 and "stdio MCP servers (evil)" in err and "--trust" in err, err
