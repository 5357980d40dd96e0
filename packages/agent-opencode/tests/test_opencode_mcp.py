"""MCP servers for the ``opencode`` agent: the ``mcp`` section of its ``opencode.json`` (0600, in its private
state directory); the real pinned CLI calls the test kit's MCP server's tools, scripted by the fake OpenAI
server (OpenCode offers a server's tool ``T`` as ``SERVER_T``)."""

from __future__ import annotations

import hashlib
import json
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentrig.testing.mcp_server import McpHttpServerProcess, stdio_server
from agentrig.trajectory import ToolUseStep
from agentrig_opencode.agent import OpenCodeAgent

pytestmark = pytest.mark.opencode_cli

MCP_SECRET = "opencode-mcp-env-secret-5d2a"
HTTP_TOKEN = "opencode-mcp-http-token-91b7"


def tool_names(request: Any) -> list[str]:
    """The names of the tools a chat-completions request offers."""
    return sorted(t["function"]["name"] for t in request.body.get("tools") or [])


def test_the_model_calls_a_stdio_mcp_tool_and_its_file_appears_in_the_workspace(
    make_agent: Callable[..., OpenCodeAgent], session: Any, fake_openai_server: Any, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = fake_openai_server
    server.add_reply("Writing.", tool_calls=[
        {"name": "probe_write_file", "arguments": {"path": "from_mcp.txt", "content": "via opencode\n"}},
    ])
    server.add_reply("Checking.", tool_calls=[
        {"name": "probe_env_digest", "arguments": {"name": "PROBE_SECRET"}},
        {"name": "probe_fail", "arguments": {"message": "expected failure"}},
    ])
    server.add_reply("Done.")
    monkeypatch.setenv("AGENTRIG_TEST_OPENCODE_SECRET", MCP_SECRET)
    pid_file = tmp_path / "mcp.pid"
    entry = stdio_server("--pid-file", str(pid_file), env={"PROBE_SECRET": "${AGENTRIG_TEST_OPENCODE_SECRET}"})
    agent = make_agent(mcp_servers={"probe": entry})
    steps: list[Any] = []
    agent.add_step_listener(steps.append)
    agent.setup(session)
    try:
        result = agent.run_checkpoint("Write from_mcp.txt with the probe server.")
        assert not result.had_error, result.error_message
        assert (session.workspace.path / "from_mcp.txt").read_text() == "via opencode\n"
        # offered from the first request on, next to OpenCode's own tools
        offered = tool_names(server.model_requests[0])
        assert {"probe_add", "probe_env_digest", "probe_fail", "probe_write_file", "bash"} <= set(offered), offered
        third = server.model_requests[2].raw_body
        assert hashlib.sha256(MCP_SECRET.encode()).hexdigest() in third and "expected failure" in third
        mcp_steps = [s for s in steps if isinstance(s, ToolUseStep) and s.tool.startswith("probe_")]
        assert mcp_steps[0].tool == "probe_write_file" and "from_mcp.txt" in (mcp_steps[0].result or "")
        # the two calls of one reply run together: their steps come as each ends
        by_tool = {s.tool: s for s in mcp_steps[1:]}
        assert sorted(by_tool) == ["probe_env_digest", "probe_fail"]
        assert by_tool["probe_fail"].is_error and "expected failure" in (by_tool["probe_fail"].result or "")
        assert not by_tool["probe_env_digest"].is_error
        # the config holds the resolved secret, owner-only, in the private state directory; no argv has it
        assert agent._state_dir_host is not None
        config = agent._state_dir_host / "opencode.json"
        text = config.read_text()
        assert stat.S_IMODE(config.stat().st_mode) == 0o600 and MCP_SECRET in text
        local = json.loads(text)["mcp"]["probe"]
        assert local["type"] == "local" and local["command"][0] == entry["command"]
        assert local["cwd"] == str(session.workspace.path)
        assert not str(config).startswith(str(session.workspace.path))
        assert agent.launch is not None and all(MCP_SECRET not in arg for arg in agent.launch.argv)
        artifacts = tmp_path / "artifacts"
        agent.save_artifacts(artifacts)
        assert all(MCP_SECRET not in f.read_text() for f in artifacts.iterdir() if f.is_file())
    finally:
        agent.cleanup()
    pid = int(pid_file.read_text())
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()


def test_a_remote_mcp_server_gets_its_headers(
    make_agent: Callable[..., OpenCodeAgent], session: Any, fake_openai_server: Any, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = fake_openai_server
    server.add_reply("Writing.", tool_calls=[
        {"name": "web_write_file", "arguments": {"path": "web.txt", "content": "over http"}},
    ])
    server.add_reply("Done.")
    monkeypatch.setenv("AGENTRIG_TEST_OPENCODE_TOKEN", HTTP_TOKEN)
    root = tmp_path / "served"
    root.mkdir()
    with McpHttpServerProcess(root, env={"AGENTRIG_MCP_TOKEN": HTTP_TOKEN}) as mcp:
        entry = {"url": mcp.url, "headers": {"Authorization": "Bearer ${AGENTRIG_TEST_OPENCODE_TOKEN}"}}
        agent = make_agent(mcp_servers={"web": entry})
        steps: list[Any] = []
        agent.add_step_listener(steps.append)
        agent.setup(session)
        try:
            result = agent.run_checkpoint("Write web.txt with the web server.")
            assert not result.had_error, result.error_message
            artifacts = tmp_path / "artifacts"
            agent.save_artifacts(artifacts)
        finally:
            agent.cleanup()
    # the server answers only requests with the token: the tool ran, so the header reached it
    assert (root / "web.txt").read_text() == "over http"
    assert "web_write_file" in tool_names(server.model_requests[0])
    remote = json.loads((artifacts / "opencode_config.json").read_text())["mcp"]["web"]
    assert remote["type"] == "remote" and remote["oauth"] is False and remote["url"] == mcp.url
    assert all(HTTP_TOKEN not in f.read_text() for f in artifacts.iterdir() if f.is_file())
    assert agent.launch is not None and all(HTTP_TOKEN not in arg for arg in agent.launch.argv)
