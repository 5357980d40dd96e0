"""The ``qwen-stream-json`` parser on streams the pinned CLI (0.24.4) wrote against the fake OpenAI API."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.agents.stream import create_stream_parser
from agentrig.pricing import APIPricing
from agentrig.runtime.interface import RuntimeEvent, RuntimeResult
from agentrig.trajectory import AgentTextStep, ErrorStep, LLMCall, ToolUseStep
from agentrig.usage import TokenUsage, UsageTracker
from agentrig_qwen_code.stream_json import QwenStreamParser

STREAMS = Path(__file__).parent / "streams"
PRICING = APIPricing(input=1.25, output=10.0, cache_read=0.125)


def parse(name: str, *, pieces: int = 0, before: TokenUsage | None = None, exit_code: int = 0) -> QwenStreamParser:
    """Feed a recorded stream to a parser (in pieces of ``pieces`` characters when set), then its end."""
    parser = QwenStreamParser(pricing=PRICING, model="gpt-4.1", usage=UsageTracker(), session_usage_before=before)
    text = (STREAMS / name).read_text()
    size = pieces or len(text)
    for start in range(0, len(text), size):
        parser.consume(RuntimeEvent(kind="stdout", text=text[start:start + size]))
    parser.consume(RuntimeEvent(kind="finished", result=RuntimeResult(exit_code=exit_code, stdout="", stderr="", elapsed=1.0)))
    return parser


@pytest.mark.parametrize("pieces", [0, 7])
def test_a_tool_turn_becomes_steps_with_usage_per_model_call(pieces: int) -> None:
    parser = parse("tool_turn.jsonl", pieces=pieces)
    steps = list(parser.drain_steps()) + list(parser.finish())
    assert [s.kind for s in steps] == ["agent_text", "llm_call", "tool_use", "llm_call", "tool_use", "agent_text", "llm_call"]
    calls = [s for s in steps if isinstance(s, LLMCall)]
    # the prompt count includes its cached part: agentrig counts them apart
    assert [c.usage for c in calls] == [TokenUsage(input=900, output=40, cache_read=100), TokenUsage(input=950, output=90),
                                        TokenUsage(input=1000, output=8)]
    assert all(c.request_id and c.model == "gpt-4.1" for c in calls)
    assert [c.cost for c in calls] == [pytest.approx(PRICING.get_cost(c.usage)) for c in calls]
    tools = [s for s in steps if isinstance(s, ToolUseStep)]
    assert [(t.tool, t.is_error) for t in tools] == [("write_file", True), ("run_shell_command", False)]
    assert tools[0].result == "File path must be absolute: greet.py"
    assert tools[1].arguments == {"command": "cat greet.py; echo hi"} and tools[1].result is not None
    assert [s.content for s in steps if isinstance(s, AgentTextStep)] == ["Writing greet.py.", "Done."]
    outcome = parser.outcome
    assert outcome.status == "success" and outcome.session_id and outcome.cli_version == "0.24.4"
    assert outcome.cli_usage == TokenUsage(input=2850, output=138, cache_read=100) == outcome.live_usage
    assert parser.usage.steps == 3 and outcome.model_calls == 3
    assert outcome.unknown_events == [] and outcome.invalid_lines == []


def test_a_failed_request_is_an_error_with_its_message() -> None:
    parser = parse("api_error.jsonl", exit_code=1)
    steps = list(parser.drain_steps()) + list(parser.finish())
    assert [(type(s), getattr(s, "error_type", None)) for s in steps] == [(ErrorStep, "api_error")]
    outcome = parser.outcome
    assert outcome.status == "error" and outcome.subtype == "error_during_execution"
    assert outcome.error == "[API Error: 401 fake error 401]" and outcome.exit_code == 1
    assert outcome.cli_usage == TokenUsage() and outcome.model_calls == 0


def test_a_resumed_run_counts_its_own_part_of_the_sessions_total() -> None:
    """The result of a resumed session counts every run of it (300 = 100 before + 200 now)."""
    parser = parse("resumed.jsonl", before=TokenUsage(input=100, output=5))
    list(parser.finish())
    assert parser.outcome.session_usage == TokenUsage(input=300, output=12)
    assert parser.outcome.cli_usage == TokenUsage(input=200, output=7) == parser.usage.net_tokens


def test_a_killed_run_closes_its_open_tool_as_interrupted() -> None:
    lines = (STREAMS / "tool_turn.jsonl").read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if '"run_shell_command","input"' in line)
    parser = QwenStreamParser(model="gpt-4.1")
    parser.consume(RuntimeEvent(kind="stdout", text="\n".join(lines[: cut + 1]) + "\n"))
    steps = list(parser.drain_steps()) + list(parser.finish())
    tool = [s for s in steps if isinstance(s, ToolUseStep)][-1]
    assert tool.tool == "run_shell_command" and tool.is_error and tool.metadata == {"status": "interrupted"}
    assert parser.outcome.status is None and parser.outcome.cli_usage is None


def test_unknown_events_and_lines_are_kept_not_fatal() -> None:
    parser = QwenStreamParser()
    parser.consume(RuntimeEvent(kind="stdout", text='{"type":"new_kind","x":1}\nnot json\n{"type":"stream_event"}\n'))
    list(parser.finish())
    assert parser.outcome.unknown_events == [{"type": "new_kind", "x": 1}]
    assert parser.outcome.invalid_lines == ["not json"]


def test_the_parser_is_declared_by_the_plugin() -> None:
    parser = create_stream_parser("qwen-stream-json", model="m")
    assert isinstance(parser, QwenStreamParser)
