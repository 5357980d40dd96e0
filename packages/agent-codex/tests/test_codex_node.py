"""``--runtime local`` on a host whose Node is older than the pinned Codex CLI's launcher asks for (its package.json:
``>=16``, not a fixed 20), or has none: one line before anything runs. Docker is not affected."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.errors import AgentSetupError
from agentrig.testing.cli_agents import CliAgentKit, cli_run_env
from agentrig.testing.fake_node import (
    check_one_line_refusal,
    fake_node_dir,
    first_on_path,
    path_without_node,
    refused_local_run,
    refused_preflight,
    require_host_node,
)

pytestmark = pytest.mark.codex_cli

REPO = Path(__file__).resolve().parents[3]
UNREACHABLE = "http://127.0.0.1:9/v1"  # nothing is called: the checks come first


def test_preflight_reads_the_requirement_from_the_installed_package(
    cli_kit: CliAgentKit, codex_bin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", first_on_path(fake_node_dir(tmp_path, "v18.19.0")))
    cli_kit.preflight_agent(codex_bin, "local", UNREACHABLE).preflight()  # 18 is enough for @openai/codex (>=16)
    monkeypatch.setenv("PATH", first_on_path(fake_node_dir(tmp_path, "v14.21.3")))
    message = refused_preflight(cli_kit.preflight_agent(codex_bin, "local", UNREACHABLE),
                                "needs Node.js >= 16 (engines.node '>=16' of @openai/codex 0.169.0)",
                                "is v14.21.3: install Node.js >= 16 on this host, or use --runtime docker")
    assert message.startswith("the codex agent's Codex CLI")


def test_preflight_without_node_is_refused_locally_and_not_in_docker(
    cli_kit: CliAgentKit, codex_bin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", path_without_node(tmp_path))
    with pytest.raises(AgentSetupError, match=r"needs Node\.js >= 16 .*, and there is no 'node' on PATH: install"):
        cli_kit.preflight_agent(codex_bin, "local", UNREACHABLE).preflight()
    cli_kit.preflight_agent(codex_bin, "docker", UNREACHABLE).preflight()


def test_preflight_passes_on_this_hosts_node(cli_kit: CliAgentKit, codex_bin: str) -> None:
    require_host_node(16)
    cli_kit.preflight_agent(codex_bin, "local", UNREACHABLE).preflight()


def test_agentrig_run_local_on_node_14_is_one_line_exit_2_and_no_run_directory(codex_bin: str, tmp_path: Path) -> None:
    env = cli_run_env("OPENAI_", OPENAI_API_KEY="sk-test-node-0123456789", OPENAI_BASE_URL=UNREACHABLE,
                      PATH=first_on_path(fake_node_dir(tmp_path, "v14.21.3")))
    out = tmp_path / "run"
    result = refused_local_run(REPO / "examples" / "greeter", agent="codex", model="openai/gpt-5", binary=codex_bin,
                               env=env, output=out)
    check_one_line_refusal(result, out, "the codex agent's Codex CLI", "v14.21.3", "Node.js >= 16", "--runtime docker")
    assert "sk-test-node" not in result.stderr
