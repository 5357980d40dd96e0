"""MCP under ``--runtime docker`` for the ``opencode`` agent: the real pinned CLI runs in the session's container
and starts the test kit's stdio MCP server there (a ``local`` entry of the ``mcp`` section of its opencode.json;
the server from an image layer over the agent's image, :mod:`agentrig.testing.mcp_image`); scripted by the fake
OpenAI server on the host, the model calls the server's tools and their side effect shows in the workspace. The
scenario and its common checks are the test kit's (:mod:`agentrig.testing.cli_mcp_docker`); here: OpenCode's
tool names (``probe_TOOL``)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from agentrig.testing.cli_agents import CliAgentKit
from agentrig.testing.cli_mcp_docker import WRITTEN, probe_server_in_docker
from agentrig.testing.mcp_image import mcp_image_fixture
from agentrig.trajectory import ToolUseStep
from agentrig_opencode.config import OpenCodeConfig

# The same worker as the greeter's Docker test: one build of the agent image, then the MCP layer over it.
pytestmark = [pytest.mark.docker, pytest.mark.opencode_cli, pytest.mark.xdist_group("opencode_image")]

opencode_mcp_image = mcp_image_fixture(base="opencode_image", name="opencode_mcp_image")

SECRET = "opencode-docker-mcp-secret-2f70"


def test_the_cli_in_docker_starts_the_stdio_server_in_its_container_and_the_tool_writes_the_workspace(
    tmp_path: Path, cli_kit: CliAgentKit, opencode_mcp_image: str, fake_openai_server: Any, docker_engine: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = fake_openai_server
    server.add_reply("Writing.", tool_calls=[
        {"name": "probe_write_file", "arguments": {"path": WRITTEN, "content": "opencode container\n"}},
    ])
    server.add_reply("Checking.", tool_calls=[{"name": "probe_env_digest", "arguments": {"name": "PROBE_SECRET"}}])
    server.add_reply("Done.")
    with probe_server_in_docker(
        OpenCodeConfig, kit=cli_kit, image=opencode_mcp_image, server=server, docker_engine=docker_engine,
        tmp_path=tmp_path, monkeypatch=monkeypatch, secret=SECRET, variable="AGENTRIG_TEST_OPENCODE_DOCKER_MCP",
        content="opencode container\n",
    ) as run:
        offered = {t["function"]["name"] for t in server.model_requests[0].body["tools"]}
        assert {"probe_add", "probe_env_digest", "probe_fail", "probe_write_file"} <= offered
        mcp_steps = [s for s in run.steps if isinstance(s, ToolUseStep) and s.tool.startswith("probe_")]
        assert [s.tool for s in mcp_steps] == ["probe_write_file", "probe_env_digest"]
        assert "out/from_mcp.txt" in (mcp_steps[0].result or "")
        assert hashlib.sha256(SECRET.encode()).hexdigest() in (mcp_steps[1].result or "")
