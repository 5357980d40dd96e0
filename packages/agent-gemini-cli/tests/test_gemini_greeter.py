"""The greeter example solved by ``agentrig run --agent gemini_cli`` in both runtimes: the real CLI, a scripted model."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentrig.pricing import APIPricing
from agentrig.testing.cli_agents import GREETER_SOLUTION, agentrig_executable, cli_run_env, write_file_command
from agentrig.usage import TokenUsage

pytestmark = pytest.mark.gemini_cli

REPO = Path(__file__).resolve().parents[3]
API_KEY = "AIza-test-gemini-greeter-0123456789"
GEMINI_PRO = APIPricing(input=1.25, output=10.0, cache_read=0.125)  # gemini-2.5-pro in the shipped catalog

GREET_1, GREET_2 = GREETER_SOLUTION


def greeter_script(server: Any) -> None:
    """Checkpoint 1 through the CLI's own ``write_file`` tool, checkpoint 2 through its shell."""
    server.add_reply("Writing greet.py.", tool_calls=[{"name": "write_file", "arguments": {"file_path": "greet.py", "content": GREET_1}}],
                     usage={"input": 900, "output": 40, "cache_read": 100})
    server.add_reply("greet() is in place.", usage={"input": 1000, "output": 8})
    command = write_file_command("greet.py", GREET_2)
    server.add_reply("Adding the command line.", tool_calls=[{"name": "run_shell_command", "arguments": {"command": command}}],
                     usage={"input": 950, "output": 90, "reasoning": 30})
    server.add_reply("Done.", usage={"input": 1100, "output": 4})


def run_greeter_in_docker(image: str, env: dict[str, str], out: Path) -> subprocess.CompletedProcess[str]:
    """``agentrig run examples/greeter --agent gemini_cli --runtime docker --image IMAGE --output OUT`` with ``env``."""
    return subprocess.run(
        [agentrig_executable(), "run", str(REPO / "examples" / "greeter"), "--agent", "gemini_cli",
         "--model", "gemini/gemini-2.5-pro", "--runtime", "docker", "--image", image,
         "-c", "runtime.network=host", "--output", str(out)],
        env=env, capture_output=True, text=True, timeout=600, cwd=out.parent,
    )


def check_greeter_run(out: Path, result: subprocess.CompletedProcess[str], server: Any, api_key: str) -> None:
    """Both checkpoints passed, each with its two model calls, the CLI's own totals recorded, no secret anywhere."""
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert [(x["checkpoint"], x["status"]) for x in lines] == [("greet_function", "passed"), ("command_line", "passed")]
    assert [x["steps"] for x in lines] == [2, 2]
    for checkpoint in ("greet_function", "command_line"):
        agent_dir = out / "greeter" / checkpoint / "agent"
        assert (agent_dir / "stdout.jsonl").exists() and (agent_dir / "session.jsonl").exists()
        outcome = json.loads((agent_dir / "gemini_outcome.json").read_text())
        inference = json.loads((out / "greeter" / checkpoint / "inference_result.json").read_text())
        # the recorded usage is the CLI's own total for the run
        assert outcome["cli_usage"] == inference["usage"]["net_tokens"]
        # priced by the shipped catalog (gemini.yaml), on exactly those tokens
        line = next(x for x in lines if x["checkpoint"] == checkpoint)
        assert line["cost"] == pytest.approx(GEMINI_PRO.get_cost(TokenUsage(**inference["usage"]["net_tokens"])))
        tools = [json.loads(x)["tool"] for x in (agent_dir / "trajectory.jsonl").read_text().splitlines() if '"tool_use"' in x]
        assert tools == (["write_file"] if checkpoint == "greet_function" else ["run_shell_command"])
    everything = "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())
    assert api_key not in everything + result.stdout + result.stderr
    assert len(server.model_requests) == 4


def test_greeter_passes_both_checkpoints(fake_gemini_server: Any, gemini_bin: str, tmp_path: Path) -> None:
    server = fake_gemini_server
    greeter_script(server)
    env = cli_run_env("GEMINI_", "GOOGLE_", GEMINI_API_KEY=API_KEY, GOOGLE_GEMINI_BASE_URL=server.base_url)
    out = tmp_path / "run"
    result = subprocess.run(
        [agentrig_executable(), "run", str(REPO / "examples" / "greeter"), "--agent", "gemini_cli", "--model", "gemini/gemini-2.5-pro",
         "--runtime", "local", "-c", f"binary={gemini_bin}", "--output", str(out)],
        env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    check_greeter_run(out, result, server, API_KEY)


@pytest.mark.docker
@pytest.mark.xdist_group("gemini_image")
def test_greeter_passes_both_checkpoints_in_docker(
    tmp_path: Path, node_test_image: str, gemini_image: str, fake_gemini_server: Any, docker_engine: Any
) -> None:
    """What a user types: ``agentrig run examples/greeter --agent gemini_cli --runtime docker --image BASE``."""
    from agentrig.run.records import RunRecord

    server = fake_gemini_server
    greeter_script(server)
    env = cli_run_env("GEMINI_", "GOOGLE_", GEMINI_API_KEY=API_KEY, GOOGLE_GEMINI_BASE_URL=server.base_url)
    out = tmp_path / "run"
    result = run_greeter_in_docker(node_test_image, env, out)
    assert "building agent image" not in result.stderr  # the session's build is reused, not redone
    check_greeter_run(out, result, server, API_KEY)
    run = RunRecord.model_validate_json((out / "run.json").read_bytes())
    assert run.identity.runtime.agent_image == gemini_image
    # the run's containers are gone (their owner, the agentrig child, has exited): none of this image is left whose
    # owner is gone (a container of another run going on beside this test, on the same engine, is not this run's)
    from agentrig.runtime.owners import owner_alive

    leftover = [c for c in docker_engine.containers.list(all=True, filters={"label": "agentrig"}, ignore_removed=True)
                if c.image.tags == [gemini_image] and not owner_alive(c.labels or {})]
    assert leftover == []
