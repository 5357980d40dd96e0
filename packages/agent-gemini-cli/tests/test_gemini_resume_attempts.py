"""``agentrig run --agent gemini_cli`` with ``--attempts`` and ``--resume``: the real CLI, the fake Gemini API.

The scenarios are the test kit's (:mod:`agentrig.testing.cli_attempts`); what is Gemini CLI's own: its shell
tool (``run_shell_command`` taking ``command``), a request's last content carrying a ``functionResponse``
after a tool, its session per attempt.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentrig.testing.cli_attempts import USAGE, GreeterCli, check_killed_then_resumed, check_two_attempts
from agentrig.testing.fake_server import FakeReply, FakeToolCall

pytestmark = pytest.mark.gemini_cli

API_KEY = "AIza-test-gemini-attempts-0123456789"


def shell(command: str) -> FakeReply:
    """A reply calling the CLI's shell tool (``run_shell_command`` taking ``command``)."""
    return FakeReply(text="On it.", tool_calls=[FakeToolCall(name="run_shell_command", arguments={"command": command})], usage=USAGE)


def answers_a_tool(request: Any) -> bool:
    """Whether the request's last content carries a tool's response (the model's turn after a tool)."""
    contents = request.body.get("contents") or []
    parts = contents[-1].get("parts") if contents else []
    return any("functionResponse" in part for part in parts or [])


def gemini(server: Any, gemini_bin: str) -> GreeterCli:
    return GreeterCli(
        agent="gemini_cli", model="gemini/gemini-2.5-pro", binary=gemini_bin, api_key=API_KEY,
        env={"GEMINI_API_KEY": API_KEY, "GOOGLE_GEMINI_BASE_URL": server.base_url}, drop_prefixes=("GEMINI_", "GOOGLE_"),
        outcome_file="gemini_outcome.json", session_key="session_id", shell=shell, after_tool=answers_a_tool,
        conversation=lambda request: json.dumps(request.body.get("contents") or []),
    )


def test_two_attempts_each_solve_the_greeter_in_their_own_session(
    request: pytest.FixtureRequest, fake_gemini_server: Any, gemini_bin: str, tmp_path: Path
) -> None:
    check_two_attempts(gemini(fake_gemini_server, gemini_bin), fake_gemini_server, Path(request.config.rootpath), tmp_path)


def test_killed_in_checkpoint_2_mid_tool_then_resumed_redoes_only_checkpoint_2(
    request: pytest.FixtureRequest, fake_gemini_server: Any, gemini_bin: str, tmp_path: Path
) -> None:
    cli = gemini(fake_gemini_server, gemini_bin)
    check_killed_then_resumed(cli, fake_gemini_server, Path(request.config.rootpath), tmp_path)
