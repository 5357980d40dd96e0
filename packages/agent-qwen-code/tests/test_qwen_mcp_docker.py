"""MCP under ``--runtime docker`` for the ``qwen_code`` agent: the real pinned CLI runs in the session's container
and starts the test kit's stdio MCP server there (``mcpServers`` of its settings.json, in the private QWEN_HOME
mounted from the host; the server from an image layer over the agent's image, :mod:`agentrig.testing.mcp_image`);
scripted by the fake OpenAI API on the host, the model calls the server's tools (``mcp__NAME__TOOL``) and their
side effect shows in the workspace. The scenario and its common checks are the test kit's
(:mod:`agentrig.testing.cli_mcp_docker`); here: Qwen Code's names and settings."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from agentrig.testing.cli_agents import CliAgentKit
from agentrig.testing.cli_mcp_docker import WRITTEN, probe_server_in_docker
from agentrig.testing.mcp_image import mcp_image_fixture
from agentrig.trajectory import ToolUseStep
from agentrig_qwen_code.config import QwenCodeConfig

# The same worker as the Docker greeter: one build of the agent image, then the MCP layer over it.
pytestmark = [pytest.mark.docker, pytest.mark.qwen_cli, pytest.mark.xdist_group("qwen_image")]

qwen_mcp_image = mcp_image_fixture(base="qwen_image", name="qwen_mcp_image")

SECRET = "qwen-docker-mcp-secret-8e21"


def test_the_cli_in_docker_starts_the_stdio_server_in_its_container_and_the_tool_writes_the_workspace(
    tmp_path: Path, cli_kit: CliAgentKit, qwen_mcp_image: str, fake_openai_server: Any, docker_engine: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = fake_openai_server
    server.add_reply("Writing.", tool_calls=[
        {"name": "mcp__probe__write_file", "arguments": {"path": WRITTEN, "content": "qwen container\n"}},
    ])
    server.add_reply("Checking.", tool_calls=[{"name": "mcp__probe__env_digest", "arguments": {"name": "PROBE_SECRET"}}])
    server.add_reply("Done.")
    with probe_server_in_docker(
        QwenCodeConfig, kit=cli_kit, image=qwen_mcp_image, server=server, docker_engine=docker_engine,
        tmp_path=tmp_path, monkeypatch=monkeypatch, secret=SECRET, variable="AGENTRIG_TEST_QWEN_DOCKER_MCP",
        content="qwen container\n",
    ) as run:
        mcp_steps = [s for s in run.steps if isinstance(s, ToolUseStep) and "probe" in s.tool]
        assert len(mcp_steps) == 2, [s.tool for s in run.steps if isinstance(s, ToolUseStep)]
        # the settings give the server the container's workspace as its working directory, not the host's
        assert run.agent._state_dir_host is not None
        settings = json.loads((run.agent._state_dir_host / "settings.json").read_text())
        assert settings["mcpServers"]["probe"]["cwd"] == "/workspace"
        # the secret reached the server (in the container) through the 0600 settings.json
        digest = hashlib.sha256(SECRET.encode()).hexdigest()
        assert digest in (mcp_steps[1].result or "") and digest in server.model_requests[2].raw_body
    # and the session's container went with the session
    assert docker_engine.containers.list(all=True, filters={"id": run.container_id}) == []
