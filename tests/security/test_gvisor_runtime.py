"""The agent's container under gVisor (``-c runtime.oci_runtime=runsc``): defence in depth for its commands.

Under ``runsc`` the agent's commands meet gVisor's kernel, not the host's: what they try against the
kernel (reading the host's processes, a link planted for agentrig to follow) stays in the sandbox,
and a timeout still ends the command's whole tree. An OCI runtime the engine lacks is refused when the
run starts, in one line saying how to install and register it. Real engine, real ``runsc``: the tests
marked ``runsc`` skip without it and fail under ``CI`` (``.ci/run`` installs and registers it).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "fixtures" / "scripted-agent" / "src"))

from agentrig_scripted import testkit

from agentrig.run.records import CheckpointResultLine
from agentrig.runtime.docker import DockerRuntime
from agentrig.runtime.interface import Invocation

pytestmark = pytest.mark.docker

API_KEY = "sk-test-not-a-secret"  # what testkit.cli_env gives the agentrig process


def _run(tmp_path: Path, problem: Path, image: str, base_url: str, *options: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path / "run"
    done = subprocess.run(
        [testkit.agentrig_bin(), "run", str(problem), "--agent", "scripted", "--model", "openai/gpt-4o-mini",
         "--runtime", "docker", "--image", image, "--output", str(out), "--quiet", *options],
        env=testkit.cli_env(tmp_path, base_url), capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    return done, out


def test_an_oci_runtime_the_engine_lacks_is_refused_in_one_line(
    tmp_path: Path, fake_openai_server, docker_test_image: str
) -> None:
    fake_openai_server.respond_with(testkit.solver())
    problem = testkit.make_problem(tmp_path / "p", "hello", [("Say hi.", [testkit.bash("echo hi")], "true\n")])
    done, out = _run(tmp_path, problem, docker_test_image, fake_openai_server.base_url,
                     "-c", "runtime.oci_runtime=agentrig-no-such-runtime")
    assert done.returncode == 2, done.stderr
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("agentrig: error:")]
    assert "the Docker engine has no OCI runtime 'agentrig-no-such-runtime'" in line
    assert "dockerd --add-runtime agentrig-no-such-runtime=PATH" in line and "Traceback" not in done.stderr
    assert fake_openai_server.model_requests == [] and not (out / "hello").exists()


@pytest.mark.runsc
def test_the_agents_commands_meet_gvisors_kernel_and_plant_nothing_for_agentrig(
    tmp_path: Path, fake_openai_server, docker_test_image: str
) -> None:
    """The agent's commands run on gVisor's kernel; a link it plants (``tests -> <host dir>``) and its
    look at every process's environment stay in the sandbox; the checkpoint passes."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "check_1.sh").write_text("the host's own file\n")
    fake_openai_server.respond_with(testkit.solver())
    probe = testkit.bash(
        f"dmesg > kernel.txt 2>&1; uname -r >> kernel.txt; ln -s {victim} tests; "
        "cat /proc/[0-9]*/environ > environ.txt 2>/dev/null; true"
    )
    check = "grep -q gVisor kernel.txt && test ! -L tests && test -f tests/check_1.sh\n"
    problem = testkit.make_problem(tmp_path / "p", "kernel", [("Look around.", [probe], check)])
    done, out = _run(tmp_path, problem, docker_test_image, fake_openai_server.base_url, "-c", "runtime.oci_runtime=runsc")
    assert done.returncode == 0, done.stderr
    (line,) = [CheckpointResultLine.model_validate_json(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert line.passed is True
    snapshot = out / "kernel" / "checkpoint_1" / "snapshot" / "files"
    assert "gVisor" in (snapshot / "kernel.txt").read_text()
    assert API_KEY not in (snapshot / "environ.txt").read_text()
    assert (victim / "check_1.sh").read_text() == "the host's own file\n" and len(list(victim.iterdir())) == 1


@pytest.mark.runsc
def test_a_timeout_under_gvisor_ends_the_whole_tree(tmp_path: Path, docker_test_image: str) -> None:
    """The exec's processes are gVisor's, not the host's: the tree is ended from inside the container."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    runtime = DockerRuntime(workspace, config={"image": docker_test_image, "oci_runtime": "runsc"})
    try:
        started = time.monotonic()
        result = runtime.exec(Invocation("sleep 300 & sleep 200", timeout=2))
        left = runtime.exec("ps -o args | grep -c '^sleep [23]00' || true")
    finally:
        runtime.cleanup()
    assert result.timed_out and time.monotonic() - started < 120
    assert left.stdout.strip() == "0", left.stdout
