"""The greeter example solved by ``agentrig run --agent opencode``: the real CLI and a scripted model, in the
``local`` runtime and in the agent's own Docker image (built from the package's template over the Debian +
Node.js test image; network mode ``host``, so the fake server on the host's 127.0.0.1 is reachable)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentrig_opencode.config import DEFAULT_CLI_VERSION

REPO = Path(__file__).resolve().parents[3]
API_KEY = "sk-test-opencode-greeter-0123456789"

GREET_1 = 'def greet(name):\n    return f"Hello, {name}!"\n'
GREET_2 = GREET_1 + (
    "\n\nif __name__ == \"__main__\":\n    import sys\n    args = sys.argv[1:]\n"
    "    shout = \"--shout\" in args\n    for name in [a for a in args if a != \"--shout\"]:\n"
    "        line = greet(name)\n        print(line.upper() if shout else line)\n"
)


def write_file(text: str) -> dict[str, Any]:
    """OpenCode's ``bash`` tool writing ``greet.py`` (for GPT models it offers ``apply_patch``, not ``write``)."""
    command = "cat > greet.py <<'EOF'\n" + text + "EOF"
    return {"name": "bash", "arguments": {"command": command, "description": "write greet.py"}}


def script_greeter(server: Any) -> None:
    server.add_reply("Writing greet.py.", tool_calls=[write_file(GREET_1)], usage={"input": 900, "output": 40})
    server.add_reply("greet() is in place.", usage={"input": 1000, "output": 8})
    server.add_reply("Adding the command line.", tool_calls=[write_file(GREET_2)], usage={"input": 950, "output": 90})
    server.add_reply("Done.", usage={"input": 1100, "output": 4})


def run_greeter(server: Any, tmp_path: Path, *options: str) -> Path:
    """``agentrig run examples/greeter --agent opencode OPTIONS``; the run's directory after checking it passed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENTRIG_"))}
    env["OPENAI_API_KEY"] = API_KEY
    env["OPENAI_BASE_URL"] = server.base_url
    out = tmp_path / "run"
    agentrig = str(Path(sys.executable).with_name("agentrig"))
    result = subprocess.run(
        [agentrig, "run", str(REPO / "examples" / "greeter"), "--agent", "opencode", "--model", "openai/gpt-5",
         *options, "--output", str(out)],
        env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert [(x["checkpoint"], x["status"]) for x in lines] == [("greet_function", "passed"), ("command_line", "passed")]
    assert [x["steps"] for x in lines] == [2, 2]
    for checkpoint in ("greet_function", "command_line"):
        agent_dir = out / "greeter" / checkpoint / "agent"
        outcome = json.loads((agent_dir / "opencode_outcome.json").read_text())
        inference = json.loads((out / "greeter" / checkpoint / "inference_result.json").read_text())
        # the recorded usage and cost are the CLI's own figures
        assert outcome["cli_usage"] == inference["usage"]["net_tokens"]
        assert inference["usage"]["cost"] == pytest.approx(outcome["cli_cost"]) and outcome["cli_cost"] > 0
    everything = "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())
    assert API_KEY not in everything + result.stdout + result.stderr
    assert len(server.model_requests) == 4
    return out


@pytest.mark.opencode_cli
def test_greeter_passes_both_checkpoints_locally(fake_openai_server: Any, opencode_bin: str, tmp_path: Path) -> None:
    script_greeter(fake_openai_server)
    run_greeter(fake_openai_server, tmp_path, "--runtime", "local", "-c", f"binary={opencode_bin}")


# One worker builds the agent image (module fixture) and runs every test that uses it.
@pytest.mark.docker
@pytest.mark.xdist_group("opencode_image")
def test_image_holds_the_pinned_cli_and_ripgrep(docker_engine: Any, opencode_image: str) -> None:
    from agentrig.runtime.images import LABEL_VERSION

    assert docker_engine.images.get(opencode_image).labels[LABEL_VERSION] == DEFAULT_CLI_VERSION
    output = docker_engine.containers.run(
        opencode_image, ["sh", "-c", "opencode --version && rg --version"], remove=True, network_mode="none"
    ).decode()
    assert output.splitlines()[0] == DEFAULT_CLI_VERSION and "ripgrep" in output


@pytest.mark.docker
@pytest.mark.xdist_group("opencode_image")
def test_greeter_passes_both_checkpoints_in_docker(
    fake_openai_server: Any, node_test_image: str, opencode_image: str, docker_engine: Any, tmp_path: Path
) -> None:
    from agentrig.run.records import RunRecord

    script_greeter(fake_openai_server)
    out = run_greeter(
        fake_openai_server, tmp_path, "--runtime", "docker", "--image", node_test_image, "-c", "runtime.network=host"
    )
    run = RunRecord.model_validate_json((out / "run.json").read_bytes())
    assert run.identity.runtime.agent_image == opencode_image
    launch = json.loads((out / "greeter" / "greet_function" / "agent" / "opencode_launch.json").read_text())
    assert launch["runtime"] == "docker" and launch["cwd"] == "/workspace" and launch["argv"][0] == "opencode"
    # the run's containers are gone (their owner, the agentrig child, has exited)
    leftover = [c for c in docker_engine.containers.list(all=True, filters={"label": "agentrig"}, ignore_removed=True)
                if c.image.tags == [opencode_image]]
    assert leftover == []
