"""``--runtime local`` on a host whose Node is too old for the pinned Qwen Code CLI (its package.json: ``>=22.0.0``;
this machine's is 20), or has none: one line before anything runs, from the preflight and from ``agentrig run``
alike. A Node 22 first on ``PATH`` passes; Docker is not affected (see test_qwen_greeter.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.testing.cli_agents import CliAgentKit, cli_run_env
from agentrig.testing.fake_node import (
    check_one_line_refusal,
    fake_node_dir,
    first_on_path,
    path_without_node,
    refused_local_run,
    refused_preflight,
)

pytestmark = pytest.mark.qwen_cli

REPO = Path(__file__).resolve().parents[3]
UNREACHABLE = "http://127.0.0.1:9"  # nothing is called: the checks come first
NEEDS = "needs Node.js >= 22 (engines.node '>=22.0.0' of @qwen-code/qwen-code 0.24.4)"


def test_preflight_refuses_node_20_naming_what_the_package_needs(
    cli_kit: CliAgentKit, qwen_bin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", first_on_path(fake_node_dir(tmp_path, "v20.20.2")))
    message = refused_preflight(cli_kit.preflight_agent(qwen_bin, "local", UNREACHABLE), NEEDS,
                                "is v20.20.2: install Node.js >= 22 on this host, or use --runtime docker")
    assert message.startswith("the qwen_code agent's Qwen Code CLI")


def test_preflight_passes_with_node_22_first_on_path(cli_kit: CliAgentKit, qwen_bin: str, node_22_first_on_path: str) -> None:
    cli_kit.preflight_agent(qwen_bin, "local", UNREACHABLE).preflight()


def test_preflight_with_docker_does_not_look_at_the_hosts_node(
    cli_kit: CliAgentKit, qwen_bin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", path_without_node(tmp_path))
    cli_kit.preflight_agent(qwen_bin, "docker", UNREACHABLE).preflight()


def test_agentrig_run_local_on_node_20_is_one_line_exit_2_and_no_run_directory(qwen_bin: str, tmp_path: Path) -> None:
    path = first_on_path(fake_node_dir(tmp_path, "v20.20.2"))
    env = cli_run_env("OPENAI_", OPENAI_API_KEY="sk-test-qwen-node-0123456789", OPENAI_BASE_URL=UNREACHABLE, PATH=path)
    out = tmp_path / "run"
    result = refused_local_run(REPO / "examples" / "greeter", agent="qwen_code", model="openai/gpt-5",
                               binary=qwen_bin, env=env, output=out)
    line = check_one_line_refusal(result, out, "qwen_code", "v20.20.2", "Node.js >= 22", "--runtime docker")
    assert line.startswith("agentrig: error: the qwen_code agent's Qwen Code CLI")
    assert "sk-test-qwen-node" not in result.stderr


def test_agentrig_run_local_without_node_is_one_line(qwen_bin: str, tmp_path: Path) -> None:
    env = cli_run_env("OPENAI_", OPENAI_API_KEY="sk-test-qwen-node-0123456789", OPENAI_BASE_URL=UNREACHABLE,
                      PATH=path_without_node(tmp_path))
    out = tmp_path / "run"
    result = refused_local_run(REPO / "examples" / "greeter", agent="qwen_code", model="openai/gpt-5",
                               binary=qwen_bin, env=env, output=out)
    check_one_line_refusal(result, out, "qwen_code", "no 'node' on PATH", "install Node.js >= 22", "--runtime docker")
