"""Readers of test reports: pytest's JSON report, JUnit XML, reward files.

Each returns the tests it found (or the reward); a report that cannot be read
raises :class:`ReportError` with one line naming the file and what is wrong,
which the engine records as an infrastructure failure, not a failed test.
"""

from __future__ import annotations

import json
import math
from typing import Any

from agentrig.boundary import REWARD_MAX_BYTES, shorten
from agentrig.evaluation.records import MESSAGE_LIMIT, TestOutcome, TestResult

REPORT_KINDS = ("pytest-json", "junit", "reward")


class ReportError(ValueError):
    """A test report that is missing, malformed or not what its kind promises."""


def short_message(text: str | None, limit: int = MESSAGE_LIMIT) -> str | None:
    """The first lines of a failure, at most ``limit`` characters."""
    if not text:
        return None
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


_PYTEST_OUTCOMES: dict[str, TestOutcome] = {
    "passed": "passed",
    "failed": "failed",
    "error": "error",
    "skipped": "skipped",
    "xfailed": "skipped",  # expected to fail, and did
    "xpassed": "passed",
    "rerun": "failed",
}


def _stage_message(stage: Any) -> str | None:
    if not isinstance(stage, dict):
        return None
    crash = stage.get("crash")
    if isinstance(crash, dict) and crash.get("message"):
        return str(crash["message"])
    longrepr = stage.get("longrepr")
    if isinstance(longrepr, str) and longrepr:
        return longrepr.strip().splitlines()[-1]
    return None


def parse_pytest_json(data: bytes, name: str = "report.json") -> list[TestResult]:
    """Tests of a ``pytest --json-report`` file; collection errors become tests with outcome ``error``
    (see :func:`parse_pytest_json_run`, which also says how many collected tests never finished)."""
    return parse_pytest_json_run(data, name)[0]


def _unfinished(entry: dict[str, Any]) -> bool:
    """A test pytest was interrupted in (Ctrl-C, a session cap): pytest-json-report lists it with the
    outcome of its setup (``passed``) and no ``call`` stage. It never ran to the end: not a pass."""
    setup = entry.get("setup")
    return (
        entry.get("outcome") == "passed"
        and "call" not in entry
        and isinstance(setup, dict)
        and setup.get("outcome") == "passed"
    )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _json_report(data: bytes, name: str) -> Any:
    """A report's JSON document; :class:`ReportError` in one line when it is not one (or nests too deeply)."""
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ReportError(f"{name}: not a JSON document ({shorten(str(exc))})") from None
    except RecursionError:
        raise ReportError(f"{name}: nested too deeply to read") from None


def parse_pytest_json_run(data: bytes, name: str = "report.json") -> tuple[list[TestResult], int]:
    """The tests of a ``pytest --json-report`` file that finished, and how many collected tests did not
    (``summary.collected`` less ``deselected`` less those finished: a run interrupted or stopped early);
    a test interrupted while it ran is one that did not finish. Collection errors become tests with
    outcome ``error``."""
    report = _json_report(data, name)
    if not isinstance(report, dict) or not isinstance(report.get("tests", []), list):
        raise ReportError(f"{name}: not a pytest JSON report (expected an object with a 'tests' list)")
    tests: list[TestResult] = []
    for entry in report.get("collectors", []) or []:
        if isinstance(entry, dict) and entry.get("outcome") == "failed":
            tests.append(
                TestResult(
                    id=str(entry.get("nodeid") or "<collection>"),
                    outcome="error",
                    message=short_message(_collector_message(entry)),
                )
            )
    finished = 0
    for index, entry in enumerate(report.get("tests", [])):
        if not isinstance(entry, dict) or "nodeid" not in entry or "outcome" not in entry:
            raise ReportError(f"{name}: tests[{index}]: expected an object with 'nodeid' and 'outcome'")
        if _unfinished(entry):
            continue
        finished += 1
        outcome = _PYTEST_OUTCOMES.get(str(entry["outcome"]))
        if outcome is None:
            raise ReportError(f"{name}: tests[{index}].outcome: unknown outcome '{shorten(repr(entry['outcome']), 40)}'")
        duration = 0.0
        message = None
        for stage_name in ("setup", "call", "teardown"):
            stage = entry.get(stage_name)
            if isinstance(stage, dict):
                duration += float(stage.get("duration") or 0.0)
                if message is None and stage.get("outcome") == "failed":
                    message = _stage_message(stage)
        keywords = entry.get("keywords") or []
        tests.append(
            TestResult(
                id=str(entry["nodeid"]),
                outcome=outcome,
                duration=duration,
                markers=[str(k) for k in keywords if isinstance(k, str)],
                message=short_message(message) if outcome in ("failed", "error") else None,
            )
        )
    summary = report.get("summary")
    summary = summary if isinstance(summary, dict) else {}
    not_run = max(0, _int(summary.get("collected")) - _int(summary.get("deselected")) - finished)
    return tests, not_run


