"""The ``openhands-jsonl`` parser on a stream the pinned SDK's driver wrote (recorded against the fake OpenAI API)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.agents.stream import create_stream_parser
from agentrig.pricing import APIPricing
from agentrig.runtime.interface import RuntimeEvent, RuntimeResult
from agentrig.trajectory import AgentTextStep, LLMCall, ToolUseStep
from agentrig.usage import TokenUsage, UsageTracker
from agentrig_openhands.events import OpenHandsStreamParser

STREAMS = Path(__file__).parent / "streams"
PRICING = APIPricing(input=3.0, output=15.0, cache_read=0.3)


def parse(text: str, *, pricing: APIPricing | None = PRICING, piece: int = 7) -> tuple[OpenHandsStreamParser, list, UsageTracker]:
    usage = UsageTracker()
    parser = create_stream_parser("openhands-jsonl", pricing=pricing, model="gpt-4o-mini", usage=usage)
    assert isinstance(parser, OpenHandsStreamParser)
    steps = []
    for start in range(0, len(text), piece):  # the stream arrives in pieces of any size
        parser.consume(RuntimeEvent(kind="stdout", text=text[start : start + piece]))
        steps.extend(parser.drain_steps())
    parser.consume(RuntimeEvent(kind="finished", result=RuntimeResult(exit_code=0)))
    steps.extend(parser.finish())
    return parser, steps, usage


def test_a_recorded_tool_turn_becomes_steps_with_usage_per_call() -> None:
    parser, steps, usage = parse((STREAMS / "tool_turn.jsonl").read_text())
    assert [s.kind for s in steps] == ["llm_call", "agent_text", "tool_use", "llm_call", "agent_text"]
    first, second = [s for s in steps if isinstance(s, LLMCall)]
    # prompt_tokens counts cached input: agentrig keeps them apart
    assert first.usage == TokenUsage(input=900, output=40, cache_read=100)
    assert second.usage == TokenUsage(input=1000, output=8)
    assert first.cost == pytest.approx(PRICING.get_cost(first.usage)) and first.request_id
    tool = next(s for s in steps if isinstance(s, ToolUseStep))
    assert tool.tool == "terminal" and tool.arguments["command"] == "echo hi > x.txt && cat x.txt"
    assert tool.result is not None and "hi" in tool.result and tool.exit_code == 0
    assert [s.content for s in steps if isinstance(s, AgentTextStep)] == ["Running.", "Done first."]
    outcome = parser.outcome
    assert outcome.status == "finished" and outcome.error is None and outcome.sdk_version == "1.58.2"
    assert outcome.cli_usage == usage.net_tokens == TokenUsage(input=1900, output=48, cache_read=100)
    assert usage.steps == 2 and usage.cost == pytest.approx(PRICING.get_cost(usage.net_tokens))
    # both costs recorded: the catalog's and OpenHands' own (LiteLLM's gpt-4o-mini price when recorded)
    assert outcome.catalog_cost == pytest.approx(usage.cost)
    assert outcome.openhands_cost == pytest.approx(sum(c.openhands_cost for c in outcome.calls)) and outcome.openhands_cost > 0


def test_without_a_catalog_price_the_run_costs_what_openhands_reported() -> None:
    parser, _, usage = parse((STREAMS / "tool_turn.jsonl").read_text(), pricing=None)
    assert parser.outcome.openhands_cost is not None and parser.outcome.catalog_cost is None
    assert usage.cost == pytest.approx(parser.outcome.openhands_cost)


def test_a_killed_run_keeps_the_tool_it_was_running_and_no_end() -> None:
    text = (STREAMS / "tool_turn.jsonl").read_text().splitlines()
    cut = next(i for i, line in enumerate(text) if '"type": "observation"' in line)
    parser, steps, usage = parse("\n".join(text[:cut]) + "\n")
    assert [s.kind for s in steps] == ["llm_call", "agent_text", "tool_use"]
    assert steps[-1].result is None and parser.outcome.status is None and usage.steps == 1


def test_lines_that_are_not_json_and_unknown_events_are_kept_not_fatal() -> None:
    parser, steps, _ = parse('not json\n{"type": "novel", "x": 1}\n')
    assert steps == [] and parser.outcome.invalid_lines == ["not json"]
    assert parser.outcome.unknown_events == [{"type": "novel", "x": 1}]
