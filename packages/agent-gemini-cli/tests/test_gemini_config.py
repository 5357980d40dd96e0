"""The gemini_cli agent's config, command line, environment and settings file; bad input refused with one clear line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from agentrig import Agent, AgentContext, AgentSetupError, ModelDefinition, ProviderCredential
from agentrig.model_definition import ThinkingPreset
from agentrig_gemini_cli.command import GeminiSettings, build_argv, build_env, thinking_config
from agentrig_gemini_cli.config import GeminiCliConfig

REPO = Path(__file__).resolve().parents[3]
KEY = "AIza-config-test-secret"


def _credential() -> ProviderCredential:
    return ProviderCredential(provider="gemini", value=SecretStr(KEY), source="test", env_var="GEMINI_API_KEY")


def test_argv_streams_json_reads_the_task_from_stdin_and_carries_no_secret() -> None:
    argv = build_argv(GeminiCliConfig(extra_args=["--debug"]), binary="gemini", model="gemini-2.5-pro")
    assert argv == ["gemini", "--output-format", "stream-json", "--model", "gemini-2.5-pro", "--skip-trust",
                    "--approval-mode", "yolo", "--debug"]
    assert "--prompt" not in argv and "-p" not in argv  # the task is on standard input
    resumed = build_argv(GeminiCliConfig(approval_mode="auto_edit"), binary="gemini", model="m", resume="s-1")
    assert resumed[-2:] == ["--resume", "s-1"] and resumed[resumed.index("--approval-mode") + 1] == "auto_edit"


def test_env_holds_the_key_the_endpoint_and_the_isolated_state() -> None:
    config = GeminiCliConfig(env={"TZ": "UTC"})
    env = build_env(config, credential=_credential(), base_url="http://127.0.0.1:9", cli_home="/h/.gemini-cli", home="/h")
    assert env == {
        "TZ": "UTC", "GEMINI_API_KEY": KEY, "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9",
        "GEMINI_CLI_HOME": "/h/.gemini-cli", "GEMINI_CLI_NO_RELAUNCH": "true", "HOME": "/h",
    }
    # Google's own endpoint: no base URL variable at all
    assert "GOOGLE_GEMINI_BASE_URL" not in build_env(config, credential=None, base_url=None, cli_home="/c", home=None)


def test_settings_turn_off_everything_but_the_model_endpoint() -> None:
    settings = json.loads(GeminiSettings.build(model="gemini-2.5-pro", thinking=None, max_attempts=None).to_json())
    assert settings == {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    }
    tuned = json.loads(GeminiSettings.build(model="m", thinking={"thinkingBudget": 0}, max_attempts=1).to_json())
    assert tuned["general"]["maxAttempts"] == 1
    assert tuned["modelConfigs"] == {"overrides": [
        {"match": {"model": "m"}, "modelConfig": {"generateContentConfig": {"thinkingConfig": {"thinkingBudget": 0}}}}
    ]}


@pytest.mark.parametrize(
    ("model", "budget", "level", "preset", "expected"),
    [
        ("gemini-2.5-pro", None, None, None, None),
        ("gemini-2.5-pro", None, None, ThinkingPreset.HIGH, {"thinkingBudget": 32768}),
        ("gemini-2.5-flash", None, None, ThinkingPreset.NONE, {"thinkingBudget": 0}),
        ("gemini-3-pro-preview", None, None, ThinkingPreset.LOW, {"thinkingLevel": "LOW"}),
        ("gemini-2.5-pro", 512, None, ThinkingPreset.HIGH, {"thinkingBudget": 512}),
        ("gemini-3-pro-preview", None, "HIGH", ThinkingPreset.LOW, {"thinkingLevel": "HIGH"}),
    ],
)
def test_thinking_maps_to_the_clis_thinking_config(
    model: str, budget: int | None, level: str | None, preset: ThinkingPreset | None, expected: dict[str, object] | None
) -> None:
    assert thinking_config(model, budget=budget, level=level, preset=preset) == expected


def test_the_agent_writes_the_preset_into_its_settings() -> None:
    model = ModelDefinition(provider="gemini", name="gemini-2.5-flash")
    agent = Agent.from_config(GeminiCliConfig(), AgentContext(model=model, thinking_preset=ThinkingPreset.MEDIUM))
    assert agent.thinking == {"thinkingBudget": 8192}
    assert agent.settings.modelConfigs is not None


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"env": {"GEMINI_API_KEY": "x"}}, "env may not set GEMINI_API_KEY"),
        ({"env": {"GOOGLE_GEMINI_BASE_URL": "http://x"}}, "env may not set GOOGLE_GEMINI_BASE_URL"),
        ({"env": {"GEMINI_CLI_HOME": "/x"}}, "env may not set GEMINI_CLI_HOME"),
        ({"extra_args": ["--output-format=json"]}, "extra_args may not contain '--output-format'"),
        ({"extra_args": ["-m", "x"]}, "extra_args may not contain '-m'"),
        ({"extra_args": ["--yolo"]}, "extra_args may not contain '--yolo'"),
        ({"approval_mode": "always"}, "approval_mode"),
        ({"thinking_level": "EXTREME"}, "thinking_level"),
        ({"thinking_budget": -2}, "thinking_budget"),
        ({"max_attempts": 11}, "max_attempts"),
    ],
)
def test_bad_fields_are_refused(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        GeminiCliConfig(**fields)


@pytest.mark.parametrize(
    ("model", "credential", "base_url", "message"),
    [
        (ModelDefinition(provider="replay", name="/r.jsonl"), True, None, "cannot use a replay model"),
        (ModelDefinition(provider="openai", name="gpt-5"), True, None, "model provider 'openai' is not Google's"),
        (ModelDefinition(provider="gemini", name="gemini-2.5-pro"), False, None, "needs a credential: set GEMINI_API_KEY"),
    ],
)
def test_preflight_refuses_what_cannot_work_in_one_line(
    model: ModelDefinition, credential: bool, base_url: str | None, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GOOGLE_GEMINI_BASE_URL", raising=False)
    context = AgentContext(model=model, credential=_credential() if credential else None)
    agent = Agent.from_config(GeminiCliConfig(base_url=base_url), context)
    with pytest.raises(AgentSetupError, match=message) as info:
        agent.preflight()
    assert "\n" not in str(info.value)


def test_a_server_speaking_the_gemini_api_may_serve_any_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9")
    model = ModelDefinition(provider="proxy", name="gemini-2.5-pro")
    agent = Agent.from_config(GeminiCliConfig(), AgentContext(model=model, credential=_credential()))
    agent.preflight()
    assert agent._base_url() == "http://127.0.0.1:9"
    # the config's base_url beats the environment's
    agent = Agent.from_config(GeminiCliConfig(base_url="http://127.0.0.1:8"), AgentContext(model=model, credential=_credential()))
    assert agent._base_url() == "http://127.0.0.1:8"


def test_run_without_a_key_is_one_clear_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI_", "GOOGLE_", "AGENTRIG_"))}
    agentrig = str(Path(sys.executable).with_name("agentrig"))
    result = subprocess.run(
        [agentrig, "run", str(REPO / "examples" / "greeter"), "--agent", "gemini_cli", "--model", "gemini/gemini-2.5-pro",
         "--output", str(tmp_path / "run")],
        env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "GEMINI_API_KEY" in result.stderr, result.stderr


def test_a_reserved_env_override_on_the_command_line_is_one_clear_line(tmp_path: Path) -> None:
    agentrig = str(Path(sys.executable).with_name("agentrig"))
    result = subprocess.run(
        [agentrig, "run", str(REPO / "examples" / "greeter"), "--agent", "gemini_cli", "--model", "gemini/gemini-2.5-pro",
         "-c", "env.GEMINI_CLI_HOME=/tmp/x", "--output", str(tmp_path / "run")],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "GEMINI_CLI_HOME" in result.stderr


def test_mcp_servers_become_the_settings_mcp_servers_in_the_clis_keys() -> None:
    from agentrig.agents.mcp import McpHttpServer, McpStdioServer

    servers = {
        "local": McpStdioServer(command="python3", args=["-m", "srv"], env={"TOKEN": "t-1"}, tool_timeout=30),
        "remote": McpHttpServer(url="http://127.0.0.1:8000/mcp", headers={"Authorization": "Bearer x"}),
    }
    settings = json.loads(GeminiSettings.build(model="m", thinking=None, max_attempts=None, mcp_servers=servers,
                                               mcp_cwd="/workspace").to_json())
    assert settings["mcpServers"] == {
        "local": {"command": "python3", "args": ["-m", "srv"], "env": {"TOKEN": "t-1"}, "cwd": "/workspace",
                  "timeout": 30000, "trust": True},
        "remote": {"httpUrl": "http://127.0.0.1:8000/mcp", "headers": {"Authorization": "Bearer x"},
                   "timeout": 120000, "trust": True},
    }
    assert "mcpServers" not in json.loads(GeminiSettings.build(model="m", thinking=None, max_attempts=None).to_json())


def test_an_unset_mcp_secret_variable_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    config = GeminiCliConfig(mcp_servers={"probe": {"command": "srv", "env": {"K": "${NOT_SET_ANYWHERE}"}}})
    model = ModelDefinition(provider="gemini", name="gemini-2.5-pro")
    agent = Agent.from_config(config, AgentContext(model=model, credential=_credential()))
    with pytest.raises(AgentSetupError, match=r"mcp_servers\.probe\.env\.K: environment variable NOT_SET_ANYWHERE is not set"):
        agent.preflight()
