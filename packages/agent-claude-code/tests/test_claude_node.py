"""The pinned Claude Code CLI is a native executable: ``--runtime local`` needs no Node on the host, whatever its
package.json's ``engines.node`` says (``>=22``), so the host-Node check lets it through; a Node-script build is checked."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentrig.errors import AgentSetupError
from agentrig.testing.cli_agents import CliAgentKit
from agentrig.testing.fake_node import fake_node_dir, first_on_path, path_without_node

pytestmark = pytest.mark.claude_cli

UNREACHABLE = "http://127.0.0.1:9"


def test_the_native_cli_passes_preflight_with_an_old_node_or_none(
    cli_kit: CliAgentKit, claude_bin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open(os.path.realpath(claude_bin), "rb") as handle:
        assert handle.read(4) == b"\x7fELF"  # what this test is about: the pinned CLI needs no node
    monkeypatch.setenv("PATH", first_on_path(fake_node_dir(tmp_path, "v18.19.0")))
    cli_kit.preflight_agent(claude_bin, "local", UNREACHABLE).preflight()
    monkeypatch.setenv("PATH", path_without_node(tmp_path))
    cli_kit.preflight_agent(claude_bin, "local", UNREACHABLE).preflight()


def test_a_node_script_build_without_engines_falls_back_to_node_18(
    cli_kit: CliAgentKit, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``cli.js`` build of the CLI (as its releases before the native one), in a package naming no engines."""
    package = tmp_path / "node_modules" / "@anthropic-ai" / "claude-code"
    package.mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": "@anthropic-ai/claude-code", "version": "1.0.0"}))
    script = package / "cli.js"
    script.write_text("#!/usr/bin/env node\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", first_on_path(fake_node_dir(tmp_path, "v16.20.2")))
    with pytest.raises(AgentSetupError, match=r"needs Node\.js >= 18 \(the claude_code agent's default.*is v16\.20\.2"):
        cli_kit.preflight_agent(str(script), "local", UNREACHABLE).preflight()
