"""The greeter example solved by ``agentrig run --agent qwen_code`` in both runtimes: the real CLI, a scripted model."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentrig.pricing import APIPricing
from agentrig.testing.cli_agents import GREETER_SOLUTION, agentrig_executable, cli_run_env, write_file_command
from agentrig.usage import TokenUsage

pytestmark = pytest.mark.qwen_cli

REPO = Path(__file__).resolve().parents[3]
API_KEY = "sk-test-qwen-greeter-0123456789"
GPT5 = APIPricing(input=1.25, output=10.0, cache_read=0.125)  # openai/gpt-5 in the shipped catalog

GREET_1, GREET_2 = GREETER_SOLUTION


def greeter_script(server: Any) -> None:
    """Each checkpoint through the CLI's shell tool (its ``write_file`` takes absolute paths only), then done."""
    server.add_reply("Writing greet.py.", tool_calls=[{"name": "run_shell_command", "arguments": {
        "command": write_file_command("greet.py", GREET_1)}}], usage={"input": 900, "output": 40, "cache_read": 100})
    server.add_reply("greet() is in place.", usage={"input": 1000, "output": 8})
    server.add_reply("Adding the command line.", tool_calls=[{"name": "run_shell_command", "arguments": {
        "command": write_file_command("greet.py", GREET_2)}}], usage={"input": 950, "output": 90})
    server.add_reply("Done.", usage={"input": 1100, "output": 4})


def run_greeter(runtime: str, where: list[str], env: dict[str, str], out: Path) -> subprocess.CompletedProcess[str]:
    """``agentrig run examples/greeter --agent qwen_code --model openai/gpt-5 --runtime RUNTIME ...`` with ``env``."""
    return subprocess.run(
        [agentrig_executable(), "run", str(REPO / "examples" / "greeter"), "--agent", "qwen_code",
         "--model", "openai/gpt-5", "--runtime", runtime, *where, "--output", str(out)],
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
        outcome = json.loads((agent_dir / "qwen_outcome.json").read_text())
        inference = json.loads((out / "greeter" / checkpoint / "inference_result.json").read_text())
        # the recorded usage is the CLI's own total for the run
        assert outcome["cli_usage"] == inference["usage"]["net_tokens"]
        # priced by the shipped catalog, on exactly those tokens
        line = next(x for x in lines if x["checkpoint"] == checkpoint)
        assert line["cost"] == pytest.approx(GPT5.get_cost(TokenUsage(**inference["usage"]["net_tokens"])))
        tools = [json.loads(x)["tool"] for x in (agent_dir / "trajectory.jsonl").read_text().splitlines() if '"tool_use"' in x]
        assert tools == ["run_shell_command"]
    everything = "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())
    assert api_key not in everything + result.stdout + result.stderr
    assert len(server.model_requests) == 4


def test_greeter_passes_both_checkpoints(fake_openai_server: Any, qwen_bin: str, node_22_first_on_path: str,
                                         tmp_path: Path) -> None:
    server = fake_openai_server
    greeter_script(server)
    env = cli_run_env("OPENAI_", OPENAI_API_KEY=API_KEY, OPENAI_BASE_URL=server.base_url, PATH=node_22_first_on_path)
    out = tmp_path / "run"
    result = run_greeter("local", ["-c", f"binary={qwen_bin}"], env, out)
    check_greeter_run(out, result, server, API_KEY)


@pytest.mark.docker
@pytest.mark.xdist_group("qwen_image")
def test_greeter_passes_both_checkpoints_in_docker(
    tmp_path: Path, node_test_image: str, qwen_image: str, fake_openai_server: Any, docker_engine: Any
) -> None:
    """What a user types: ``agentrig run examples/greeter --agent qwen_code --runtime docker --image BASE``; the
    host's Node (20 here, too old for the CLI) does not matter: the image brings Node 22."""
    from agentrig.run.records import RunRecord
    from agentrig.runtime.owners import owner_alive

    server = fake_openai_server
    greeter_script(server)
    env = cli_run_env("OPENAI_", OPENAI_API_KEY=API_KEY, OPENAI_BASE_URL=server.base_url, PATH=os.environ["PATH"])
    out = tmp_path / "run"
    result = run_greeter("docker", ["--image", node_test_image, "-c", "runtime.network=host"], env, out)
    assert "building agent image" not in result.stderr  # the session's build is reused, not redone
    check_greeter_run(out, result, server, API_KEY)
    run = RunRecord.model_validate_json((out / "run.json").read_bytes())
    assert run.identity.runtime.agent_image == qwen_image
    leftover = [c for c in docker_engine.containers.list(all=True, filters={"label": "agentrig"}, ignore_removed=True)
                if c.image.tags == [qwen_image] and not owner_alive(c.labels or {})]
    assert leftover == []
