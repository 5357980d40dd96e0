"""``--runtime local`` on a host whose Node is too old for the pinned Gemini CLI (its package.json: ``>=20``), or
has none: one line before anything runs, from the preflight and from ``agentrig run`` alike. Docker is not affected."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentrig.errors import AgentSetupError
from agentrig.testing.cli_agents import CliAgentKit, cli_run_env, local_session
from agentrig.testing.fake_node import (
    check_one_line_refusal,
    fake_node_dir,
    first_on_path,
    path_without_node,
    refused_local_run,
    refused_preflight,
    require_host_node,
)

pytestmark = pytest.mark.gemini_cli

REPO = Path(__file__).resolve().parents[3]
UNREACHABLE = "http://127.0.0.1:9"  # nothing is called: the checks come first


def test_preflight_refuses_node_18_naming_what_the_package_needs(
    cli_kit: CliAgentKit, gemini_bin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", first_on_path(fake_node_dir(tmp_path, "v18.19.0")))
    message = refused_preflight(cli_kit.preflight_agent(gemini_bin, "local", UNREACHABLE),
                                "needs Node.js >= 20 (engines.node '>=20' of @google/gemini-cli 0.61.0)",
                                "is v18.19.0: install Node.js >= 20 on this host, or use --runtime docker")
    assert message.startswith("the gemini_cli agent's Gemini CLI")


def test_preflight_with_docker_does_not_look_at_the_hosts_node(
    cli_kit: CliAgentKit, gemini_bin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", first_on_path(fake_node_dir(tmp_path, "v18.19.0")))
    cli_kit.preflight_agent(gemini_bin, "docker", UNREACHABLE).preflight()
    monkeypatch.setenv("PATH", path_without_node(tmp_path))
    cli_kit.preflight_agent(gemini_bin, "docker", UNREACHABLE).preflight()


def test_preflight_passes_on_this_hosts_node(cli_kit: CliAgentKit, gemini_bin: str) -> None:
    require_host_node(20)
    cli_kit.preflight_agent(gemini_bin, "local", UNREACHABLE).preflight()


def test_setup_in_a_local_session_refuses_before_the_cli_starts(
    cli_kit: CliAgentKit, gemini_bin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Built without a runtime (an AgentContext made by hand, a session of one's own): the local session's setup
    checks instead of letting the CLI fail on its own syntax."""
    monkeypatch.setenv("PATH", first_on_path(fake_node_dir(tmp_path, "v18.19.0")))
    agent = cli_kit.preflight_agent(gemini_bin, None, UNREACHABLE)
    agent.preflight()  # the runtime is not known yet
    with local_session(tmp_path / "session") as session, pytest.raises(AgentSetupError, match=r"is v18\.19\.0: install"):
        agent.setup(session)
    assert agent.cli_version is None  # `gemini --version` never ran
    agent.cleanup()


def test_agentrig_run_local_on_node_18_is_one_line_exit_2_and_no_run_directory(gemini_bin: str, tmp_path: Path) -> None:
    path = first_on_path(fake_node_dir(tmp_path, "v18.19.0"))
    env = cli_run_env("GEMINI_", "GOOGLE_", GEMINI_API_KEY="AIza-test-node-0123456789",
                      GOOGLE_GEMINI_BASE_URL=UNREACHABLE, PATH=path)
    out = tmp_path / "run"
    result = refused_local_run(REPO / "examples" / "greeter", agent="gemini_cli", model="gemini/gemini-2.5-pro",
                               binary=gemini_bin, env=env, output=out)
    line = check_one_line_refusal(result, out, "gemini_cli", "v18.19.0", "Node.js >= 20", "--runtime docker")
    assert line.startswith("agentrig: error: the gemini_cli agent's Gemini CLI")
    assert "AIza-test-node" not in result.stderr


def test_agentrig_run_local_without_node_is_one_line(gemini_bin: str, tmp_path: Path) -> None:
    env = cli_run_env("GEMINI_", "GOOGLE_", GEMINI_API_KEY="AIza-test-node-0123456789",
                      GOOGLE_GEMINI_BASE_URL=UNREACHABLE, PATH=path_without_node(tmp_path))
    out = tmp_path / "run"
    result = refused_local_run(REPO / "examples" / "greeter", agent="gemini_cli", model="gemini/gemini-2.5-pro",
                               binary=gemini_bin, env=env, output=out)
    check_one_line_refusal(result, out, "gemini_cli", "no 'node' on PATH", "install Node.js >= 20", "--runtime docker")


@pytest.mark.docker
@pytest.mark.xdist_group("gemini_image")
def test_agentrig_run_docker_on_a_node_18_host_solves_the_greeter(
    tmp_path: Path, node_test_image: str, gemini_image: str, fake_gemini_server: Any
) -> None:
    """The host's Node does not matter in Docker (the image brings Node 22): the same old node first on PATH,
    ``--runtime docker``, and the greeter passes."""
    from .test_gemini_greeter import check_greeter_run, greeter_script, run_greeter_in_docker

    greeter_script(fake_gemini_server)
    env = cli_run_env("GEMINI_", "GOOGLE_", GEMINI_API_KEY="AIza-test-node-0123456789",
                      GOOGLE_GEMINI_BASE_URL=fake_gemini_server.base_url,
                      PATH=first_on_path(fake_node_dir(tmp_path, "v18.19.0")))
    out = tmp_path / "run"
    result = run_greeter_in_docker(node_test_image, env, out)
    check_greeter_run(out, result, fake_gemini_server, "AIza-test-node-0123456789")
