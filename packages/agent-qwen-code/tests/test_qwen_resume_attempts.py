"""``agentrig run --agent qwen_code`` with ``--attempts`` and ``--resume``: the real CLI, the fake OpenAI API.

The scenarios are the test kit's (:mod:`agentrig.testing.cli_attempts`); what is Qwen Code's own: its shell tool
(``run_shell_command`` taking ``command``), a request's last message being a tool's after a tool, its session per
attempt, and Node.js 22 first on ``PATH`` (this host's is 20).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentrig.testing.cli_attempts import USAGE, GreeterCli, check_killed_then_resumed, check_two_attempts
from agentrig.testing.fake_server import FakeReply, FakeToolCall

pytestmark = pytest.mark.qwen_cli

API_KEY = "sk-test-qwen-attempts-0123456789"


def shell(command: str) -> FakeReply:
    """A reply calling the CLI's shell tool (``run_shell_command`` taking ``command``)."""
    return FakeReply(text="On it.", tool_calls=[FakeToolCall(name="run_shell_command", arguments={"command": command})], usage=USAGE)


def answers_a_tool(request: Any) -> bool:
    """Whether the request's last message is a tool's result (the model's turn after a tool)."""
    messages = request.body.get("messages") or []
    return bool(messages) and messages[-1].get("role") == "tool"


def qwen(server: Any, qwen_bin: str, path: str) -> GreeterCli:
    return GreeterCli(
        agent="qwen_code", model="openai/gpt-5", binary=qwen_bin, api_key=API_KEY,
        env={"OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": server.base_url, "PATH": path}, drop_prefixes=("OPENAI_",),
        outcome_file="qwen_outcome.json", session_key="session_id", shell=shell, after_tool=answers_a_tool,
        conversation=lambda request: json.dumps(request.body.get("messages") or []),
    )


def test_two_attempts_each_solve_the_greeter_in_their_own_session(
    request: pytest.FixtureRequest, fake_openai_server: Any, qwen_bin: str, node_22_first_on_path: str, tmp_path: Path
) -> None:
    cli = qwen(fake_openai_server, qwen_bin, node_22_first_on_path)
    check_two_attempts(cli, fake_openai_server, Path(request.config.rootpath), tmp_path)


def test_killed_in_checkpoint_2_mid_tool_then_resumed_redoes_only_checkpoint_2(
    request: pytest.FixtureRequest, fake_openai_server: Any, qwen_bin: str, node_22_first_on_path: str, tmp_path: Path
) -> None:
    cli = qwen(fake_openai_server, qwen_bin, node_22_first_on_path)
    check_killed_then_resumed(cli, fake_openai_server, Path(request.config.rootpath), tmp_path)
