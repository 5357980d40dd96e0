"""The opencode agent's config, the config file it writes for the CLI, its command line and environment."""

from __future__ import annotations

import json
import re

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
