"""The opencode agent's config, the config file it writes for the CLI, its command line and environment."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from agentrig import AgentSetupError, ModelDefinition, ProviderCredential
from agentrig.model_definition import ThinkingPreset
from agentrig.pricing import APIPricing
from agentrig.testing.cli_agents import build_cli_agent
from agentrig_opencode.command import QUIET_ENV, build_argv, build_env, opencode_file
from agentrig_opencode.config import DEFAULT_CLI_VERSION, OpenCodeConfig

SECRET = "sk-config-test-secret"


def credential() -> ProviderCredential:
    return ProviderCredential(provider="openai", value=SecretStr(SECRET), source="test", env_var="OPENAI_API_KEY")


def test_defaults_pin_the_cli_and_the_parser() -> None:
    config = OpenCodeConfig()
    assert config.version == DEFAULT_CLI_VERSION == "1.18.33"
    assert config.stream_parser == "opencode-run-json"
    assert config.docker_template and "opencode-ai@{{ version }}" in config.docker_template


@pytest.mark.parametrize("env", [{"OPENAI_API_KEY": "x"}, {"OPENCODE_CONFIG": "/tmp/x.json"}, {"HOME": "/"}])
def test_env_may_not_set_what_agentrig_sets(env: dict[str, str]) -> None:
    with pytest.raises(ValidationError, match="env may not set"):
        OpenCodeConfig(env=env)


@pytest.mark.parametrize("arg", ["--model", "--session=abc", "--format", "--attach", "--title"])
def test_extra_args_may_not_repeat_agentrig_flags(arg: str) -> None:
    with pytest.raises(ValidationError, match="extra_args may not contain"):
        OpenCodeConfig(extra_args=[arg])


def test_config_file_declares_one_priced_provider_whose_key_is_an_env_reference() -> None:
    pricing = APIPricing(input=3.0, output=15.0, cache_read=0.3)
    text = opencode_file(
        model="m-1", base_url="http://127.0.0.1:9/v1", pricing=pricing, reasoning_effort="high", context=1000, output=100
    ).to_json()
    data = json.loads(text)
    assert data["model"] == data["small_model"] == "agentrig/m-1"
    assert data["enabled_providers"] == ["agentrig"] and data["share"] == "disabled" and data["autoupdate"] is False
    provider = data["provider"]["agentrig"]
    assert provider["npm"] == "@ai-sdk/openai-compatible"
    assert provider["options"] == {"baseURL": "http://127.0.0.1:9/v1", "apiKey": "{env:OPENAI_API_KEY}"}
    entry = provider["models"]["m-1"]
    # cache writes unpriced in the catalog cost the input price, as agentrig counts them
    assert entry["cost"] == {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_write": 3.0}
    assert entry["limit"] == {"context": 1000, "output": 100} and entry["options"] == {"reasoningEffort": "high"}
    assert data["permission"] == {"*": "allow"} and data["$schema"].startswith("https://opencode.ai/")


def test_argv_has_no_task_and_no_secret_and_env_isolates_the_cli() -> None:
    config = OpenCodeConfig(extra_args=["--print-logs"], env={"FOO": "1"})
    argv = build_argv(config, binary="opencode", model="gpt-5", title="agentrig p", session="ses_1")
    assert argv == ["opencode", "run", "--format", "json", "--model", "agentrig/gpt-5", "--title", "agentrig p",
                    "--thinking", "--session", "ses_1", "--print-logs"]
    env = build_env(config, credential=credential(), state_dir="/h/.agentrig-opencode", home="/h")
    assert env["OPENAI_API_KEY"] == SECRET and env["FOO"] == "1" and env["HOME"] == "/h"
    assert env["XDG_DATA_HOME"] == "/h/.agentrig-opencode/data" and env["TMPDIR"] == "/h/.agentrig-opencode/tmp"
    assert env["OPENCODE_CONFIG"] == "/h/.agentrig-opencode/opencode.json"
    assert QUIET_ENV.items() <= env.items()


def test_thinking_preset_becomes_the_reasoning_effort_unless_the_config_names_one() -> None:
    from agentrig.agents.interface import Agent, AgentContext

    model = ModelDefinition(provider="openai", name="gpt-5")
    preset = AgentContext(model=model, credential=credential(), problem_name="p", thinking_preset=ThinkingPreset.HIGH)
    assert Agent.from_config(OpenCodeConfig(), preset).reasoning_effort == "high"
    named = Agent.from_config(OpenCodeConfig(reasoning_effort="minimal"), preset)
    assert named.reasoning_effort == "minimal"


def test_a_provider_without_endpoint_or_a_missing_key_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    anthropic = ModelDefinition(provider="anthropic", name="claude")
    agent = build_cli_agent(OpenCodeConfig(), model=anthropic, credential=credential(), problem_name="p")
    with pytest.raises(AgentSetupError, match=re.escape("has no endpoint: use an openai/... model or set 'base_url'")):
        agent.preflight()
    keyless = build_cli_agent(OpenCodeConfig(), model=ModelDefinition(provider="openai", name="gpt-5"),
                              credential=None, problem_name="p")
    with pytest.raises(AgentSetupError, match="needs a credential: set OPENAI_API_KEY"):
        keyless.preflight()


def test_mcp_servers_become_the_mcp_section_in_opencode_s_own_form() -> None:
    from agentrig.agents.mcp import McpHttpServer, McpStdioServer

    servers = {
        "files": McpStdioServer(command="python3", args=["-m", "srv"], env={"T": "v"}, startup_timeout=10, tool_timeout=60),
        "web": McpHttpServer(url="http://127.0.0.1:9/mcp", headers={"Authorization": "Bearer t"}),
    }
    text = opencode_file(model="gpt-5", base_url="http://x/v1", pricing=None, reasoning_effort=None, context=1, output=1,
                         mcp_servers=servers, mcp_cwd="/workspace").to_json()
    assert json.loads(text)["mcp"] == {
        "files": {"type": "local", "command": ["python3", "-m", "srv"], "cwd": "/workspace", "environment": {"T": "v"},
                  "timeout": 60000},
        "web": {"type": "remote", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer t"},
                "oauth": False, "timeout": 120000},
    }
    bare = opencode_file(model="gpt-5", base_url="http://x/v1", pricing=None, reasoning_effort=None, context=1, output=1)
    assert "mcp" not in json.loads(bare.to_json())


@pytest.mark.parametrize(
    ("server", "where"),
    [
        ({"command": "srv", "env": {"T": "{env:OPENAI_API_KEY}"}}, "mcp_servers.s.env.T"),
        ({"command": "srv", "args": ["--x", "{FILE:/etc/passwd}"]}, "mcp_servers.s.args[1]"),
        ({"url": "http://127.0.0.1:9/mcp", "headers": {"A": "${AGENTRIG_TEST_OC_SUBST}"}}, "mcp_servers.s.headers.A"),
    ],
)
def test_a_value_opencode_would_substitute_is_refused_in_one_line(
    server: dict[str, object], where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # OpenCode replaces {env:...} and {file:...} in its config's text: such a value (written, or read from
    # agentrig's environment) would hand the server another secret or a file
    monkeypatch.setenv("AGENTRIG_TEST_OC_SUBST", "Bearer {env:OPENAI_API_KEY}")
    agent = build_cli_agent(OpenCodeConfig(mcp_servers={"s": server}), model=ModelDefinition(provider="openai", name="gpt-5"),
                            credential=credential(), problem_name="p")
    with pytest.raises(AgentSetupError, match=rf"^opencode config: {re.escape(where)} contains '{{env:' or '{{file:'"):
        agent.preflight()


def test_an_unset_mcp_variable_is_a_setup_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTRIG_TEST_OC_UNSET", raising=False)
    config = OpenCodeConfig(mcp_servers={"s": {"command": "x", "env": {"T": "${AGENTRIG_TEST_OC_UNSET}"}}})
    agent = build_cli_agent(config, model=ModelDefinition(provider="openai", name="gpt-5"), credential=credential(),
                            problem_name="p")
    with pytest.raises(AgentSetupError, match=r"^opencode config: mcp_servers.s.env.T: environment variable "
                                              r"AGENTRIG_TEST_OC_UNSET is not set"):
        agent.preflight()


def test_agentrig_run_refuses_a_substituted_mcp_value_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentrig.cli import main

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    problem = tmp_path / "hello"
    problem.mkdir()
    (problem / "task.md").write_text("Say hi.\n")
    (problem / "problem.yaml").write_text("name: hello\ncheckpoints:\n  - name: one\n    prompt: task.md\n")
    status = main([
        "run", str(problem), "--agent", "opencode", "--model", "openai/gpt-5", "--output", str(tmp_path / "run"),
        "-c", "mcp_servers={files: {command: srv, env: {K: '{env:OPENAI_API_KEY}'}}}",
    ])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("agentrig: error:")]
    assert status != 0 and len(lines) == 1 and "Traceback" not in err, err
    assert "mcp_servers.files.env.K contains '{env:'" in lines[0] and SECRET not in err


def test_reset_forgets_the_session_and_the_last_run() -> None:
    from agentrig_opencode.agent import OpenCodeAgent, OpenCodeLaunch
    from agentrig_opencode.outcome import OpenCodeOutcome

    agent = build_cli_agent(OpenCodeConfig(), model=ModelDefinition(provider="openai", name="gpt-5"),
                            credential=credential(), problem_name="p")
    assert isinstance(agent, OpenCodeAgent) and type(agent.config) is OpenCodeConfig
    agent.session_id = "ses_kept"
    agent.outcome = OpenCodeOutcome(session_id="ses_kept")
    agent.launch = OpenCodeLaunch(argv=["opencode"], env_names=[], runtime="local", cwd="/w")
    agent.reset()
    assert agent.session_id is None and agent.outcome is None and agent.launch is None
