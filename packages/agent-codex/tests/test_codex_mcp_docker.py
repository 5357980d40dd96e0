"""MCP under ``--runtime docker`` for the ``codex`` agent: the real pinned CLI runs in the session's container
and starts the test kit's stdio MCP server there (``[mcp_servers.probe]`` of its config.toml; the server from an
image layer over the agent's image, :mod:`agentrig.testing.mcp_image`); scripted by the fake Responses API on the
host, the model calls the server's tools and their side effect shows in the workspace. The scenario and its
common checks are the test kit's (:mod:`agentrig.testing.cli_mcp_docker`); here: Codex's tool namespace."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from agentrig.testing.cli_agents import CliAgentKit
from agentrig.testing.cli_mcp_docker import WRITTEN, probe_server_in_docker
from agentrig.testing.mcp_image import mcp_image_fixture
from agentrig.trajectory import ToolUseStep
from agentrig_codex.config import CodexConfig

# The same worker as test_codex_docker.py: one build of the agent image, then the MCP layer over it.
pytestmark = [pytest.mark.docker, pytest.mark.codex_cli, pytest.mark.xdist_group("codex_image")]

codex_mcp_image = mcp_image_fixture(base="codex_image", name="codex_mcp_image")

SECRET = "codex-docker-mcp-secret-8e41"


def test_the_cli_in_docker_starts_the_stdio_server_in_its_container_and_the_tool_writes_the_workspace(
    tmp_path: Path, cli_kit: CliAgentKit, codex_mcp_image: str, fake_openai_server: Any, docker_engine: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = fake_openai_server
    server.add_reply("Writing.", tool_calls=[
        {"name": "write_file", "namespace": "mcp__probe", "arguments": {"path": WRITTEN, "content": "codex container\n"}},
    ])
    server.add_reply("Checking.", tool_calls=[
        {"name": "env_digest", "namespace": "mcp__probe", "arguments": {"name": "PROBE_SECRET"}},
    ])
    server.add_reply("Done.")
    with probe_server_in_docker(
        CodexConfig, kit=cli_kit, image=codex_mcp_image, server=server, docker_engine=docker_engine,
        tmp_path=tmp_path, monkeypatch=monkeypatch, secret=SECRET, variable="AGENTRIG_TEST_CODEX_DOCKER_MCP",
        content="codex container\n",
    ) as run:
        # offered from the first request on (required = true: the CLI waited for the server in the container)
        namespaces = [t for t in server.model_requests[0].body["tools"] if t.get("name") == "mcp__probe"]
        assert sorted(t["name"] for t in namespaces[0]["tools"]) == ["add", "env_digest", "fail", "write_file"]
        mcp_steps = [s for s in run.steps if isinstance(s, ToolUseStep) and "probe" in s.tool]
        assert len(mcp_steps) == 2 and "wrote 16 bytes to out/from_mcp.txt" in (mcp_steps[0].result or "")
        assert hashlib.sha256(SECRET.encode()).hexdigest() in (mcp_steps[1].result or "")
