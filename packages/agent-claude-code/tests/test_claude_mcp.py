"""MCP servers for the ``claude_code`` agent: the real pinned CLI calls the test kit's MCP server's tools
(``--mcp-config``, a 0600 file in its private config directory), scripted by the fake Messages API."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentrig import AgentSetupError
from agentrig.testing.mcp_server import McpHttpServerProcess, stdio_server
from agentrig.trajectory import ToolUseStep
from agentrig_claude_code.agent import MCP_CONFIG_NAME, ClaudeCodeAgent

pytestmark = pytest.mark.claude_cli

MCP_SECRET = "mcp-env-secret-7f3a9c"
HEADER_TOKEN = "mcp-header-token-51be"


def test_the_model_calls_a_stdio_mcp_tool_and_its_file_appears_in_the_workspace(
    make_agent: Callable[..., ClaudeCodeAgent], session: Any, fake_anthropic_server: Any, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = fake_anthropic_server
    server.add_reply("Writing through MCP.", tool_calls=[
        {"name": "mcp__probe__write_file", "arguments": {"path": "from_mcp.txt", "content": "hello mcp\n"}, "id": "toolu_w"},
    ])
    server.add_reply("Checking the secret and a failing tool.", tool_calls=[
        {"name": "mcp__probe__env_digest", "arguments": {"name": "PROBE_SECRET"}, "id": "toolu_d"},
        {"name": "mcp__probe__fail", "arguments": {"message": "expected failure"}, "id": "toolu_f"},
    ])
    server.add_reply("Done.")
    monkeypatch.setenv("AGENTRIG_TEST_PROBE_SECRET", MCP_SECRET)
    pid_file = tmp_path / "mcp.pid"
    entry = stdio_server("--pid-file", str(pid_file), env={"PROBE_SECRET": "${AGENTRIG_TEST_PROBE_SECRET}"})
    agent = make_agent(mcp_servers={"probe": entry})
    steps: list[Any] = []
    agent.add_step_listener(steps.append)
    agent.setup(session)
    try:
        result = agent.run_checkpoint("Write from_mcp.txt with the probe server.")
        assert not result.had_error, result.error_message
        assert result.stop_reason == "completed"
        assert (session.workspace.path / "from_mcp.txt").read_text() == "hello mcp\n"
        # the CLI announced the server's tools to the model (as deferred tools) under its names
        first = server.model_requests[0].raw_body
        assert all(f"mcp__probe__{name}" in first for name in ("write_file", "fail", "add", "env_digest"))
        second, third = server.model_requests[1].raw_body, server.model_requests[2].raw_body
        assert "wrote 10 bytes to from_mcp.txt" in second
        assert hashlib.sha256(MCP_SECRET.encode()).hexdigest() in third and "expected failure" in third
        # the trajectory has each MCP call with its arguments and result, the failing one as an error
        calls = {s.tool: s for s in steps if isinstance(s, ToolUseStep)}
        assert calls["mcp__probe__write_file"].arguments == {"path": "from_mcp.txt", "content": "hello mcp\n"}
        assert calls["mcp__probe__fail"].is_error and not calls["mcp__probe__write_file"].is_error
        # the config file holds the resolved secret, owner-only, in the private config dir; no argv has it
        assert agent.launch is not None
        config_file = Path(agent.launch.argv[agent.launch.argv.index("--mcp-config") + 1])
        assert config_file.name == MCP_CONFIG_NAME and stat.S_IMODE(config_file.stat().st_mode) == 0o600
        assert json.loads(config_file.read_text())["mcpServers"]["probe"]["env"] == {"PROBE_SECRET": MCP_SECRET}
        assert "--strict-mcp-config" in agent.launch.argv and "mcp__probe" in " ".join(agent.launch.argv)
        assert not str(config_file).startswith(str(session.workspace.path))
        assert all(MCP_SECRET not in arg for arg in agent.launch.argv)
        artifacts = tmp_path / "artifacts"
        agent.save_artifacts(artifacts)
        assert all(MCP_SECRET not in f.read_text() for f in artifacts.iterdir())
    finally:
        agent.cleanup()
    # the CLI stopped its server with itself
    pid = int(pid_file.read_text())
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()


def test_an_http_mcp_server_gets_its_headers(
    make_agent: Callable[..., ClaudeCodeAgent], session: Any, fake_anthropic_server: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = fake_anthropic_server
    server.add_reply("Via HTTP.", tool_calls=[
        {"name": "mcp__web__write_file", "arguments": {"path": "web.txt", "content": "over http"}, "id": "toolu_h"},
    ])
    server.add_reply("Done.")
    monkeypatch.setenv("AGENTRIG_TEST_MCP_HEADER", HEADER_TOKEN)
    root = session.workspace.path
    with McpHttpServerProcess(root, env={"AGENTRIG_MCP_TOKEN": HEADER_TOKEN}) as mcp:
        agent = make_agent(mcp_servers={"web": {"url": mcp.url, "headers": {"Authorization": "Bearer ${AGENTRIG_TEST_MCP_HEADER}"}}})
        agent.setup(session)
        try:
            result = agent.run_checkpoint("Write web.txt.")
        finally:
            agent.cleanup()
    assert not result.had_error, result.error_message
    assert (root / "web.txt").read_text() == "over http"


def test_an_unset_variable_is_a_setup_error_naming_it(make_agent: Callable[..., ClaudeCodeAgent]) -> None:
    os.environ.pop("AGENTRIG_TEST_UNSET_VAR", None)
    agent = make_agent(mcp_servers={"s": {"command": "x", "env": {"T": "${AGENTRIG_TEST_UNSET_VAR}"}}})
    with pytest.raises(AgentSetupError, match=r"^claude_code config: mcp_servers.s.env.T: environment variable "
                                              r"AGENTRIG_TEST_UNSET_VAR is not set"):
        agent.preflight()
