"""Identical tool calls in a row: a warning, then a stop."""

from __future__ import annotations

import pytest

from agentrig_react.loop_detection import RepeatDetector, RepeatVerdict, call_signature


def test_warn_at_the_limit_then_stop() -> None:
    detector = RepeatDetector(3)
    verdicts = [detector.observe("bash", {"command": "ls"}) for _ in range(4)]
    assert verdicts == [RepeatVerdict.OK, RepeatVerdict.OK, RepeatVerdict.WARN, RepeatVerdict.STOP]
    assert "3 identical bash calls in a row" in detector.warning("bash")


def test_a_different_call_resets_the_count() -> None:
    detector = RepeatDetector(2)
    assert detector.observe("bash", {"command": "ls"}) == RepeatVerdict.OK
    assert detector.observe("bash", {"command": "ls"}) == RepeatVerdict.WARN
    assert detector.observe("bash", {"command": "pwd"}) == RepeatVerdict.OK
    assert detector.observe("bash", {"command": "ls"}) == RepeatVerdict.OK
    detector.reset()
    assert detector.count == 0


def test_argument_order_does_not_matter_but_values_do() -> None:
    assert call_signature("f", {"a": 1, "b": 2}) == call_signature("f", {"b": 2, "a": 1})
    assert call_signature("f", {"a": 1}) != call_signature("f", {"a": "1"})
    assert call_signature("f", {"a": 1}) != call_signature("g", {"a": 1})


def test_limit_below_two_is_refused() -> None:
    with pytest.raises(ValueError):
        RepeatDetector(1)
