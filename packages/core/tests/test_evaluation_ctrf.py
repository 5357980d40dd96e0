"""CTRF reports (what Harbor's verifiers write with ``pytest --ctrf /logs/verifier/ctrf.json``) read as tests.

The fixture is the report pytest-json-ctrf 0.3.5 (the version Harbor's task templates pin) wrote for a small
test file of our own: one test passed, one failed, one skipped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentrig.evaluation.parsers import ReportError, parse_ctrf

FIXTURE = Path(__file__).parent / "fixtures" / "ctrf" / "pytest-json-ctrf-0.3.5.json"


def test_a_pytest_json_ctrf_report_reads_as_tests() -> None:
    tests = parse_ctrf(FIXTURE.read_bytes())
    assert [(t.id, t.outcome) for t in tests] == [
        ("test_outputs.py::test_greeting_file_exists", "passed"),
        ("test_outputs.py::test_greeting_text", "failed"),
        ("test_outputs.py::test_skipped", "skipped"),
    ]
    assert tests[1].message == "AssertionError: greeting text differs"  # pytest's own line, not the generic message
    assert tests[0].message is None
    assert all(t.duration is not None and 0 <= t.duration < 1 for t in tests)  # pytest-json-ctrf writes seconds


def test_other_ctrf_tools_count_milliseconds_and_their_statuses_map() -> None:
    report = {"results": {"tool": {"name": "jest"}, "summary": {}, "tests": [
        {"name": "adds", "status": "passed", "duration": 1500},
        {"name": "waits", "status": "pending", "duration": 0},
        {"name": "odd", "status": "other", "duration": 3, "message": "runner crashed"},
    ]}}
    tests = parse_ctrf(json.dumps(report).encode())
    assert [(t.id, t.outcome, t.duration) for t in tests] == [
        ("adds", "passed", 1.5), ("waits", "skipped", 0.0), ("odd", "error", 0.003),
    ]
    assert tests[2].message == "runner crashed"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"not json", "ctrf.json: not a JSON document"),
        (b'{"results": {}}', "ctrf.json: not a CTRF report (expected an object with a 'results.tests' list)"),
        (b'{"results": {"tests": [{"status": "passed"}]}}', "results.tests[0]: expected an object with 'name' and 'status'"),
        (b'{"results": {"tests": [{"name": "a", "status": "weird"}]}}', "results.tests[0].status: unknown status"),
        (b"[" * 5000 + b"]" * 5000, "ctrf.json: nested too deeply to read"),
    ],
)
def test_a_broken_report_is_one_line(data: bytes, expected: str) -> None:
    with pytest.raises(ReportError) as info:
        parse_ctrf(data)
    assert expected in str(info.value) and "\n" not in str(info.value)
