"""End to end in Docker: the ``claude_code`` agent's own image, built by
``ensure_agent_image`` from the package's template over a Debian + Node.js
image, runs the real pinned CLI in the session's container against the fake
Messages API on the host (network mode ``host``, so 127.0.0.1 is the host's).

The image build (npm-installing the CLI) happens once, in the kit's
``agent_image_fixture`` (``claude_image``, from ``conftest.py``); later runs find
the image unchanged and skip it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from agentrig import Agent, AgentContext, ModelDefinition, ProviderCredential
from agentrig.pricing import APIPricing
from agentrig.runtime.images import LABEL_VERSION, agent_image_tag
from agentrig_claude_code.config import DEFAULT_CLI_VERSION, ClaudeCodeConfig

# One worker builds the agent image (module fixture) and runs every test that uses it.
pytestmark = [pytest.mark.docker, pytest.mark.claude_cli, pytest.mark.xdist_group("claude_image")]

API_KEY = "sk-ant-test-claude-docker-secret-42"
SONNET = APIPricing(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)


def test_image_holds_exactly_the_pinned_cli(docker_engine: Any, node_test_image: str, claude_image: str) -> None:
    assert claude_image == agent_image_tag("claude_code", DEFAULT_CLI_VERSION, node_test_image)
    assert docker_engine.images.get(claude_image).labels[LABEL_VERSION] == DEFAULT_CLI_VERSION
    output = docker_engine.containers.run(claude_image, ["claude", "--version"], remove=True, network_mode="none")
    assert output.decode().split()[0] == DEFAULT_CLI_VERSION


def test_agent_runs_the_cli_in_its_image_and_bash_writes_to_the_workspace(
    tmp_path: Path, claude_image: str, fake_anthropic_server: Any
) -> None:
    from agentrig.agents import lifecycle
    from agentrig.agents.session import Session

    server = fake_anthropic_server
    # /.dockerenv exists only inside a container, and the workspace is /workspace there
    command = "{ pwd; test -f /.dockerenv && echo in-container; } > made.txt"
    server.add_reply("Creating it.", tool_calls=[{"name": "Bash", "arguments": {"command": command}, "id": "toolu_mk"}],
                     usage={"input": 1000, "output": 40})
    server.add_reply("Done.", usage={"input": 1100, "output": 5})
    config = ClaudeCodeConfig(base_url=server.base_url)
    model = ModelDefinition(provider="anthropic", name="claude-sonnet-4-5", pricing=SONNET)
    credential = ProviderCredential(provider="anthropic", value=SecretStr(API_KEY), source="test", env_var="ANTHROPIC_API_KEY")
    context = AgentContext(model=model, credential=credential, problem_name="docker-e2e", image=claude_image)
    agent = Agent.from_config(config, context)
    with Session.create(
        runtime="docker", base_dir=tmp_path, runtime_options={"image": claude_image, "network": "host"}
    ) as session:
        lifecycle.setup_agent(agent, session)
        try:
            assert agent.cli_version == DEFAULT_CLI_VERSION  # probed inside the container
            result = agent.run_checkpoint("Create made.txt.")
            assert not result.had_error, result.error_message
            assert result.stop_reason == "completed" and result.usage.steps == 2
            made = session.workspace.path / "made.txt"
            assert made.read_text().splitlines() == ["/workspace", "in-container"]
            info = made.stat()
            assert (info.st_uid, info.st_gid) == (os.getuid(), os.getgid())
            assert agent.launch is not None and agent.launch.runtime == "docker" and agent.launch.cwd == "/workspace"
            assert all(API_KEY not in arg for arg in agent.launch.argv)
            calls = server.model_requests
            assert len(calls) == 2 and calls[0].headers.get("x-api-key") == API_KEY
            assert "toolu_mk" in calls[1].raw_body  # the tool result went back to the model
            # the CLI's state went to the session's isolated home, mounted from the host
            assert any((session.home / ".claude" / "projects").rglob("*.jsonl"))
        finally:
            lifecycle.cleanup_agent(agent)


def test_agentrig_run_builds_the_image_and_runs_claude_code_in_docker(
    tmp_path: Path, node_test_image: str, claude_image: str, fake_anthropic_server: Any, docker_engine: Any
) -> None:
    """What a user types: ``agentrig run --runtime docker --image BASE -c runtime.network=host``."""
    import subprocess
    import sys

    from agentrig.run.records import CheckpointResultLine, RunRecord

    server = fake_anthropic_server
    server.add_reply("On it.", tool_calls=[{"name": "Bash", "arguments": {"command": "echo ok > done.txt"}}])
    server.add_reply("Done.")
    problem = tmp_path / "problems" / "touch"
    (problem / "tests").mkdir(parents=True)
    (problem / "task.md").write_text("Create done.txt containing ok.\n")
    (problem / "tests" / "check.sh").write_text('test "$(cat done.txt)" = ok && test "$(id -u)" = "' + str(os.getuid()) + '"\n')
    (problem / "problem.yaml").write_text(
        "name: touch\ncheckpoints:\n  - name: make\n    prompt: task.md\n    test: sh tests/check.sh\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTRIG_"))}
    env["ANTHROPIC_API_KEY"] = API_KEY
    out = tmp_path / "run"
    result = subprocess.run(
        [str(Path(sys.executable).with_name("agentrig")), "run", str(problem), "--agent", "claude_code",
         "--model", "anthropic/claude-sonnet-4-5", "--runtime", "docker", "--image", node_test_image,
         "-c", "runtime.network=host", "-c", f"base_url={server.base_url}", "--output", str(out)],
        env=env, capture_output=True, text=True, timeout=180, cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "building agent image" not in result.stderr  # the module's build is reused, not redone
    run = RunRecord.model_validate_json((out / "run.json").read_bytes())
    assert run.identity.runtime.agent_image == claude_image and run.identity.runtime.options == {"network": "host"}
    (line,) = [CheckpointResultLine.model_validate_json(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert line.status == "passed" and line.steps == 2
    assert (out / "touch/make/snapshot/files/done.txt").read_text() == "ok\n"
    assert API_KEY not in (out / "run.json").read_text() + result.stdout + result.stderr
    # the run's container is gone (its owner, the agentrig child, has exited)
    leftover = [c for c in docker_engine.containers.list(all=True, filters={"label": "agentrig"}, ignore_removed=True)
                if c.image.tags == [claude_image]]
    assert leftover == []
