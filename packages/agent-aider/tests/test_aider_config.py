"""The aider agent's config, command line, chat files and event parser; bad input refused with one clear line.
None of these needs aider installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from agentrig import ProviderCredential
from agentrig.runtime.interface import RuntimeEvent, RuntimeResult
from agentrig.trajectory import AgentTextStep, ErrorStep, LLMCall, ToolUseStep, UserStep
from agentrig.usage import TokenUsage, UsageTracker
from agentrig_aider.command import StateFiles, build_argv, build_env, workspace_chat_files
from agentrig_aider.config import AiderConfig
from agentrig_aider.events import AiderEventsParser

REPO = Path(__file__).resolve().parents[3]


def test_argv_is_non_interactive_and_carries_neither_task_nor_secret() -> None:
    files = StateFiles("/h/.agentrig-aider/")
    argv = build_argv(AiderConfig(), binary="aider", model="gpt-4.1", files=files, chat_files=["-x.py", "a b.txt"],
                      restore_history=False)
    assert argv[:2] == ["sh", "-c"] and argv[3:6] == ["agentrig-aider", "aider", "/h/.agentrig-aider/launcher.py"]
    for flag in ("--yes-always", "--no-git", "--no-auto-commits", "--no-dirty-commits", "--no-analytics",
                 "--no-check-update", "--no-detect-urls", "--no-stream", "--no-restore-chat-history", "--auto-lint"):
        assert flag in argv, flag
    assert argv[argv.index("--message-file") + 1] == "/h/.agentrig-aider/message.md"
    assert argv[argv.index("--model") + 1] == argv[argv.index("--weak-model") + 1] == "openai/gpt-4.1"
    assert argv[argv.index("--map-tokens") + 1] == "0"
    assert argv[-2:] == ["--file=-x.py", "--file=a b.txt"]  # a name starting with '-' is no flag
    with_git = build_argv(AiderConfig(git=True, auto_lint=False, test_cmd="pytest -q", edit_format="whole"), binary="/v/bin/aider",
                          model="m", files=files, chat_files=[], restore_history=True)
    assert "--no-git" not in with_git and "--map-tokens" not in with_git and "--no-auto-commits" in with_git
    assert "--restore-chat-history" in with_git and "--no-auto-lint" in with_git
    assert with_git[with_git.index("--test-cmd") + 1] == "pytest -q" and "--auto-test" in with_git
    assert with_git[with_git.index("--edit-format") + 1] == "whole"
    credential = ProviderCredential(provider="openai", value=SecretStr("sk-x"), source="test", env_var="OPENAI_API_KEY")
    env = build_env(credential=credential, base_url="http://127.0.0.1:9/v1", home="/h/.agentrig-aider", extra={"A": "1"})
    assert env == {"A": "1", "OPENAI_API_KEY": "sk-x", "OPENAI_API_BASE": "http://127.0.0.1:9/v1",
                   "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "HOME": "/h/.agentrig-aider", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    assert not any("sk-x" in arg for arg in argv + with_git)


def test_the_launcher_resolver_finds_the_python_beside_a_linked_aider(tmp_path: Path) -> None:
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "aider").write_text("#!/bin/sh\n")
    (venv / "python").symlink_to(sys.executable)
    (tmp_path / "aider-link").symlink_to(venv / "aider")
    launcher = tmp_path / "launcher.py"
    launcher.write_text("import sys; print(sys.argv[1:])\n")
    argv = build_argv(AiderConfig(), binary=str(tmp_path / "aider-link"), model="m", files=StateFiles(str(tmp_path)),
                      chat_files=[], restore_history=False)
    done = subprocess.run([*argv[:6], "--x"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stdout.strip() == "['--x']", done.stderr
    (venv / "python").unlink()
    missing = subprocess.run(argv[:6], capture_output=True, text=True, timeout=30)
    assert missing.returncode == 127 and "'binary' must be the aider of a virtual environment" in missing.stderr
    nowhere = subprocess.run(["/bin/sh", *argv[1:4], "no-such-aider-here", str(launcher)], capture_output=True, text=True, timeout=30,
                             env={**os.environ, "PATH": str(tmp_path)})
    assert nowhere.returncode == 127 and "'no-such-aider-here' is not on PATH" in nowhere.stderr


def test_chat_files_are_the_workspace_text_files(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    (tmp_path / "-rf").write_text("a name like a flag\n")
    (tmp_path / "README.md").write_text("hi\n")
    (tmp_path / ".env").write_text("OPENAI_API_BASE=http://elsewhere\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    (tmp_path / "blob.bin").write_bytes(b"\0\1\2")
    (tmp_path / "big.txt").write_text("x" * 2000)
    (tmp_path / "link.py").symlink_to(tmp_path / "README.md")
    assert workspace_chat_files(tmp_path, limit=10, max_bytes=1000) == ["-rf", "README.md", "src/a.py"]
    assert workspace_chat_files(tmp_path, limit=2, max_bytes=1000) == ["-rf", "README.md"]
    # "-rf" (19 bytes) fits, README.md (3) too, src/a.py (6) would pass 25 bytes: left out
    assert workspace_chat_files(tmp_path, limit=10, max_bytes=1000, total_bytes=25) == ["-rf", "README.md"]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"env": {"OPENAI_API_KEY": "x"}}, "env may not set OPENAI_API_KEY"),
        ({"env": {"HOME": "/x"}}, "env may not set HOME"),
        ({"extra_args": ["--model=o3"]}, "extra_args may not contain '--model'"),
        ({"extra_args": ["--git"]}, "extra_args may not contain '--git'"),
        ({"extra_args": ["--stream"]}, "extra_args may not contain '--stream'"),
        ({"extra_args": ["--env-file", "/x"]}, "extra_args may not contain '--env-file'"),
        ({"edit_format": "magic"}, "edit_format"),
        ({"chat_files": "some"}, "chat_files"),
        ({"mcp_servers": {"fs": {"command": "mcp-fs"}}}, "aider has no MCP support: remove mcp_servers"),
    ],
)
def test_bad_fields_are_refused(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        AiderConfig(**fields)


def test_an_mcp_config_is_refused_in_one_line(tmp_path: Path) -> None:
    agent_file = tmp_path / "aider.yaml"
    agent_file.write_text("type: aider\nmcp_servers:\n  fs:\n    command: mcp-fs\n")
    agentrig = str(Path(sys.executable).with_name("agentrig"))
    done = subprocess.run([agentrig, "run", str(REPO / "examples" / "greeter"), "--agent", str(agent_file), "--model",
                           "openai/gpt-4.1", "--output", str(tmp_path / "out")], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "OPENAI_API_KEY": "sk-unused"})
    assert done.returncode == 2, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and "aider has no MCP support" in errors[0], done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "out").exists()


def _events(*events: dict[str, object]) -> RuntimeEvent:
    return RuntimeEvent(kind="stdout", text="".join(json.dumps(e) + "\n" for e in events))


def test_events_become_priced_steps_with_the_endpoints_usage() -> None:
    from agentrig.pricing import APIPricing

    usage = UsageTracker()
    parser = AiderEventsParser(pricing=APIPricing(input=2.0, output=8.0, cache_read=0.5), model="gpt-4.1", usage=usage)
    call = {"type": "model_call", "tag": "act", "id": "chatcmpl-1", "finish_reason": "stop", "content": "Edit.\n",
            "usage": {"prompt_tokens": 300, "completion_tokens": 40,
                      "prompt_tokens_details": {"cached_tokens": 100, "cache_write_tokens": 0},
                      "completion_tokens_details": {"reasoning_tokens": 5}}}
    parser.consume(_events({"type": "start", "aider_version": "0.86.2"}, call,
                           {"type": "edits", "files": ["a.txt"], "error": "SEARCH failed"},
                           {"type": "reflection", "message": "# 1 SEARCH/REPLACE block failed"}))
    parser.consume(_events({"type": "model_error", "error": "AuthenticationError", "message": "bad key"}))
    parser.consume(RuntimeEvent(kind="finished", result=RuntimeResult(exit_code=0)))
    steps = list(parser.drain_steps()) + list(parser.finish())
    kinds = [type(s) for s in steps]
    assert kinds == [LLMCall, AgentTextStep, ToolUseStep, UserStep, ErrorStep]
    llm = steps[0]
    assert isinstance(llm, LLMCall)
    assert llm.usage == TokenUsage(input=200, output=40, cache_read=100, reasoning=5)
    assert llm.cost == pytest.approx(200 * 2e-6 + 40 * 8e-6 + 100 * 0.5e-6) and llm.request_id == "chatcmpl-1"
    edit = steps[2]
    assert isinstance(edit, ToolUseStep) and edit.is_error and edit.arguments == {"files": ["a.txt"]}
    outcome = parser.outcome
    assert outcome.started and outcome.aider_version == "0.86.2" and outcome.model_calls == 1
    assert outcome.cli_usage == outcome.live_usage == llm.usage and usage.steps == 1 and usage.cost == llm.cost
    assert outcome.last_call_failed and outcome.model_errors == ["AuthenticationError: bad key"]
    assert outcome.reflections == 1 and outcome.exit_code == 0


def test_preflight_refuses_a_model_without_an_openai_endpoint_or_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentrig import Agent, AgentContext
    from agentrig.errors import AgentSetupError
    from agentrig.model_definition import ModelDefinition

    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    credential = ProviderCredential(provider="openai", value=SecretStr("sk-x"), source="test", env_var="OPENAI_API_KEY")
    elsewhere = AgentContext(model=ModelDefinition(provider="anthropic", name="claude-x"), credential=credential, problem_name="p")
    with pytest.raises(AgentSetupError, match="the aider agent speaks the OpenAI chat-completions API; model provider 'anthropic'"):
        Agent.from_config(AiderConfig(), elsewhere).preflight()
    keyless = AgentContext(model=ModelDefinition(provider="openai", name="gpt-4.1"), credential=None, problem_name="p")
    with pytest.raises(AgentSetupError, match="the aider agent needs a credential: set OPENAI_API_KEY"):
        Agent.from_config(AiderConfig(), keyless).preflight()
