"""The greeter example solved by ``agentrig run --agent codex``: the real CLI, a scripted model, in both runtimes.

In ``--runtime docker`` the agent's image is built from the package's template over the Debian +
Node test image (the ``codex_image`` fixture builds it first, so the run finds it ready); the
container shares the host's network (``-c runtime.network=host``) to reach the fake server on
127.0.0.1.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentrig.testing.cli_agents import (
    GREETER_SOLUTION,
    CliAgentKit,
    agentrig_executable,
    cli_run_env,
    containers_of_process,
    write_file_command,
)

pytestmark = pytest.mark.codex_cli

API_KEY = "sk-test-codex-greeter-0123456789"
IN_DOCKER = [pytest.mark.docker, pytest.mark.xdist_group("codex_image")]


def write_greet(text: str) -> dict[str, Any]:
    """The CLI's shell tool writing ``greet.py``."""
    return {"name": "exec_command", "arguments": {"cmd": write_file_command("greet.py", text)}}


def script_greeter(server: Any) -> None:
    """Two model calls per checkpoint: write ``greet.py``, then say done."""
    first, second = GREETER_SOLUTION
    server.add_reply("Writing greet.py.", tool_calls=[write_greet(first)], usage={"input": 900, "output": 40})
    server.add_reply("greet() is in place.", usage={"input": 1000, "output": 8, "cache_read": 300})
    server.add_reply("Adding the command line.", tool_calls=[write_greet(second)], usage={"input": 950, "output": 90})
    server.add_reply("Done.", usage={"input": 1100, "output": 4})


@pytest.mark.parametrize("runtime", ["local", pytest.param("docker", marks=IN_DOCKER)])
def test_greeter_passes_both_checkpoints(
    request: pytest.FixtureRequest, runtime: str, fake_openai_server: Any, cli_kit: CliAgentKit, tmp_path: Path
) -> None:
    server = fake_openai_server
    script_greeter(server)
    repo = Path(request.config.rootpath)
    out = tmp_path / "run"
    if runtime == "local":
        where = ["-c", f"binary={request.getfixturevalue('codex_bin')}"]
    else:
        request.getfixturevalue("codex_image")  # built here, before the run: the run finds it ready
        where = ["--image", request.getfixturevalue("node_test_image"), "-c", "runtime.network=host"]
    argv = [agentrig_executable(), "run", str(repo / "examples" / "greeter"), "--agent", "codex", "--model",
            "openai/gpt-5", "--runtime", runtime, *where, "--output", str(out)]
    env = cli_run_env("OPENAI_", OPENAI_API_KEY=API_KEY, OPENAI_BASE_URL=server.base_url)
    run = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    stdout, stderr = run.communicate(timeout=240)
    assert run.returncode == 0, stdout + stderr
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert [(x["checkpoint"], x["status"]) for x in lines] == [("greet_function", "passed"), ("command_line", "passed")]
    assert [x["steps"] for x in lines] == [2, 2]
    for checkpoint in ("greet_function", "command_line"):
        agent_dir = out / "greeter" / checkpoint / "agent"
        assert (agent_dir / "stdout.jsonl").exists() and (agent_dir / "session.jsonl").exists()
        outcome = json.loads((agent_dir / "codex_outcome.json").read_text())
        inference = json.loads((out / "greeter" / checkpoint / "inference_result.json").read_text())
        # the recorded usage is the CLI's own total for the run, its cost the model's prices on exactly it
        assert outcome["cli_usage"] == inference["usage"]["net_tokens"]
        launch = json.loads((agent_dir / "codex_launch.json").read_text())
        assert launch["runtime"] == runtime
    assert lines[0]["cost"] == pytest.approx((900 + 1000) * 1.25e-6 + 300 * 0.125e-6 + 48 * 10e-6)
    everything = "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())
    assert API_KEY not in everything + stdout + stderr
    assert len(server.model_requests) == 4
    if runtime == "docker":
        record = json.loads((out / "run.json").read_text())
        assert record["identity"]["runtime"]["agent_image"] == request.getfixturevalue("codex_image")
        assert "building agent image" not in stderr
        # the run's containers are gone with it (its owner, the agentrig child, has exited)
        assert containers_of_process(request.getfixturevalue("docker_engine"), run.pid) == []
