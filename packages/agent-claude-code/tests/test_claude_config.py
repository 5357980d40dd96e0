"""The claude_code config, command line, environment and Docker template (no CLI needed)."""

from __future__ import annotations

import pytest
from pydantic import SecretStr, ValidationError

from agentrig import AgentContext, ModelDefinition, ProviderCredential, ThinkingPreset
from agentrig.runtime.images import render_template
from agentrig_claude_code.agent import _thinking_budget
from agentrig_claude_code.command import QUIET_ENV, build_argv, build_env
from agentrig_claude_code.config import DEFAULT_CLI_VERSION, ClaudeCodeConfig

SECRET = "sk-ant-config-test-secret"


def cred(env_var: str = "ANTHROPIC_API_KEY") -> ProviderCredential:
    return ProviderCredential(provider="anthropic", value=SecretStr(SECRET), source="test", env_var=env_var)


def test_defaults_pin_the_cli_and_its_image() -> None:
    config = ClaudeCodeConfig()
    assert config.version == DEFAULT_CLI_VERSION == "2.1.330"
    assert config.permission_mode == "bypassPermissions" and config.include_partial_messages


def test_docker_template_installs_exactly_the_configured_version() -> None:
    config = ClaudeCodeConfig(version="2.1.330")
    assert config.docker_template is not None
    dockerfile = render_template(config.docker_template, base_image="node:22-slim", version=config.version or "")
    assert dockerfile.splitlines()[0] == "FROM node:22-slim"
    assert "npm install --global --no-audit --no-fund @anthropic-ai/claude-code@2.1.330 " in dockerfile
    assert "{{" not in dockerfile
    other = render_template(config.docker_template, base_image="node:22-slim", version="2.0.1")
    assert "@anthropic-ai/claude-code@2.0.1 " in other and "2.1.330" not in other


def test_argv_has_no_shell_no_task_no_secret() -> None:
    config = ClaudeCodeConfig(
        append_system_prompt="Be brief; $(rm -rf /)",
        allowed_tools=["Bash(git:*)", "Edit"],
        disallowed_tools=["WebFetch"],
        permission_mode="acceptEdits",
        extra_args=["--fallback-model", "claude-haiku-4-5"],
    )
    argv = build_argv(config, binary="/opt/claude", model="claude-sonnet-4-5", max_turns=7, resume="sess-1")
    assert argv[:5] == ["/opt/claude", "--print", "--output-format", "stream-json", "--verbose"]
    pairs = {argv[i]: argv[i + 1] for i in range(len(argv) - 1) if argv[i].startswith("--")}
    assert pairs["--model"] == "claude-sonnet-4-5" and pairs["--max-turns"] == "7"
    assert pairs["--permission-mode"] == "acceptEdits" and pairs["--resume"] == "sess-1"
    assert pairs["--append-system-prompt"] == "Be brief; $(rm -rf /)"  # one argument, never a shell
    assert pairs["--allowedTools"] == "Bash(git:*),Edit" and pairs["--disallowedTools"] == "WebFetch"
    assert "--include-partial-messages" in argv and argv[-2:] == ["--fallback-model", "claude-haiku-4-5"]
    plain = build_argv(ClaudeCodeConfig(include_partial_messages=False), binary="claude", model="m")
    assert "--max-turns" not in plain and "--resume" not in plain and "--include-partial-messages" not in plain


def test_env_carries_the_secret_isolation_and_quiet() -> None:
    env = build_env(
        ClaudeCodeConfig(env={"CLAUDE_CODE_MAX_RETRIES": "2"}),
        credential=cred(),
        base_url="http://127.0.0.1:9",
        home="/home/agentrig",
        config_dir="/home/agentrig/.claude",
        as_root=True,
        max_thinking_tokens=8192,
    )
    assert env["ANTHROPIC_API_KEY"] == SECRET and env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    assert env["HOME"] == "/home/agentrig" and env["CLAUDE_CONFIG_DIR"] == "/home/agentrig/.claude"
    assert env["IS_SANDBOX"] == "1" and env["MAX_THINKING_TOKENS"] == "8192"
    assert QUIET_ENV.items() <= env.items() and env["CLAUDE_CODE_MAX_RETRIES"] == "2"
    user = build_env(ClaudeCodeConfig(), credential=cred("ANTHROPIC_AUTH_TOKEN"), base_url=None, home=None,
                     config_dir="/c", as_root=False, max_thinking_tokens=None)
    assert user["ANTHROPIC_AUTH_TOKEN"] == SECRET and "ANTHROPIC_API_KEY" not in user
    assert "IS_SANDBOX" not in user and "MAX_THINKING_TOKENS" not in user and "ANTHROPIC_BASE_URL" not in user
    other = build_env(ClaudeCodeConfig(), credential=cred("API_KEY"), base_url=None, home=None,
                      config_dir="/c", as_root=False, max_thinking_tokens=None)
    assert other["ANTHROPIC_API_KEY"] == SECRET


