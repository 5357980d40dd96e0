"""``agentrig run --agent codex`` with ``--attempts`` and ``--resume``: the real CLI, the fake Responses API.

The scenarios are the test kit's (:mod:`agentrig.testing.cli_attempts`); what is Codex's own: its shell tool
(``exec_command`` taking ``cmd``), a request's ``input`` ending with a ``function_call_output`` after a tool,
its thread per attempt.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentrig.testing.cli_attempts import USAGE, GreeterCli, check_killed_then_resumed, check_two_attempts
from agentrig.testing.fake_server import FakeReply, FakeToolCall

pytestmark = pytest.mark.codex_cli

API_KEY = "sk-test-codex-attempts-0123456789"


def shell(command: str) -> FakeReply:
    """A reply calling the CLI's shell tool (``exec_command`` taking ``cmd``)."""
    return FakeReply(text="On it.", tool_calls=[FakeToolCall(name="exec_command", arguments={"cmd": command})], usage=USAGE)


def after_tool(request: Any) -> bool:
    """Whether the request's input ends with a tool's output."""
    items = request.body.get("input") or []
    return bool(items) and items[-1].get("type") == "function_call_output"


def codex(server: Any, codex_bin: str) -> GreeterCli:
    return GreeterCli(
        agent="codex", model="openai/gpt-5", binary=codex_bin, api_key=API_KEY,
        env={"OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": server.base_url}, drop_prefixes=("OPENAI_",),
        outcome_file="codex_outcome.json", session_key="thread_id", shell=shell, after_tool=after_tool,
        conversation=lambda request: json.dumps(request.body.get("input") or []),
        run_timeout=300, start_deadline=120, resume_timeout=240,
    )


def test_two_attempts_each_solve_the_greeter_in_their_own_workspace(
    request: pytest.FixtureRequest, fake_openai_server: Any, codex_bin: str, tmp_path: Path
) -> None:
    check_two_attempts(codex(fake_openai_server, codex_bin), fake_openai_server, Path(request.config.rootpath), tmp_path)


def test_killed_in_checkpoint_2_mid_tool_then_resumed_redoes_only_checkpoint_2(
    request: pytest.FixtureRequest, fake_openai_server: Any, codex_bin: str, tmp_path: Path
) -> None:
    cli = codex(fake_openai_server, codex_bin)
    check_killed_then_resumed(cli, fake_openai_server, Path(request.config.rootpath), tmp_path)
