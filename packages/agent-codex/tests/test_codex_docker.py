"""End to end in Docker: the ``codex`` agent's own image, built by ``ensure_agent_image`` from the
package's template over the Debian + Node.js test image (npm-installing the pinned CLI; nothing is
pulled), runs the real CLI in the session's container against the fake Responses API on the host
(network mode ``host``, so 127.0.0.1 is the host's).

The image build happens once (about 25 s here); later runs find it unchanged and skip it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentrig import Agent, AgentContext, AgentCostLimits
from agentrig.runtime.images import LABEL_VERSION, agent_image_tag
from agentrig.testing.cli_agents import CliAgentKit, live_processes, record_steps, sleeper_command
from agentrig.trajectory import LLMCall, ToolUseStep
from agentrig_codex.config import DEFAULT_CLI_VERSION, CodexConfig

# One worker builds the agent image (module fixture) and runs every test that uses it.
pytestmark = [pytest.mark.docker, pytest.mark.codex_cli, pytest.mark.xdist_group("codex_image")]


def shell(command: str, call_id: str | None = None) -> dict[str, Any]:
    """A call of the CLI's own shell tool, ``exec_command`` taking ``cmd``."""
    call: dict[str, Any] = {"name": "exec_command", "arguments": {"cmd": command}}
    if call_id:
        call["id"] = call_id
    return call


@pytest.fixture
def docker_session(tmp_path: Path, codex_image: str) -> Iterator[Any]:
    """A session in the agent's image, on the host's network."""
    from agentrig.agents.session import Session

    options = {"image": codex_image, "network": "host"}
    with Session.create(runtime="docker", base_dir=tmp_path, runtime_options=options) as created:
        yield created


def docker_agent(cli_kit: CliAgentKit, server: Any, image: str, **fields: Any) -> Any:
    """The ``codex`` agent (the CLI on the image's ``PATH``) on ``server``."""
    config = CodexConfig(base_url=server.base_url, **fields)
    context = AgentContext(model=cli_kit.model_definition(), credential=cli_kit.credential(), problem_name="docker-e2e",
                           image=image)
    return Agent.from_config(config, context)


def inspected(client: Any, container_id: str) -> str:
    """Everything ``docker inspect`` shows of the container and of each exec running in it, as text."""
    attrs = client.api.inspect_container(container_id)
    execs = [client.api.exec_inspect(exec_id) for exec_id in attrs.get("ExecIDs") or []]
    return json.dumps([attrs, execs])


def test_image_holds_exactly_the_pinned_cli(docker_engine: Any, node_test_image: str, codex_image: str) -> None:
    assert codex_image == agent_image_tag("codex", DEFAULT_CLI_VERSION, node_test_image)
    assert docker_engine.images.get(codex_image).labels[LABEL_VERSION] == DEFAULT_CLI_VERSION
    output = docker_engine.containers.run(codex_image, ["codex", "--version"], remove=True, network_mode="none")
    assert output.decode().split()[-1] == DEFAULT_CLI_VERSION


def test_agent_runs_the_cli_in_its_image_with_usage_equal_to_the_cli(
    cli_kit: CliAgentKit, codex_image: str, docker_session: Any, fake_openai_server: Any, docker_engine: Any
) -> None:
    from agentrig.agents import lifecycle

    server, session = fake_openai_server, docker_session
    # /.dockerenv exists only inside a container, and the workspace is /workspace there
    command = "{ pwd; test -f /.dockerenv && echo in-container; } > made.txt"
    server.add_reply("Creating it.", tool_calls=[shell(command, "call_mk")], usage={"input": 1000, "output": 40, "cache_read": 250})
    server.add_reply("Done.", usage={"input": 1100, "output": 5})
    agent = docker_agent(cli_kit, server, codex_image)
    steps = record_steps(agent)
    # what `docker inspect` shows while the CLI runs (at its first model call's usage)
    seen: list[str] = []
    agent.add_step_listener(lambda step: seen.append(inspected(docker_engine, session.runtime.container_id))
                            if isinstance(step, LLMCall) and not seen else None)
    lifecycle.setup_agent(agent, session)
    try:
        assert agent.cli_version == DEFAULT_CLI_VERSION  # probed inside the container
        result = agent.run_checkpoint("Create made.txt.")
        assert not result.had_error, result.error_message
        assert result.stop_reason == "completed" and result.usage.steps == 2
        made = session.workspace.path / "made.txt"
        assert made.read_text().splitlines() == ["/workspace", "in-container"]
        assert (made.stat().st_uid, made.stat().st_gid) == (os.getuid(), os.getgid())
        assert agent.launch is not None and agent.launch.runtime == "docker" and agent.launch.cwd == "/workspace"
        tool = next(s for s in steps if isinstance(s, ToolUseStep))
        assert tool.exit_code == 0 and "made.txt" in tool.arguments["command"]
        # usage: exact per model call, the total equal to the CLI's own figure, cost the prices on exactly it
        calls = [s for s in steps if isinstance(s, LLMCall)]
        assert [(c.usage.input, c.usage.cache_read) for c in calls] == [(1000, 250), (1100, 0)]
        assert agent.outcome is not None and agent.outcome.cli_usage == result.usage.net_tokens
        assert result.usage.cost == pytest.approx(cli_kit.pricing.get_cost(result.usage.net_tokens))
        assert result.usage.cost == pytest.approx((2100 * 1.25 + 250 * 0.125 + 45 * 10.0) / 1e6)
        # the key: in the CLI's request header, never in its argv nor anywhere `docker inspect` shows
        requests = server.model_requests
        assert len(requests) == 2 and requests[0].headers.get("authorization") == f"Bearer {cli_kit.api_key}"
        assert '"call_mk"' in requests[1].raw_body  # the tool's output went back to the model
        assert all(cli_kit.api_key not in arg for arg in agent.launch.argv)
        assert len(seen) == 1 and '"codex"' in seen[0] and cli_kit.api_key not in seen[0]  # the CLI's exec was running
        assert cli_kit.api_key not in inspected(docker_engine, session.runtime.container_id)
        # the CLI's state went to the session's isolated home, mounted from the host
        assert (session.home / ".codex" / "config.toml").is_file()
        assert any((session.home / ".codex" / "sessions").rglob("rollout-*.jsonl"))
    finally:
        lifecycle.cleanup_agent(agent)


