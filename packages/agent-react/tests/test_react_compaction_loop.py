"""Compaction in the loop: triggered by the reported context size, a ``summary`` call, pairs kept together."""

from __future__ import annotations

import json

from agentrig.llm.interface import ChatMessage
from agentrig.testing.fake_server import FakeModelServer, FakeUsage
from agentrig.trajectory import LLMCall


def assert_pairs_intact(messages: list[ChatMessage]) -> None:
    pending: set[str] = set()
    for message in messages:
        if message.role == "tool":
            assert message.tool_call_id in pending, "a tool result without its call"
            pending.discard(message.tool_call_id)
        else:
            assert not pending, "a call without its result"
            pending = {call.id for call in message.tool_calls}
    assert not pending


def test_compaction_trigger_summary_and_pairs_kept(server: FakeModelServer, provider: str, make_agent) -> None:
    server.add_tool_call("bash", {"command": "echo alpha"}, usage=FakeUsage(input=100, output=10))
    server.add_tool_call("bash", {"command": "echo beta"}, usage=FakeUsage(input=200, output=10))
    server.add_tool_call("bash", {"command": "echo gamma"}, usage=FakeUsage(input=600, output=10))
    server.add_reply("The agent printed the first word.", usage=FakeUsage(input=50, output=10))
    server.add_tool_call("submit", {"answer": "done"}, usage=FakeUsage(input=150, output=10))
    agent = make_agent(context_window=1000, compaction_threshold=0.5)
    steps = []
    agent.add_step_listener(steps.append)
    result = agent.run_checkpoint("Print three words.")
    assert result.stop_reason == "submitted", result.error_message
    assert [s.tag for s in steps if isinstance(s, LLMCall)] == ["act", "act", "act", "summary", "act"]
    assert result.usage.steps == 4  # the summary call is paid for but is not an agent step
    assert result.usage.cost > 0

    requests = [r.body for r in server.model_requests]
    summary_request = json.dumps(requests[3])
    assert not requests[3].get("tools")
    assert "echo alpha" in summary_request and "echo gamma" not in summary_request
    after = json.dumps(requests[4])
    assert "The agent printed the first word." in after and "Print three words." in after
    assert "echo alpha" not in after and "echo beta" in after and "echo gamma" in after

    # The conversation now: system, the task with the summary, then whole turns.
    roles = [m.role for m in agent.messages]
    assert roles[:3] == ["system", "user", "assistant"]
    assert "[Earlier work on this task was compacted" in agent.messages[1].content
    assert_pairs_intact(agent.messages)


def test_no_compaction_below_the_threshold(server: FakeModelServer, provider: str, make_agent) -> None:
    server.add_tool_call("bash", {"command": "echo a"}, usage=FakeUsage(input=100, output=10))
    server.add_tool_call("submit", {}, usage=FakeUsage(input=120, output=10))
    agent = make_agent(context_window=1000, compaction_threshold=0.5)
    agent.run("Go.")
    assert len(server.model_requests) == 2 and agent.stop_reason == "submitted"


def test_context_length_error_compacts_and_retries(server: FakeModelServer, provider: str, make_agent) -> None:
    server.add_tool_call("bash", {"command": "echo one"})
    server.add_tool_call("bash", {"command": "echo two"})
    server.add_fault(400, message="prompt is too long: 300000 tokens > 200000 maximum")
    server.add_reply("Ran echo one.")
    server.add_tool_call("submit", {})
    agent = make_agent()
    steps = []
    agent.add_step_listener(steps.append)
    result = agent.run_checkpoint("Go.")
    assert result.stop_reason == "submitted", result.error_message
    assert [s.tag for s in steps if isinstance(s, LLMCall)] == ["act", "act", "summary", "act"]
