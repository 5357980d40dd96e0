"""MCP under ``--runtime docker`` for the ``gemini_cli`` agent: the real pinned CLI runs in the session's container
and starts the test kit's stdio MCP server there (``mcpServers`` of its settings.json, in the private
GEMINI_CLI_HOME mounted from the host; the server from an image layer over the agent's image,
:mod:`agentrig.testing.mcp_image`); scripted by the fake Gemini API on the host, the model calls the server's
tools (the CLI names them ``mcp_NAME_TOOL``) and their side effect shows in the workspace."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from agentrig import Agent, AgentContext
from agentrig.testing.cli_agents import CliAgentKit, live_processes, record_steps
from agentrig.testing.mcp_image import LAUNCHER, mcp_image_fixture, stdio_server_in_image
from agentrig.trajectory import ToolUseStep
from agentrig_gemini_cli.config import GeminiCliConfig

# The same worker as test_gemini_docker.py: one build of the agent image, then the MCP layer over it.
pytestmark = [pytest.mark.docker, pytest.mark.gemini_cli, pytest.mark.xdist_group("gemini_image")]

gemini_mcp_image = mcp_image_fixture(base="gemini_image", name="gemini_mcp_image")

SECRET = "gemini-docker-mcp-secret-5c93"


def wait_until_none(marker: str, within: float = 15.0) -> list[str]:
    """The live processes holding ``marker`` once none is left, or those still there after ``within`` seconds."""
    deadline = time.monotonic() + within
    while (found := live_processes(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


def test_the_cli_in_docker_starts_the_stdio_server_in_its_container_and_the_tool_writes_the_workspace(
    tmp_path: Path, cli_kit: CliAgentKit, gemini_mcp_image: str, fake_gemini_server: Any, docker_engine: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agentrig.agents import lifecycle
    from agentrig.agents.session import Session

    assert shutil.which(LAUNCHER) is None  # the server's command exists only in the image
    server = fake_gemini_server
    server.add_reply("Writing.", tool_calls=[
        {"name": "mcp_probe_write_file", "arguments": {"path": "out/from_mcp.txt", "content": "gemini container\n"}},
    ])
    server.add_reply("Checking.", tool_calls=[{"name": "mcp_probe_env_digest", "arguments": {"name": "PROBE_SECRET"}}])
    server.add_reply("Done.")
    monkeypatch.setenv("AGENTRIG_TEST_GEMINI_DOCKER_MCP", SECRET)
    marker = f"/tmp/mcp-{uuid.uuid4().hex}.pid"  # names this test's server among the machine's processes
    entry = stdio_server_in_image("--pid-file", marker, env={"PROBE_SECRET": "${AGENTRIG_TEST_GEMINI_DOCKER_MCP}"})
    config = GeminiCliConfig(base_url=server.base_url, mcp_servers={"probe": entry})
    context = AgentContext(model=cli_kit.model_definition(), credential=cli_kit.credential(), problem_name="docker-mcp",
                           image=gemini_mcp_image)
    agent = Agent.from_config(config, context)
    steps = record_steps(agent)
    options = {"image": gemini_mcp_image, "network": "host"}
    with Session.create(runtime="docker", base_dir=tmp_path, runtime_options=options) as session:
        lifecycle.setup_agent(agent, session)
        try:
            result = agent.run_checkpoint("Write out/from_mcp.txt with the probe server.")
            assert not result.had_error, result.error_message
            container_id = session.runtime.container_id
            inspected = json.dumps(docker_engine.api.inspect_container(container_id))
        finally:
            lifecycle.cleanup_agent(agent)
        # the server wrote under its working directory, the container's /workspace: the host's workspace
        written = session.workspace.path / "out" / "from_mcp.txt"
        assert written.read_text() == "gemini container\n"
        assert (written.stat().st_uid, written.stat().st_gid) == (os.getuid(), os.getgid())
        # offered from the first request on (the CLI discovered the server in the container before it)
        offered = {f["name"] for t in server.model_requests[0].body["tools"] for f in t.get("functionDeclarations", [])}
        assert {"mcp_probe_add", "mcp_probe_env_digest", "mcp_probe_fail", "mcp_probe_write_file"} <= offered
        mcp_steps = [s for s in steps if isinstance(s, ToolUseStep) and "probe" in s.tool]
        assert len(mcp_steps) == 2, [s.tool for s in steps if isinstance(s, ToolUseStep)]
        assert "out/from_mcp.txt" in (mcp_steps[0].result or "")
        # the settings give the server the container's workspace as its working directory, not the host's
        assert agent._state_dir_host is not None
        settings = json.loads((agent._state_dir_host / ".gemini" / "settings.json").read_text())
        assert settings["mcpServers"]["probe"]["cwd"] == "/workspace"
        # the secret reached the server (in the container) through the 0600 settings.json, nowhere else
        digest = hashlib.sha256(SECRET.encode()).hexdigest()
        assert digest in (mcp_steps[1].result or "") and digest in server.model_requests[2].raw_body
        assert agent.launch is not None and all(SECRET not in arg for arg in agent.launch.argv)
        assert SECRET not in inspected and all(SECRET not in r.raw_body for r in server.model_requests)
        # the CLI stopped its server when it ended: nothing of it is left on the machine
        assert wait_until_none(marker) == []
    # and the session's container went with the session
    assert docker_engine.containers.list(all=True, filters={"id": container_id}) == []