def run_to_limit(
    cli_kit: CliAgentKit, image: str, tmp_path: Path, server: Any, client: Any, tag: str, limits: AgentCostLimits,
    input_tokens: int,
) -> tuple[Any, bool]:
    """Run a checkpoint whose tool (``touch started`` then a minute's wait) meets ``limits``, through the
    runner's lifecycle, in a session of its own; returns the result and whether the tool had started,
    after checking that the tool never finished its wait (``late.txt``) and that no process of the tool
    and no container of the session is left."""
    from agentrig.agents import lifecycle
    from agentrig.agents.session import Session
    from agentrig.problem import Checkpoint
    from agentrig.runtime.owners import LABEL_SESSION

    server.add_reply("Working.", tool_calls=[shell("touch started && " + sleeper_command(tag))],
                     usage={"input": input_tokens, "output": 10})
    server.add_reply("Never.")
    agent = docker_agent(cli_kit, server, image, cost_limits=limits)
    options = {"image": image, "network": "host"}
    with Session.create(runtime="docker", base_dir=tmp_path, runtime_options=options) as session:
        session_id = session.runtime.session_id
        lifecycle.setup_agent(agent, session)
        try:
            result = lifecycle.run_checkpoint(agent, Checkpoint(name="c1", prompt="c1.md"), "Wait.", session.runtime)
            # the tool's whole tree died with the CLI (a container's processes are the host's processes too)
            time.sleep(0.3)
            assert live_processes(tag) == [], "processes of the killed CLI survive"
            assert not (session.workspace.path / "late.txt").exists()
            tool_started = (session.workspace.path / "started").exists()
        finally:
            lifecycle.cleanup_agent(agent)
    mine = docker_engine_containers(client, LABEL_SESSION, session_id)
    assert mine == [], f"the session's container is left: {mine}"
    assert len(server.model_requests) == 1
    return result, tool_started


def docker_engine_containers(client: Any, label: str, value: str) -> list[str]:
    """Names of the containers (running or not) labelled ``label=value``."""
    return [c.name for c in client.containers.list(all=True, filters={"label": f"{label}={value}"}, ignore_removed=True)]


def test_time_limit_kills_the_cli_mid_tool_and_no_container_is_left(
    cli_kit: CliAgentKit, codex_image: str, tmp_path: Path, fake_openai_server: Any, docker_engine: Any
) -> None:
    result, tool_started = run_to_limit(cli_kit, codex_image, tmp_path, fake_openai_server, docker_engine,
                                        "CODEX-DOCKER-TIMED", AgentCostLimits(time_limit=8.0), 1000)
    assert result.stop_reason == "time_limit" and not result.had_error, result.error_message
    assert tool_started  # killed while its tool ran (never finished: no late.txt)


def test_cost_limit_kills_the_cli_at_once(
    cli_kit: CliAgentKit, codex_image: str, tmp_path: Path, fake_openai_server: Any, docker_engine: Any
) -> None:
    # the call's usage is known when its response ends, when the CLI starts the tool it asked for: killed then
    result, _ = run_to_limit(cli_kit, codex_image, tmp_path, fake_openai_server, docker_engine,
                             "CODEX-DOCKER-SPENT", AgentCostLimits(cost_limit=1.0), 1_000_000)  # USD 1.25
    assert result.stop_reason == "cost_limit" and not result.had_error, result.error_message
    assert result.usage.steps == 1 and result.usage.cost >= 1.0  # killed before its tool's wait ended: no late.txt
