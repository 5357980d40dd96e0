"""The ``gemini-stream-json`` parser on streams and session logs the real CLI wrote (``streams/``, CLI 0.61.0)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentrig.agents.stream import StreamParser, create_stream_parser
from agentrig.pricing import APIPricing
from agentrig.runtime.interface import RuntimeEvent, RuntimeResult
from agentrig.trajectory import AgentTextStep, ErrorStep, LLMCall, ThinkingStep, ToolUseStep
from agentrig.usage import TokenUsage, UsageTracker
from agentrig_gemini_cli.stream_json import GeminiStreamParser

STREAMS = Path(__file__).parent / "streams"
PRICING = APIPricing(input=1.25, output=10.0, cache_read=0.125)


def _stdout(text: str) -> RuntimeEvent:
    return RuntimeEvent(kind="stdout", text=text)


def _finished(code: int) -> RuntimeEvent:
    return RuntimeEvent(kind="finished", result=RuntimeResult(exit_code=code, stdout="", stderr="", elapsed=1.0))


def test_the_plugin_declares_the_parser() -> None:
    parser = create_stream_parser("gemini-stream-json", pricing=PRICING, model="gemini-2.5-pro")
    assert isinstance(parser, GeminiStreamParser) and isinstance(parser, StreamParser)


def test_a_recorded_tool_turn_becomes_steps_and_the_clis_usage() -> None:
    usage = UsageTracker()
    parser = GeminiStreamParser(pricing=PRICING, model="gemini-2.5-pro", usage=usage)
    stream = (STREAMS / "tool_turn.jsonl").read_text()
    log = (STREAMS / "tool_turn.session.jsonl").read_text().splitlines()
    # the stream in pieces that split lines and events; the session log, every line of it, halfway
    half = len(stream) // 2
    for start in range(0, half, 37):
        parser.consume(_stdout(stream[start : min(start + 37, half)]))
    for line in log:
        parser.consume_session_line(line)
    parser.consume(_stdout(stream[half:]))
    parser.consume(_finished(0))
    steps = [*parser.drain_steps(), *parser.finish()]
    texts = [s.content for s in steps if isinstance(s, AgentTextStep)]
    assert texts == ["Creating it.", "Done."]
    shell, read = [s for s in steps if isinstance(s, ToolUseStep)]
    assert shell.tool == "run_shell_command" and shell.arguments == {"command": "printf 'hi\\n' > made.txt; echo made"}
    assert shell.result == "made" and not shell.is_error and shell.tool_call_id and shell.elapsed is not None
    assert read.tool == "read_file" and read.is_error and read.metadata == {"error_type": "file_not_found"}
    assert read.result is not None and read.result.startswith("File not found:")
    # three replies, each once although the log writes a reply again with its tool calls
    calls = [s for s in steps if isinstance(s, LLMCall)]
    assert [c.usage for c in calls] == [
        TokenUsage(input=1000, output=50, cache_read=200, reasoning=20),
        TokenUsage(input=1200, output=12),
        TokenUsage(input=1300, output=10),
    ]
    assert all(c.model == "gemini-2.5-pro" and c.request_id for c in calls) and len({c.request_id for c in calls}) == 3
    assert [c.cost for c in calls] == [pytest.approx(PRICING.get_cost(c.usage)) for c in calls]
    # the thought summary, as the CLI logged it (it trims each streamed piece)
    (thinking,) = [s for s in steps if isinstance(s, ThinkingStep)]
    assert thinking.content.startswith("**Planning the file**") and "to write it." in thinking.content
    outcome = parser.outcome
    assert outcome.status == "success" and outcome.exit_code == 0 and outcome.session_id and outcome.model == "gemini-2.5-pro"
    assert outcome.model_calls == 3 and outcome.stats is not None and outcome.stats.tool_calls == 2
    # the tracker ends equal to the CLI's own total, with nothing to settle (the log had every call)
    assert outcome.cli_usage == outcome.live_usage == usage.net_tokens == TokenUsage(input=3500, output=72, cache_read=200, reasoning=20)
    assert usage.steps == 3 and usage.cost == pytest.approx(PRICING.get_cost(usage.net_tokens))
    assert outcome.unknown_events == [] and outcome.invalid_lines == []


def test_calls_the_log_misses_are_settled_on_the_clis_total_without_a_step() -> None:
    usage = UsageTracker()
    parser = GeminiStreamParser(pricing=PRICING, usage=usage)
    parser.consume(_stdout((STREAMS / "tool_turn.jsonl").read_text()))
    list(parser.finish())
    # no session line at all (say, a utility model's calls): the stream's total is still recorded, as no model call
    assert usage.net_tokens == parser.outcome.cli_usage and usage.steps == 0
    assert usage.cost == pytest.approx(PRICING.get_cost(usage.net_tokens))


def test_an_api_error_ends_the_stream_with_an_error_result() -> None:
    parser = GeminiStreamParser(pricing=PRICING)
    parser.consume(_stdout((STREAMS / "api_error.jsonl").read_text()))
    parser.consume(_finished(1))
    steps = list(parser.finish())
    outcome = parser.outcome
    assert outcome.status == "error" and outcome.exit_code == 1 and outcome.error is not None
    assert "API key not valid" in outcome.error.message
    assert [s.kind for s in steps] == ["error"] and isinstance(steps[0], ErrorStep)
    assert outcome.cli_usage == TokenUsage()


def test_a_killed_cli_leaves_its_running_tool_interrupted_and_no_result() -> None:
    parser = GeminiStreamParser()
    lines = (STREAMS / "tool_turn.jsonl").read_text().splitlines()
    parser.consume(_stdout("\n".join(lines[:4]) + "\n"))  # init, prompt, text, tool_use: killed while the tool runs
    parser.consume(RuntimeEvent(kind="finished", result=RuntimeResult(exit_code=None, stdout="", stderr="", elapsed=1.0, killed=True)))
    steps = list(parser.finish())
    assert [s.kind for s in steps] == ["agent_text", "tool_use"]
    tool = steps[1]
    assert isinstance(tool, ToolUseStep) and tool.is_error and tool.metadata == {"status": "interrupted"} and tool.result is None
    assert parser.outcome.status is None and parser.outcome.cli_usage is None


def test_warnings_unknown_events_and_junk_are_kept_never_fatal() -> None:
    parser = GeminiStreamParser()
    events = [
        {"type": "error", "severity": "warning", "message": "Loop detected, stopping execution"},
        {"type": "error", "severity": "error", "message": "Maximum session turns exceeded"},
        {"type": "brand_new", "x": 1},
    ]
    parser.consume(_stdout("".join(json.dumps(e) + "\n" for e in events) + "not json\n[1, 2]\n"))
    parser.consume_session_line("{broken")
    parser.consume_session_line(json.dumps({"$set": {"messages": [{"type": "gemini", "tokens": {"input": 5}}]}}))
    steps = list(parser.finish())
    assert [(s.kind, s.error_type) for s in steps if isinstance(s, ErrorStep)] == [
        ("error", "gemini_warning"), ("error", "gemini_error"),
    ]
    outcome = parser.outcome
    assert outcome.warnings == ["Loop detected, stopping execution"] and outcome.errors == ["Maximum session turns exceeded"]
    assert outcome.unknown_events == [{"type": "brand_new", "x": 1}] and outcome.invalid_lines == ["not json"]
    assert outcome.model_calls == 0  # a reply inside a resumed session's `$set` is history, not a call of this run