def _collector_message(entry: dict[str, Any]) -> str | None:
    longrepr = entry.get("longrepr")
    if isinstance(longrepr, str) and longrepr.strip():
        lines = [line for line in longrepr.strip().splitlines() if line.strip()]
        return lines[-1] if lines else None
    return None


def parse_junit_xml(data: bytes, name: str = "report.xml") -> list[TestResult]:
    """Tests of a JUnit XML report (pytest's ``--junitxml``, and most other runners')."""
    return parse_junit_xml_run(data, name)[0]


def parse_junit_xml_run(data: bytes, name: str = "report.xml") -> tuple[list[TestResult], int]:
    """The tests of a JUnit XML report that finished, and how many did not: pytest writes the test it
    was interrupted in (Ctrl-C, a timeout) as a ``<testcase>`` without a name; it is not a pass."""
    import xml.etree.ElementTree as ET

    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise ReportError(f"{name}: not well-formed XML ({shorten(str(exc))})") from None
    if root.tag not in ("testsuites", "testsuite"):
        raise ReportError(
            f"{name}: not a JUnit report (root element <{shorten(root.tag, 40)}>, expected <testsuites> or <testsuite>)"
        )
    tests: list[TestResult] = []
    unfinished = 0
    for case in root.iter("testcase"):
        if not case.get("name") and not case.get("classname") and not len(case):
            unfinished += 1
            continue
        classname = case.get("classname") or ""
        test_name = case.get("name") or "<unnamed>"
        file = case.get("file")
        if file:
            test_id = f"{file}::{test_name}"
        elif classname:
            test_id = f"{classname}::{test_name}"
        else:
            test_id = test_name
        outcome: TestOutcome = "passed"
        message = None
        for child in case:
            if child.tag == "failure":
                outcome, message = "failed", child.get("message") or (child.text or "")
            elif child.tag == "error":
                outcome, message = "error", child.get("message") or (child.text or "")
            elif child.tag == "skipped" and outcome == "passed":
                outcome = "skipped"
        try:
            duration = float(case.get("time") or 0.0)
        except ValueError:
            duration = None
        properties = [
            str(p.get("value")) for p in case.iter("property") if p.get("name") in ("marker", "markers") and p.get("value")
        ]
        tests.append(
            TestResult(id=test_id, outcome=outcome, duration=duration, markers=properties, message=short_message(message))
        )
    return tests, unfinished


