"""miniswe has no MCP support: a config naming MCP servers is refused in one line, never ignored."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.cli import main
from agentrig_miniswe.config import MiniSweConfig


def test_the_config_refuses_mcp_servers() -> None:
    with pytest.raises(ValueError, match="miniswe has no MCP support"):
        MiniSweConfig.model_validate({"mcp_servers": {"files": {"command": "python3"}}})
    assert MiniSweConfig.model_validate({"mcp_servers": {}}).mcp_servers == {}


def test_agentrig_run_says_so_in_one_line_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    problem = tmp_path / "hello"
    problem.mkdir()
    (problem / "task.md").write_text("Say hi.\n")
    (problem / "problem.yaml").write_text("name: hello\ncheckpoints:\n  - name: one\n    prompt: task.md\n")
    status = main([
        "run", str(problem), "--agent", "miniswe", "--model", "openai/gpt-fake", "--output", str(tmp_path / "run"),
        "-c", "mcp_servers={files: {command: python3, args: [-m, agentrig.testing.mcp_server]}}",
    ])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("agentrig: error:")]
    assert status == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].endswith("field 'mcp_servers': miniswe has no MCP support: remove mcp_servers (or pick an agent that has)")
    assert not (tmp_path / "run").exists()
