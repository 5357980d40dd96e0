"""``agentrig run --agent opencode`` with ``--attempts`` and ``--resume``: the real CLI, the fake OpenAI server.

The scenarios are the test kit's (:mod:`agentrig.testing.cli_attempts`); what is OpenCode's own: its ``bash``
tool, a request's last message of role ``tool`` after a tool, its session per attempt (an id, never none)
and the cost it reports, which agentrig records.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentrig.testing.cli_attempts import (
    USAGE,
    GreeterCli,
    check_killed_then_resumed,
    check_two_attempts,
    inference_usage,
)
from agentrig.testing.fake_server import FakeReply, FakeToolCall

pytestmark = pytest.mark.opencode_cli

API_KEY = "sk-test-opencode-attempts-0123456789"


def shell(command: str) -> FakeReply:
    """A reply calling OpenCode's shell tool (``bash`` taking ``command`` and ``description``)."""
    call = FakeToolCall(name="bash", arguments={"command": command, "description": "run it"})
    return FakeReply(text="On it.", tool_calls=[call], usage=USAGE)


def after_tool(request: Any) -> bool:
    """Whether the request's last message is a tool's result."""
    messages = request.body.get("messages") or []
    return bool(messages) and messages[-1].get("role") == "tool"


def opencode(server: Any, opencode_bin: str) -> GreeterCli:
    return GreeterCli(
        agent="opencode", model="openai/gpt-5", binary=opencode_bin, api_key=API_KEY,
        env={"OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": server.base_url}, drop_prefixes=("OPENAI_",),
        outcome_file="opencode_outcome.json", session_key="session_id", shell=shell, after_tool=after_tool,
        conversation=lambda request: json.dumps(request.body.get("messages") or []),
    )


def assert_cost_recorded(cli: GreeterCli, checkpoint_dir: Path) -> None:
    """The cost OpenCode reported for the checkpoint is the one agentrig recorded."""
    cost = inference_usage(checkpoint_dir)["cost"]
    assert cost == pytest.approx(cli.outcome(checkpoint_dir)["cli_cost"]) and cost > 0


def test_two_attempts_each_solve_the_greeter_in_their_own_workspace(
    request: pytest.FixtureRequest, fake_openai_server: Any, opencode_bin: str, tmp_path: Path
) -> None:
    cli = opencode(fake_openai_server, opencode_bin)
    out = check_two_attempts(cli, fake_openai_server, Path(request.config.rootpath), tmp_path)
    for attempt in (1, 2):
        for checkpoint in ("greet_function", "command_line"):
            assert_cost_recorded(cli, out / "greeter" / f"attempt_{attempt}" / checkpoint)
    sessions = {cli.outcome(out / "greeter" / f"attempt_{a}" / "greet_function")["session_id"] for a in (1, 2)}
    assert None not in sessions


def test_killed_in_checkpoint_2_mid_tool_then_resumed_redoes_only_checkpoint_2(
    request: pytest.FixtureRequest, fake_openai_server: Any, opencode_bin: str, tmp_path: Path
) -> None:
    cli = opencode(fake_openai_server, opencode_bin)
    out = check_killed_then_resumed(cli, fake_openai_server, Path(request.config.rootpath), tmp_path)
    cost = inference_usage(out / "greeter" / "command_line")["cost"]
    assert cost == pytest.approx(cli.outcome(out / "greeter" / "command_line")["cli_cost"])