def parse_reward(data: bytes, name: str = "reward.txt") -> float:
    """The reward of a reward file, in [0, 1]: ``reward.txt`` holds a number; ``reward.json`` a
    number or an object whose ``reward`` (or ``score``) is one. At most
    :data:`~agentrig.boundary.REWARD_MAX_BYTES` bytes; a non-finite number is an error."""
    if len(data) > REWARD_MAX_BYTES:
        raise ReportError(f"{name}: {len(data)} bytes, more than a reward file may hold ({REWARD_MAX_BYTES}); not read")
    try:
        text = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ReportError(f"{name}: not UTF-8 text") from None
    value: Any
    if name.endswith(".json"):
        try:
            value = json.loads(text)
        except ValueError:
            raise ReportError(f"{name}: not a JSON document") from None
        except RecursionError:
            raise ReportError(f"{name}: nested too deeply to read") from None
        if isinstance(value, dict):
            key = next((k for k in ("reward", "score") if k in value), None)
            if key is None:
                raise ReportError(f"{name}: expected a number or an object with a 'reward' field")
            value = value[key]
    else:
        value = text
    if isinstance(value, bool):
        raise ReportError(f"{name}: the reward {value!r} is not a number")
    try:
        reward = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ReportError(f"{name}: the reward '{shorten(text, 40)}' is not a number") from None
    if not math.isfinite(reward):
        raise ReportError(f"{name}: the reward '{shorten(text, 40)}' is not a finite number")
    if not 0.0 <= reward <= 1.0:
        raise ReportError(f"{name}: the reward {reward:g} is outside [0, 1]")
    return reward


#: CTRF's test statuses (https://ctrf.io: ``passed``, ``failed``, ``skipped``, ``pending``, ``other``) as outcomes.
_CTRF_OUTCOMES: dict[str, TestOutcome] = {
    "passed": "passed", "failed": "failed", "skipped": "skipped", "pending": "skipped", "other": "error",
}
#: The most tests read from one CTRF report (a report listing more is refused).
CTRF_MAX_TESTS = 100_000


def parse_ctrf(data: bytes, name: str = "ctrf.json") -> list[TestResult]:
    """The tests of a CTRF report (``pytest --ctrf FILE``, pytest-json-ctrf: what Harbor's verifiers write to
    ``/logs/verifier/ctrf.json``): ``results.tests[]`` with ``name``, ``status``, ``duration`` and ``message``
    or ``trace``; :class:`ReportError` in one line for anything else.

    CTRF counts durations in milliseconds; pytest-json-ctrf (``results.tool.name`` ``pytest``) writes seconds.
    A failure's message is the first ``E`` line of its trace (pytest's own), else its ``message``."""
    report = _json_report(data, name)
    results = report.get("results") if isinstance(report, dict) else None
    entries = results.get("tests") if isinstance(results, dict) else None
    if not isinstance(results, dict) or not isinstance(entries, list):
        raise ReportError(f"{name}: not a CTRF report (expected an object with a 'results.tests' list)")
    if len(entries) > CTRF_MAX_TESTS:
        raise ReportError(f"{name}: {len(entries)} tests, more than {CTRF_MAX_TESTS} read")
    tool = results.get("tool")
    unit = 1.0 if isinstance(tool, dict) and tool.get("name") == "pytest" else 1000.0
    tests: list[TestResult] = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or "status" not in entry:
            raise ReportError(f"{name}: results.tests[{index}]: expected an object with 'name' and 'status'")
        outcome = _CTRF_OUTCOMES.get(str(entry["status"]))
        if outcome is None:
            raise ReportError(f"{name}: results.tests[{index}].status: unknown status '{shorten(repr(entry['status']), 40)}'")
        duration = entry.get("duration")
        seconds = duration / unit if isinstance(duration, (int, float)) and not isinstance(duration, bool) else None
        tests.append(
            TestResult(
                id=shorten(entry["name"], 500),
                outcome=outcome,
                duration=seconds if seconds is not None and math.isfinite(seconds) and seconds >= 0 else None,
                message=None if outcome == "passed" else short_message(_ctrf_message(entry)),
            )
        )
    return tests


def _ctrf_message(entry: dict[str, Any]) -> str | None:
    trace = entry.get("trace")
    if isinstance(trace, str):
        for line in trace.splitlines():
            if line.startswith("E ") and line[1:].strip():
                return line[1:].strip()
    message = entry.get("message")
    return message if isinstance(message, str) else None
