"""MCP servers for the ``codex`` agent: ``[mcp_servers.NAME]`` in its config.toml (0600, in its private
CODEX_HOME, ``required`` so the CLI waits for them); the real pinned CLI calls the test kit's MCP server's
tools, scripted by the fake Responses API (Codex offers them in the namespace ``mcp__NAME``)."""

from __future__ import annotations

import hashlib
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentrig.testing.mcp_server import stdio_server
from agentrig.trajectory import ToolUseStep
from agentrig_codex.agent import CodexAgent

pytestmark = pytest.mark.codex_cli

MCP_SECRET = "codex-mcp-env-secret-3c1e"


def test_the_model_calls_a_stdio_mcp_tool_and_its_file_appears_in_the_workspace(
    make_agent: Callable[..., CodexAgent], session: Any, fake_openai_server: Any, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = fake_openai_server
    server.add_reply("Writing.", tool_calls=[
        {"name": "write_file", "namespace": "mcp__probe", "arguments": {"path": "from_mcp.txt", "content": "via codex\n"}},
    ])
    server.add_reply("Checking.", tool_calls=[
        {"name": "env_digest", "namespace": "mcp__probe", "arguments": {"name": "PROBE_SECRET"}},
        {"name": "fail", "namespace": "mcp__probe", "arguments": {"message": "expected failure"}},
    ])
    server.add_reply("Done.")
    monkeypatch.setenv("AGENTRIG_TEST_CODEX_SECRET", MCP_SECRET)
    pid_file = tmp_path / "mcp.pid"
    entry = stdio_server("--pid-file", str(pid_file), env={"PROBE_SECRET": "${AGENTRIG_TEST_CODEX_SECRET}"})
    agent = make_agent(mcp_servers={"probe": entry})
    steps: list[Any] = []
    agent.add_step_listener(steps.append)
    agent.setup(session)
    try:
        result = agent.run_checkpoint("Write from_mcp.txt with the probe server.")
        assert not result.had_error, result.error_message
        assert (session.workspace.path / "from_mcp.txt").read_text() == "via codex\n"
        # offered from the first request on (required = true: the CLI waited for the server)
        namespaces = [t for t in server.model_requests[0].body["tools"] if t.get("name") == "mcp__probe"]
        assert sorted(t["name"] for t in namespaces[0]["tools"]) == ["add", "env_digest", "fail", "write_file"]
        third = server.model_requests[2].raw_body
        assert hashlib.sha256(MCP_SECRET.encode()).hexdigest() in third and "expected failure" in third
        mcp_steps = [s for s in steps if isinstance(s, ToolUseStep) and "probe" in s.tool]
        assert len(mcp_steps) == 3, [s.tool for s in steps if isinstance(s, ToolUseStep)]
        # the config holds the resolved secret, owner-only, in the private CODEX_HOME; no argv has it
        assert agent._state_dir_host is not None
        config = agent._state_dir_host / "config.toml"
        assert stat.S_IMODE(config.stat().st_mode) == 0o600 and MCP_SECRET in config.read_text()
        assert "[mcp_servers.probe]" in config.read_text() and not str(config).startswith(str(session.workspace.path))
        assert agent.launch is not None and all(MCP_SECRET not in arg for arg in agent.launch.argv)
        artifacts = tmp_path / "artifacts"
        agent.save_artifacts(artifacts)
        assert all(MCP_SECRET not in f.read_text() for f in artifacts.iterdir() if f.is_file())
    finally:
        agent.cleanup()
    pid = int(pid_file.read_text())
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()
