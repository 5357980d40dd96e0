"""The greeter example solved by ``agentrig run --agent openhands``: the real pinned SDK, a scripted model."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentrig.pricing import APIPricing
from agentrig.testing.cli_agents import GREETER_SOLUTION, agentrig_executable, cli_run_env, write_file_command
from agentrig.usage import TokenUsage

pytestmark = pytest.mark.openhands

REPO = Path(__file__).resolve().parents[3]
API_KEY = "sk-test-openhands-greeter-0123456789"
GPT_4O = APIPricing(input=2.5, output=10.0, cache_read=1.25)  # openai/gpt-4o in the shipped catalog

GREET_1, GREET_2 = GREETER_SOLUTION


def greeter_script(server: Any) -> None:
    """Each checkpoint: one call of OpenHands' ``terminal`` writing greet.py, then a closing message."""
    for text in (GREET_1, GREET_2):
        server.add_reply("Writing greet.py.", tool_calls=[{"name": "terminal", "arguments": {
            "command": write_file_command("greet.py", text)}}], usage={"input": 900, "output": 40})
        server.add_reply("Done.", usage={"input": 1000, "output": 8})


def test_greeter_passes_both_checkpoints(fake_openai_server: Any, openhands_python: str, tmp_path: Path) -> None:
    server = fake_openai_server
    greeter_script(server)
    env = cli_run_env("OPENAI_", "LLM_", OPENAI_API_KEY=API_KEY, OPENAI_BASE_URL=server.base_url)
    out = tmp_path / "run"
    result = subprocess.run(
        [agentrig_executable(), "run", str(REPO / "examples" / "greeter"), "--agent", "openhands",
         "--model", "openai/gpt-4o", "--runtime", "local", "-c", f"binary={openhands_python}",
         "-c", "num_retries=0", "--output", str(out)],
        env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert [(x["checkpoint"], x["status"]) for x in lines] == [("greet_function", "passed"), ("command_line", "passed")]
    assert [x["steps"] for x in lines] == [2, 2]
    for checkpoint in ("greet_function", "command_line"):
        agent_dir = out / "greeter" / checkpoint / "agent"
        outcome = json.loads((agent_dir / "openhands_outcome.json").read_text())
        inference = json.loads((out / "greeter" / checkpoint / "inference_result.json").read_text())
        assert outcome["cli_usage"] == inference["usage"]["net_tokens"]
        line = next(x for x in lines if x["checkpoint"] == checkpoint)
        # priced by the shipped catalog, and what OpenHands itself reported is the same amount (no cached input)
        assert line["cost"] == pytest.approx(GPT_4O.get_cost(TokenUsage(**inference["usage"]["net_tokens"])))
        assert outcome["openhands_cost"] == pytest.approx(line["cost"], rel=1e-9)
        assert outcome["catalog_cost"] == pytest.approx(line["cost"], rel=1e-9)
        tools = [json.loads(x)["tool"] for x in (agent_dir / "trajectory.jsonl").read_text().splitlines() if '"tool_use"' in x]
        assert tools == ["terminal"]
    everything = "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())
    assert API_KEY not in everything + result.stdout + result.stderr
    assert len(server.model_requests) == 4 and server.requests == server.model_requests
