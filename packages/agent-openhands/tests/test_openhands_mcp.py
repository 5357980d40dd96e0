"""MCP servers for the ``openhands`` agent: the SDK agent's ``mcp_config`` (in the owner-only run file of its
private state directory); the real pinned SDK calls the test kit's MCP server's tools, scripted by the fake OpenAI API."""

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
from agentrig_openhands.agent import OpenHandsAgent

pytestmark = pytest.mark.openhands

MCP_SECRET = "openhands-mcp-env-secret-51c9"


def test_the_model_calls_a_stdio_mcp_tool_and_its_file_appears_in_the_workspace(
    make_agent: Callable[..., OpenHandsAgent], session: Any, fake_openai_server: Any, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = fake_openai_server
    server.add_reply("Writing.", tool_calls=[
        {"name": "write_file", "arguments": {"path": "from_mcp.txt", "content": "via openhands\n"}},
    ])
    server.add_reply("Checking.", tool_calls=[{"name": "env_digest", "arguments": {"name": "PROBE_SECRET"}}])
    server.add_reply("Done.")
    monkeypatch.setenv("AGENTRIG_TEST_OPENHANDS_SECRET", MCP_SECRET)
    pid_file = tmp_path / "mcp.pid"
    entry = stdio_server("--pid-file", str(pid_file), env={"PROBE_SECRET": "${AGENTRIG_TEST_OPENHANDS_SECRET}"})
    agent = make_agent(mcp_servers={"probe": entry})
    steps = record_steps(agent)
    agent.setup(session)
    try:
        result = agent.run_checkpoint("Write from_mcp.txt with the probe server.")
        assert not result.had_error, result.error_message
        assert (session.workspace.path / "from_mcp.txt").read_text() == "via openhands\n"
        offered = {t["function"]["name"] for t in server.model_requests[0].body["tools"]}
        assert {"write_file", "env_digest", "terminal", "file_editor"} <= offered
        assert hashlib.sha256(MCP_SECRET.encode()).hexdigest() in server.model_requests[2].raw_body
        mcp_steps = [s for s in steps if isinstance(s, ToolUseStep) and s.tool in ("write_file", "env_digest")]
        assert [s.tool for s in mcp_steps] == ["write_file", "env_digest"] and not any(s.is_error for s in mcp_steps)
        # the run file holds the resolved secret, owner-only, in the private state directory; no argv has it
        assert agent._state_dir_host is not None
        run_file = agent._state_dir_host / "run.json"
        assert stat.S_IMODE(run_file.stat().st_mode) == 0o600 and MCP_SECRET in run_file.read_text()
        probe = json.loads(run_file.read_text())["mcp_config"]["probe"]
        assert probe["cwd"] == str(session.workspace.path)
        assert agent.launch is not None and all(MCP_SECRET not in arg for arg in agent.launch.argv)
        artifacts = tmp_path / "artifacts"
        agent.save_artifacts(artifacts)
        assert all(MCP_SECRET not in f.read_text() for f in artifacts.iterdir() if f.is_file())
        assert "probe" in json.loads((artifacts / "openhands_run.json").read_text())["mcp_config"]
    finally:
        agent.cleanup()
    pid = int(pid_file.read_text())
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()
