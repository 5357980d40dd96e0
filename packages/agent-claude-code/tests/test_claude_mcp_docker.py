"""MCP under ``--runtime docker`` for the ``claude_code`` agent: the real pinned CLI runs in the session's
container and starts the test kit's stdio MCP server there (an image layer over the agent's image carrying
the server, built offline by :mod:`agentrig.testing.mcp_image`); scripted by the fake Messages API on the host,
the model calls the server's tools and their side effect shows in the workspace. The scenario and its common
checks are the test kit's (:mod:`agentrig.testing.cli_mcp_docker`); here: Claude Code's tool names and steps."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from agentrig.testing.cli_agents import CliAgentKit
from agentrig.testing.cli_mcp_docker import WRITTEN, probe_server_in_docker
from agentrig.testing.mcp_image import mcp_image_fixture
from agentrig.trajectory import ToolUseStep
from agentrig_claude_code.config import ClaudeCodeConfig

# The same worker as test_claude_docker.py: one build of the agent image, then the MCP layer over it.
pytestmark = [pytest.mark.docker, pytest.mark.claude_cli, pytest.mark.xdist_group("claude_image")]

claude_mcp_image = mcp_image_fixture(base="claude_image", name="claude_mcp_image")

SECRET = "claude-docker-mcp-secret-5d20"


def test_the_cli_in_docker_starts_the_stdio_server_in_its_container_and_the_tool_writes_the_workspace(
    tmp_path: Path, cli_kit: CliAgentKit, claude_mcp_image: str, fake_anthropic_server: Any, docker_engine: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = fake_anthropic_server
    server.add_reply("Writing through MCP.", tool_calls=[
        {"name": "mcp__probe__write_file", "arguments": {"path": WRITTEN, "content": "in the container\n"},
         "id": "toolu_w"},
    ])
    server.add_reply("Checking the secret.", tool_calls=[
        {"name": "mcp__probe__env_digest", "arguments": {"name": "PROBE_SECRET"}, "id": "toolu_d"},
        {"name": "Bash", "arguments": {"command": f"test -f /.dockerenv && cat {WRITTEN}"}, "id": "toolu_b"},
    ])
    server.add_reply("Done.")
    with probe_server_in_docker(
        ClaudeCodeConfig, kit=cli_kit, image=claude_mcp_image, server=server, docker_engine=docker_engine,
        tmp_path=tmp_path, monkeypatch=monkeypatch, secret=SECRET, variable="AGENTRIG_TEST_CLAUDE_DOCKER_MCP",
        content="in the container\n",
    ) as run:
        assert run.result.stop_reason == "completed"
        calls = {s.tool: s for s in run.steps if isinstance(s, ToolUseStep)}
        assert "wrote 17 bytes to out/from_mcp.txt" in (calls["mcp__probe__write_file"].result or "")
        assert calls["Bash"].result is not None and "in the container" in calls["Bash"].result
        assert hashlib.sha256(SECRET.encode()).hexdigest() in (calls["mcp__probe__env_digest"].result or "")
