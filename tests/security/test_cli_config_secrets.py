"""Threat: an MCP server's secret (``env: {TOKEN: ${VAR}}``), resolved into the CLI's own config file
(Codex's ``config.toml``, 0600 in its private home), is read back by the model with ``cat`` and lands in the
trajectory (issue 32, section 2). The scrub of everything the agent records covers it: the value is in no file
of the run directory, not in the export, not in the static report."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agentrig.scrub import REDACTED
from agentrig.testing.mcp_server import stdio_server

sys.path.insert(0, str(Path(__file__).parent))

from secret_canary import CASES, agentrig, canary, leaks, problem, run_env

pytestmark = [pytest.mark.codex_cli, pytest.mark.timeout(900)]


def test_an_mcp_secret_the_model_reads_from_the_cli_config_reaches_no_record(
    fake_openai_server: Any, tmp_path: Path
) -> None:
    case = CASES["codex"]
    key, mcp_secret = canary("codex"), canary("mcp")
    config = {"type": "codex", "binary": case.binary_path(), "base_url": fake_openai_server.base_url,
              "mcp_servers": {"probe": stdio_server(env={"PROBE_SECRET": "${AGENTRIG_TEST_MCP_CANARY}"})}}
    agent_file = tmp_path / "codex.yaml"
    agent_file.write_text(json.dumps(config))  # JSON is YAML
    fake_openai_server.add_reply("Reading my config.", tool_calls=[
        case.shell("cat \"$CODEX_HOME/config.toml\"; echo done > done.txt")  # type: ignore[misc]
    ])
    fake_openai_server.add_reply("Done.")
    env = run_env(case, key, AGENTRIG_TEST_MCP_CANARY=mcp_secret)
    result = agentrig("run", str(problem(tmp_path / "problem")), "--agent", str(agent_file), "--model", case.model,
                      "--runtime", "local", "--output", str(tmp_path / "run"), env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = (tmp_path / "run" / "leak" / "probe" / "trajectory.jsonl").read_text().splitlines()
    printed = "".join(step.get("result") or "" for step in map(json.loads, lines) if step["kind"] == "tool_use")
    # the model did read the file: the server's table, its secret redacted
    assert "[mcp_servers.probe" in printed and f'"PROBE_SECRET" = "{REDACTED}"' in printed, printed
    assert leaks(tmp_path / "run", mcp_secret, env, tmp_path) == []
    assert mcp_secret not in result.stdout + result.stderr
