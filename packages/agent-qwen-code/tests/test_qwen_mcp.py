"""MCP servers for the ``qwen_code`` agent: the settings' ``mcpServers`` (0600, in its private QWEN_HOME), as
Gemini CLI's; the real pinned CLI calls the test kit's MCP server's tools, scripted by the fake OpenAI API
(the CLI offers them as ``mcp__NAME__TOOL``)."""

from __future__ import annotations

import hashlib
import json
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentrig.testing.cli_agents import record_steps
from agentrig.testing.mcp_server import stdio_server
from agentrig.trajectory import ToolUseStep
from agentrig_qwen_code.agent import QwenCodeAgent

pytestmark = [pytest.mark.qwen_cli, pytest.mark.usefixtures("node_22_first_on_path")]

MCP_SECRET = "qwen-mcp-env-secret-5c1e"


def test_the_model_calls_a_stdio_mcp_tool_and_its_file_appears_in_the_workspace(
    make_agent: Callable[..., QwenCodeAgent], session: Any, fake_openai_server: Any, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = fake_openai_server
    server.add_reply("Writing.", tool_calls=[
        {"name": "mcp__probe__write_file", "arguments": {"path": "from_mcp.txt", "content": "via qwen\n"}},
    ])
    server.add_reply("Checking.", tool_calls=[
        {"name": "mcp__probe__env_digest", "arguments": {"name": "PROBE_SECRET"}},
        {"name": "mcp__probe__fail", "arguments": {"message": "expected failure"}},
    ])
    server.add_reply("Done.")
    monkeypatch.setenv("AGENTRIG_TEST_QWEN_SECRET", MCP_SECRET)
    pid_file = tmp_path / "mcp.pid"
    entry = stdio_server("--pid-file", str(pid_file), env={"PROBE_SECRET": "${AGENTRIG_TEST_QWEN_SECRET}"})
    agent = make_agent(mcp_servers={"probe": entry})
    steps = record_steps(agent)
    agent.setup(session)
    try:
        result = agent.run_checkpoint("Write from_mcp.txt with the probe server.")
        assert not result.had_error, result.error_message
        assert (session.workspace.path / "from_mcp.txt").read_text() == "via qwen\n"
        # the CLI defers MCP tools (its tool_search finds them): they are not all in the first request's tools
        offered = {t["function"]["name"] for r in server.model_requests for t in r.body.get("tools", [])}
        described = " ".join(r.raw_body for r in server.model_requests)
        assert all(f"mcp__probe__{tool}" in offered or f"mcp__probe__{tool}" in described
                   for tool in ("write_file", "env_digest", "fail")), offered
        third = server.model_requests[2].raw_body
        assert hashlib.sha256(MCP_SECRET.encode()).hexdigest() in third and "expected failure" in third
        mcp_steps = [s for s in steps if isinstance(s, ToolUseStep) and "probe" in s.tool]
        assert len(mcp_steps) == 3, [s.tool for s in steps if isinstance(s, ToolUseStep)]
        assert mcp_steps[0].arguments == {"path": "from_mcp.txt", "content": "via qwen\n"}
        assert [s.is_error for s in mcp_steps] == [False, False, True]
        # the settings hold the resolved secret, owner-only, in the private QWEN_HOME; no argv has it
        assert agent._state_dir_host is not None
        settings = agent._state_dir_host / "settings.json"
        assert stat.S_IMODE(settings.stat().st_mode) == 0o600 and MCP_SECRET in settings.read_text()
        probe = json.loads(settings.read_text())["mcpServers"]["probe"]
        assert probe["cwd"] == str(session.workspace.path) and probe["trust"] is True
        assert not str(settings).startswith(str(session.workspace.path))
        assert agent.launch is not None and all(MCP_SECRET not in arg for arg in agent.launch.argv)
        artifacts = tmp_path / "artifacts"
        agent.save_artifacts(artifacts)
        assert all(MCP_SECRET not in f.read_text() for f in artifacts.iterdir() if f.is_file())
        assert "probe" in json.loads((artifacts / "qwen_settings.json").read_text())["mcpServers"]
    finally:
        agent.cleanup()
    pid = int(pid_file.read_text())
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()
