"""The ``opencode-run-json`` parser on recorded CLI output, and on what a newer CLI might write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentrig.agents.stream import create_stream_parser
from agentrig.pricing import APIPricing
from agentrig.runtime.interface import RuntimeEvent, RuntimeResult
from agentrig.trajectory import AgentTextStep, ErrorStep, LLMCall, ThinkingStep, ToolUseStep
from agentrig.usage import TokenUsage, UsageTracker
from agentrig_opencode.run_json import OpenCodeRunParser

STREAMS = Path(__file__).parent / "streams"
PRICES = APIPricing(input=1.25, output=10.0, cache_read=0.125)


def feed(parser: OpenCodeRunParser, text: str, exit_code: int = 0, piece: int = 37) -> list[object]:
    """``text`` as stdout in small pieces (lines cut anywhere), then the process's end."""
    steps: list[object] = []
    for start in range(0, len(text), piece):
        parser.consume(RuntimeEvent(kind="stdout", text=text[start : start + piece]))
        steps += parser.drain_steps()
    parser.consume(RuntimeEvent(kind="finished", result=RuntimeResult(exit_code=exit_code)))
    return [*steps, *parser.drain_steps(), *parser.finish()]


def test_recorded_tool_turn_gives_steps_and_usage_per_call_equal_to_the_cli() -> None:
    usage = UsageTracker()
    parser = create_stream_parser("opencode-run-json", pricing=PRICES, model="gpt-test", usage=usage)
    assert isinstance(parser, OpenCodeRunParser)
    steps = feed(parser, (STREAMS / "tool_turn.jsonl").read_text())
    assert [type(s).__name__ for s in steps] == [
        "ThinkingStep", "AgentTextStep", "ToolUseStep", "LLMCall", "AgentTextStep", "LLMCall",
    ]
    thinking, text, tool, first, answer, second = steps
    assert isinstance(thinking, ThinkingStep) and thinking.content == "Use bash."
    assert isinstance(text, AgentTextStep) and text.content == "Creating it."
    assert isinstance(tool, ToolUseStep) and tool.tool == "bash" and tool.tool_call_id == "call_1"
    assert tool.arguments == {"command": "printf 'hi\\n' > made.txt"}
    assert tool.result == "(no output)" and tool.exit_code == 0 and not tool.is_error
    assert tool.elapsed is not None and tool.elapsed > 0
    assert isinstance(answer, AgentTextStep) and answer.content == "Done."
    # OpenCode's input excludes cache reads and counts cache writes (it reads no cache-write figure from an
    # OpenAI-compatible server); its output excludes reasoning, agentrig's includes it
    assert isinstance(first, LLMCall) and first.usage == TokenUsage(input=1100, output=50, cache_read=200, reasoning=20)
    assert isinstance(second, LLMCall) and second.usage == TokenUsage(input=1300, output=10)
    assert first.request_id and first.request_id.startswith("msg_")
    # the cost agentrig computes equals the one the CLI reports in each step_finish
    reported = [json.loads(x)["part"]["cost"] for x in (STREAMS / "tool_turn.jsonl").read_text().splitlines()
                if json.loads(x)["type"] == "step_finish"]
    assert [c.cost for c in (first, second)] == pytest.approx(reported)
    assert usage.steps == 2 and usage.cost == pytest.approx(sum(reported))
    assert usage.net_tokens == TokenUsage(input=2400, output=60, cache_read=200, reasoning=20)
    outcome = parser.outcome
    assert outcome.session_id and outcome.session_id.startswith("ses_")
    assert outcome.cli_usage == usage.net_tokens and outcome.cli_cost == pytest.approx(outcome.live_cost)
    # counted live per step_finish through the shared base: settling on the CLI's total adds nothing
    assert outcome.live_usage == outcome.cli_usage and usage.steps == 2
    assert outcome.completed and outcome.model_calls == 2 and outcome.last_finish_reason == "stop"


def test_failed_tool_error_event_unknown_and_invalid_lines() -> None:
    lines = [
        {"type": "tool_use", "sessionID": "ses_x", "part": {"tool": "read", "callID": "c1", "state": {
            "status": "error", "input": {"filePath": "/nope"}, "error": "File not found: /nope",
            "time": {"start": 1000, "end": 1500}}}},
        {"type": "tool_use", "sessionID": "ses_x", "part": {"tool": "bash", "callID": "c2", "state": {
            "status": "completed", "input": {"command": "false"}, "output": "", "metadata": {"exit": 1}}}},
        {"type": "tool_use", "sessionID": "ses_x", "part": {"tool": "invalid", "callID": "c3", "state": {
            "status": "completed", "input": {"tool": "write", "error": "Model tried to call unavailable tool 'write'."},
            "output": "The arguments provided to the tool are invalid: Model tried to call unavailable tool 'write'."}}},
        {"type": "todo_updated", "sessionID": "ses_x", "todos": []},
        {"type": "error", "sessionID": "ses_x", "error": {"name": "APIError", "data": {"message": "bad key", "statusCode": 401}}},
    ]
    text = "\n".join(json.dumps(line) for line in lines) + "\nnot json\n"
    parser = OpenCodeRunParser(pricing=PRICES, model="m")
    steps = feed(parser, text, exit_code=1)
    read, bash, invalid, error = steps
    assert isinstance(read, ToolUseStep) and read.is_error and read.result == "File not found: /nope"
    assert read.elapsed == pytest.approx(0.5) and read.exit_code is None
    assert isinstance(bash, ToolUseStep) and bash.is_error and bash.exit_code == 1
    assert isinstance(invalid, ToolUseStep) and invalid.tool == "write" and invalid.is_error
    assert invalid.result is not None and "unavailable tool 'write'" in invalid.result
    assert isinstance(error, ErrorStep) and error.message == "bad key" and error.error_type == "APIError"
    outcome = parser.outcome
    assert outcome.errors == ["bad key"] and not outcome.completed and outcome.exit_code == 1
    assert outcome.unknown_events == [lines[3]] and outcome.invalid_lines == ["not json"]
    assert parser.usage.steps == 0


def test_unpriced_model_counts_tokens_and_keeps_the_cli_cost() -> None:
    step_finish = {"type": "step_finish", "sessionID": "s", "part": {"reason": "stop", "cost": 0, "tokens": {
        "input": 10, "output": 2, "reasoning": 0, "cache": {"read": 0, "write": 0}, "total": 12}}}
    parser = OpenCodeRunParser(pricing=None, model="m")
    (call,) = feed(parser, json.dumps(step_finish) + "\n")
    assert isinstance(call, LLMCall) and call.cost is None and call.usage == TokenUsage(input=10, output=2)
    assert parser.usage.steps == 1 and parser.usage.cost == 0


def test_outcome_shares_the_cli_stream_fields_and_reports_zero_usage_before_a_call() -> None:
    from agentrig.agents.cli_stream import CliStreamOutcome, JsonLinesParser

    parser = OpenCodeRunParser(pricing=PRICES, model="m")
    assert isinstance(parser, JsonLinesParser) and isinstance(parser.outcome, CliStreamOutcome)
    assert feed(parser, '[1, 2]\n{"type": "step_start", "sessionID": "ses_z"}\n', exit_code=0) == []
    record = json.loads(parser.outcome.model_dump_json())
    # a run with no model call: zero usage, never null (as before the shared base)
    assert record["cli_usage"] == record["live_usage"] == TokenUsage().model_dump()
    assert record["session_id"] == "ses_z" and record["model_calls"] == 0 and not parser.outcome.completed