@pytest.mark.parametrize(
    ("fields", "needle"),
    [
        ({"env": {"ANTHROPIC_API_KEY": "x"}}, "env may not set ANTHROPIC_API_KEY"),
        ({"extra_args": ["--resume=abc"]}, "extra_args may not contain '--resume'"),
        ({"extra_args": ["--model", "x"]}, "extra_args may not contain '--model'"),
        ({"allowed_tools": ["--evil"]}, "may not start with '-'"),
        ({"permission_mode": "yolo"}, "permission_mode"),
        ({"timeout": 0}, "timeout"),
        ({"unknown_field": 1}, "unknown_field"),
        ({"version": None}, "has a docker_template but no 'version'"),
    ],
)
def test_bad_config_names_the_field(fields: dict, needle: str) -> None:
    with pytest.raises(ValidationError) as info:
        ClaudeCodeConfig(**fields)
    assert needle in str(info.value)


def test_thinking_budget() -> None:
    plain = ModelDefinition(provider="anthropic", name="m")
    thinker = ModelDefinition(provider="anthropic", name="m", supports_thinking=True, default_thinking=ThinkingPreset.MEDIUM)
    assert _thinking_budget(plain, None, None) is None
    assert _thinking_budget(plain, ThinkingPreset.HIGH, None) == 32768
    assert _thinking_budget(plain, ThinkingPreset.NONE, None) == 0
    assert _thinking_budget(thinker, None, None) == 8192
    assert _thinking_budget(thinker, ThinkingPreset.LOW, 1234) == 1234


def test_setup_refuses_a_model_it_cannot_speak_to(session: object) -> None:
    from agentrig import Agent, AgentSetupError

    openai = ModelDefinition(provider="openai", name="gpt-x")
    agent = Agent.from_config(ClaudeCodeConfig(), AgentContext(model=openai, credential=cred(), problem_name="p"))
    with pytest.raises(AgentSetupError, match="speaks the Anthropic Messages API"):
        agent.setup(session)
    anthropic = ModelDefinition(provider="anthropic", name="m")
    no_key = Agent.from_config(ClaudeCodeConfig(), AgentContext(model=anthropic, problem_name="p"))
    with pytest.raises(AgentSetupError, match="set ANTHROPIC_API_KEY"):
        no_key.setup(session)
    no_key.cleanup()
    typo_config = ClaudeCodeConfig(stream_parser="claude-stream-jsn")
    typo = Agent.from_config(typo_config, AgentContext(model=anthropic, credential=cred(), problem_name="p"))
    with pytest.raises(AgentSetupError) as info:  # the parser is looked up before the CLI starts
        typo.setup(session)
    assert str(info.value).startswith("claude_code config: stream_parser: unknown stream parser 'claude-stream-jsn' (installed: ")
    assert str(info.value).endswith("; did you mean 'claude-stream-json'?")
    typo.cleanup()


def test_plugin_module_is_cheap_and_declares_the_agent() -> None:
    import subprocess
    import sys

    code = (
        "import sys, agentrig_claude_code.plugin as p; "
        "heavy=[m for m in ('anthropic','openai','docker','httpx','agentrig_claude_code.agent',"
        "'agentrig_claude_code.stream_json') if m in sys.modules]; "
        "print(heavy, [s.name for s in p.agentrig_agents()], [s.name for s in p.agentrig_stream_parsers()])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[] ['claude_code'] ['claude-stream-json']"
