"""The qwen_code agent's config, command line, environment and settings file; bad input refused with one clear line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from agentrig import Agent, AgentContext, AgentSetupError, ModelDefinition, ProviderCredential
from agentrig_qwen_code.command import QwenSettings, build_argv, build_env
from agentrig_qwen_code.config import QwenCodeConfig

REPO = Path(__file__).resolve().parents[3]
KEY = "sk-qwen-config-test-secret"


def _credential() -> ProviderCredential:
    return ProviderCredential(provider="openai", value=SecretStr(KEY), source="test", env_var="OPENAI_API_KEY")


def test_argv_streams_json_reads_the_task_from_stdin_and_carries_no_secret() -> None:
    argv = build_argv(QwenCodeConfig(extra_args=["--debug"]), binary="qwen", model="gpt-5")
    assert argv == ["qwen", "--output-format", "stream-json", "--model", "gpt-5", "--approval-mode", "yolo", "--debug"]
    assert "--prompt" not in argv and "-p" not in argv  # the task is on standard input
    resumed = build_argv(QwenCodeConfig(approval_mode="auto-edit"), binary="qwen", model="m", resume="s-1")
    assert resumed[-2:] == ["--resume", "s-1"] and resumed[resumed.index("--approval-mode") + 1] == "auto-edit"


def test_env_holds_the_key_the_endpoint_and_the_isolated_state() -> None:
    env = build_env(QwenCodeConfig(env={"TZ": "UTC"}), credential=_credential(), base_url="http://127.0.0.1:9",
                    qwen_home="/h/.qwen", home="/h")
    assert env == {
        "TZ": "UTC", "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": "http://127.0.0.1:9", "QWEN_HOME": "/h/.qwen",
        "QWEN_CODE_NO_RELAUNCH": "true", "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1", "HOME": "/h",
    }


def test_settings_turn_off_everything_but_the_model_endpoint() -> None:
    settings = json.loads(QwenSettings.build().to_json())
    assert settings == {
        "$version": 4,  # the CLI's current format: it does not migrate and rewrite the file (0644)
        "security": {"auth": {"selectedType": "openai"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"enableAutoUpdate": False, "preventSystemSleep": False, "terminalBell": False,
                    "gitCoAuthor": {"commit": False, "pr": False}},
        "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False},
        "experimental": {"emitToolUseSummaries": False},
        "tools": {"useBuiltinRipgrep": False},
    }


def test_mcp_servers_become_the_settings_mcp_servers_in_the_clis_keys() -> None:
    from agentrig.agents.mcp import McpHttpServer, McpStdioServer

    servers = {
        "local": McpStdioServer(command="python3", args=["-m", "srv"], env={"TOKEN": "t-1"}, tool_timeout=30),
        "remote": McpHttpServer(url="http://127.0.0.1:8000/mcp", headers={"Authorization": "Bearer x"}),
    }
    settings = json.loads(QwenSettings.build(mcp_servers=servers, mcp_cwd="/workspace").to_json())
    assert settings["mcpServers"] == {
        "local": {"command": "python3", "args": ["-m", "srv"], "env": {"TOKEN": "t-1"}, "cwd": "/workspace",
                  "timeout": 30000, "trust": True},
        "remote": {"httpUrl": "http://127.0.0.1:8000/mcp", "headers": {"Authorization": "Bearer x"},
                   "timeout": 120000, "trust": True},
    }


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"env": {"OPENAI_API_KEY": "x"}}, "env may not set OPENAI_API_KEY"),
        ({"env": {"OPENAI_BASE_URL": "http://x"}}, "env may not set OPENAI_BASE_URL"),
        ({"env": {"QWEN_HOME": "/x"}}, "env may not set QWEN_HOME"),
        ({"extra_args": ["--output-format=json"]}, "extra_args may not contain '--output-format'"),
        ({"extra_args": ["--openai-api-key", "x"]}, "extra_args may not contain '--openai-api-key'"),
        ({"extra_args": ["--yolo"]}, "extra_args may not contain '--yolo'"),
        ({"approval_mode": "always"}, "approval_mode"),
    ],
)
def test_bad_fields_are_refused(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        QwenCodeConfig(**fields)


@pytest.mark.parametrize(
    ("model", "credential", "message"),
    [
        (ModelDefinition(provider="replay", name="/r.jsonl"), True, "cannot use a replay model"),
        (ModelDefinition(provider="anthropic", name="claude-sonnet-4-5"), True,
         "model provider 'anthropic' names no endpoint: use an openai/... model, or set 'base_url'"),
        (ModelDefinition(provider="openai", name="gpt-5"), False, "needs a credential for provider 'openai': set OPENAI_API_KEY"),
    ],
)
def test_preflight_refuses_what_cannot_work_in_one_line(
    model: ModelDefinition, credential: bool, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    agent = Agent.from_config(QwenCodeConfig(), AgentContext(model=model, credential=_credential() if credential else None))
    with pytest.raises(AgentSetupError, match=message) as info:
        agent.preflight()
    assert "\n" not in str(info.value)


def test_the_endpoint_comes_from_the_config_the_environment_the_model_or_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    openai = ModelDefinition(provider="openai", name="gpt-5")
    agent = Agent.from_config(QwenCodeConfig(), AgentContext(model=openai, credential=_credential()))
    assert agent._base_url() == "https://api.openai.com/v1"
    proxy = ModelDefinition(provider="proxy", name="qwen3-coder", base_url="http://127.0.0.1:7/v1")
    assert Agent.from_config(QwenCodeConfig(), AgentContext(model=proxy, credential=_credential()))._base_url() == \
        "http://127.0.0.1:7/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert Agent.from_config(QwenCodeConfig(), AgentContext(model=proxy, credential=_credential()))._base_url() == \
        "http://127.0.0.1:9/v1"
    configured = QwenCodeConfig(base_url="http://127.0.0.1:8/v1")
    assert Agent.from_config(configured, AgentContext(model=proxy, credential=_credential()))._base_url() == \
        "http://127.0.0.1:8/v1"


def test_run_without_a_key_is_one_clear_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENTRIG_"))}
    agentrig = str(Path(sys.executable).with_name("agentrig"))
    result = subprocess.run(
        [agentrig, "run", str(REPO / "examples" / "greeter"), "--agent", "qwen_code", "--model", "openai/gpt-5",
         "--output", str(tmp_path / "run")],
        env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "OPENAI_API_KEY" in result.stderr, result.stderr


def test_a_reserved_env_override_on_the_command_line_is_one_clear_line(tmp_path: Path) -> None:
    agentrig = str(Path(sys.executable).with_name("agentrig"))
    result = subprocess.run(
        [agentrig, "run", str(REPO / "examples" / "greeter"), "--agent", "qwen_code", "--model", "openai/gpt-5",
         "-c", "env.QWEN_HOME=/tmp/x", "--output", str(tmp_path / "run")],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "QWEN_HOME" in result.stderr


def test_an_unset_mcp_secret_variable_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    config = QwenCodeConfig(mcp_servers={"probe": {"command": "srv", "env": {"K": "${NOT_SET_ANYWHERE}"}}})
    model = ModelDefinition(provider="openai", name="gpt-5")
    agent = Agent.from_config(config, AgentContext(model=model, credential=_credential()))
    with pytest.raises(AgentSetupError, match=r"mcp_servers\.probe\.env\.K: environment variable NOT_SET_ANYWHERE is not set"):
        agent.preflight()
