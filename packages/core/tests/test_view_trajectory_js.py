"""The report pages read trajectories in the browser (``agentrig/view/static/trajectory.js``): what they show
must be what agentrig's Python reader reads, in Debian's chromium.

- an edge-case trajectory (ties in rounding, characters beyond the BMP, U+2028, ``</script>``, a step of a newer
  kind, lines that are not JSON or not UTF-8, a torn last line, coerced values, a nested subagent, messages that
  refer to earlier steps) drawn as ``trajectory_views.json`` records what agentrig's Python step views made of it
  (before they moved to the page), on the checkpoint page, as an earlier try, and in the search shard;
- the step fields, numbers, JSON and timestamps, each against the Python reader, ``json`` and f-strings run now.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from agentrig.report.reader import read_steps
from agentrig.run.records import CheckpointResultLine, TryRecord
from agentrig.testing.runs import CheckpointPlan, write_run

pytestmark = [pytest.mark.chromium, pytest.mark.xdist_group("chromium")]  # one browser for the module

EXPECTED = json.loads((Path(__file__).with_name("trajectory_views.json")).read_text())
HOSTILE = "Fix the bug ü 𝄞 \u2028 </script><!-- & done"
ASSET = Path(__file__).resolve().parents[1] / "src/agentrig/view/static/trajectory.js"


def _line(**step: Any) -> str:
    return json.dumps(step)


def _model_steps() -> list[str]:
    ts = "2026-01-01T00:00:00.000000Z"
    system, user = {"role": "system", "content": "SYS PROMPT 𝄞"}, {"role": "user", "content": HOSTILE}
    return [
        _line(kind="user", content=HOSTILE, timestamp=ts),
        _line(kind="llm_call", model="m/x", timestamp="2026-01-01T00:00:00.125Z",
              usage={"input": 999949, "output": 1000, "cache_read": 0, "reasoning": 5}, cost=0.000125, latency=0.125,
              stop_reason="tool_use", tag="act", sent=[system, user], sent_count=2, tools=["bash", "edit"],
              received={"role": "assistant", "content": "", "thinking": "hmm",
                        "tool_calls": [{"id": "c1", "name": "bash", "arguments": '{"command": "ls"}'}]}),
        _line(kind="tool_use", tool="bash", arguments={"command": "ls"}, tool_call_id="c1", result="a\nb\n", exit_code=0,
              elapsed=0.005, timestamp="2026-01-01T00:00:00.250Z"),
        _line(kind="llm_call", model="m/x", timestamp="2026-01-01T00:00:01.05Z",
              usage={"input": 999950, "output": 12, "cache_read": 7}, cost=None, latency=2.675,
              sent=[{"role": "tool", "content": " a\nb ", "tool_call_id": "c1"}, {"role": "user", "content": "nudge", "cut": 3}],
              sent_from=3, sent_count=5, received={"role": "assistant", "content": "ok"}),
        _line(kind="tool_use", tool="write", timestamp="2026-01-01T00:00:02Z", result="x" * 1501, is_error=True,
              arguments={"path": "x.py", "content": "line1\nline2\n", "mode": 420, "flags": [1, "é", None, True],
                         "nested": {"a": 1.5, "b": 1e-7}}),
        _line(kind="tool_use", tool="shell", arguments="raw string args", result="\n".join(str(i) for i in range(13)),
              exit_code="3", elapsed="1.5", timestamp="2026-01-01T00:00:03Z"),
    ]


def edge_lines() -> bytes:
    """The edge-case trajectory: the lines ``trajectory_views.json`` records the views of."""
    ts = "2026-01-01T00:00:00.000000Z"
    lines = [
        *_model_steps(),
        _line(kind="thinking", content="1\n2\n3\n4", timestamp="2026-01-01T00:00:04+02:00"),
        _line(kind="thinking", content="1\n2\n3", timestamp=1767225604.5),
        _line(kind="agent_text", content="done\n" * 13, timestamp="2026-01-01 00:00:05z"),
        _line(kind="error", message="boom", error_type="APIError", timestamp="2026-01-01T00:00:06Z"),
        _line(kind="error", message="plain", timestamp="2026-01-01T00:00:06Z", extra_field_newer=1),
        _line(kind="plan", state="EXECUTING_PLAN", iteration=2, step=1, tool="bash", detail="why", timestamp="2026-01-01T00:00:07Z",
              plan=[{"tool": "bash", "arguments": {"command": "ls"}}, {"tool": None, "arguments": [1, 2]}, {"arguments": "x"}]),
        _line(kind="plan", state="ERROR_RECOVERY", timestamp="2026-01-01T00:00:08Z"),
        _line(kind="newer_kind", payload={"x": "é", "y": [1, 2.5, None, True]}, timestamp="2026-01-01T00:00:09Z"),
        '{"kind": "user"',  # not JSON
        json.dumps([1, 2]),  # not an object: skipped
        "   ",
        _line(kind="user", timestamp=ts),  # no content: a step this agentrig does not know
        _line(kind="user", content=5, timestamp=ts),
        _line(kind="llm_call", model="m", usage={"input": "7", "output": 2.0, "unknown": 1}, cost="0.5", latency=1,
              cache_hit="yes", timestamp="2026-01-01T00:00:10Z"),
        _line(kind="tool_use", tool="t", arguments={"command": "echo hi"}, exit_code=0, metadata={"subagent": "helper", "call": 1},
              result=None, timestamp="2026-01-01T00:00:11Z"),
        _line(kind="user", content=HOSTILE, timestamp="2026-01-01T00:00:12.0000005Z"),
        _line(kind="llm_call", model="m/x", timestamp="2026-01-01T00:00:13Z", usage={"input": 5}, cost=0.5, latency=0.005,
              sent=[{"role": "user", "content": HOSTILE}, {"role": "system", "content": "SYS PROMPT 𝄞"},
                    {"role": "system", "content": "other"}, {"role": "tool", "content": "zzz", "tool_call_id": "c1"},
                    {"role": "developer", "content": "dev"}], sent_from=0),
        _line(kind="tool_use", tool="x", arguments={"command": ["not", "str"]}, exit_code=True, timestamp="2026-01-01T00:00:14Z"),
        _line(kind="tool_use", tool="x", arguments={}, exit_code=-1, elapsed=0.125, timestamp="2026-01-01T00:00:15Z"),
        _line(kind="tool_use", tool="x", arguments={"a": "multi\nline\n\n"}, elapsed=2.675, timestamp="2026-01-01T00:00:16Z"),
        _line(kind="llm_call", model="m", usage={}, cost=1e-7, latency=1e21, timestamp="2026-01-01T00:00:17Z"),
    ]
    data = ("\n".join(lines) + "\n").encode()
    data += b'{"kind": "user", "content": "\xff\xfe bad"}\n'
    data += _line(kind="agent_text", content="after bad", timestamp="2026-01-01T00:00:18Z").encode() + b"\n"
    return data + b'{"kind": "agent_text", "content": "torn'


@pytest.fixture(scope="module")
def edge_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A static report of a run whose one checkpoint has the edge-case trajectory (its subagent's recorded beside
    it), kept as its earlier try too; ``(run, site)``."""
    from agentrig.view.render import Report
    from agentrig.view.site import write_site

    root = tmp_path_factory.mktemp("edge")
    run = write_run(root / "run", {"e": [CheckpointPlan("c", subagent=True)]})
    checkpoint = run / "e" / "c"
    (checkpoint / "trajectory.jsonl").write_bytes(edge_lines())
    folder = checkpoint / "tries" / "1"
    folder.mkdir(parents=True)
    shutil.copy(checkpoint / "trajectory.jsonl", folder / "trajectory.jsonl")
    line = CheckpointResultLine(problem="e", checkpoint="c", index=0, status="error", had_error=True, stop_reason="model_error")
    (folder / "try.json").write_text(TryRecord(number=1, reason="retries", cause="x", result=line, delay=1.0).model_dump_json())
    write_site(Report([run], cache_runs=True), root / "site")
    return run, root / "site"


@pytest.fixture
def page(chromium_browser: Any) -> Iterator[Any]:
    page = chromium_browser.new_page()
    page.problems = []
    page.on("pageerror", lambda e: page.problems.append(str(e)))
    yield page
    assert not page.problems
    page.close()


#: What the page's script (app.js) reads from each trajectory element of the page: every step's view, the model
#: calls' series, the system prompt, the count, the notice (the file's path written PATH).
VIEWS = """() => Array.from(document.querySelectorAll("script.trajectory-data"), el => {
  const made = window.agentrigPlots.trajectoryOf(el);
  return {main: made.main, views: made.views, system: made.system, count: made.count,
          notice: made.notice && made.notice.replace(/^.*trajectory.jsonl:/, "PATH:"),
          calls: Object.assign(made.calls, {model_time: made.model_time, tool_time: made.tool_time})};
})"""


def test_the_page_shows_each_step_as_agentrig_reads_it(edge_site: tuple[Path, Path], page: Any) -> None:
    _, site = edge_site
    page.goto((site / "runs/1/e/c.html").as_uri())
    earlier, main = page.evaluate(VIEWS)  # the earlier tries' section comes first in the page
    assert main["main"] and not earlier["main"]
    assert main["views"] == EXPECTED["views"]
    assert main["calls"] == EXPECTED["calls"] and main["system"] == EXPECTED["system"] and main["count"] == EXPECTED["count"]
    assert [main["notice"]] == EXPECTED["notices"]
    assert earlier["views"] == EXPECTED["try_views"] and earlier["count"] == EXPECTED["count"]
    # and drawn: every step in the page, the count, the notice (with the file's path), the system prompt, the try
    assert page.locator("#steps > li.step").count() == 25 and page.locator("#trajectory-count").inner_text() == "25 entries"
    notice = page.locator("#trajectory-notices p.notice").inner_text()
    assert notice.endswith("trajectory.jsonl: line 15 is not JSON (and 1 more such lines); left out")
    assert page.locator("#system-prompt").is_visible() and "12 characters" in page.locator("#system-prompt .count").inner_text()
    assert page.locator("details.try .try-count").text_content() == "25 entries"
    assert page.locator("#step-18-sub > summary").text_content() == "subagent 001-helper: 4 steps"
    assert page.locator("#no-steps").is_hidden()
    assert "</script>" in page.locator("#step-1 pre.text").text_content()  # the hostile text, as text


def test_the_search_reads_each_step_as_agentrig_reads_it(edge_site: tuple[Path, Path], page: Any) -> None:
    _, site = edge_site
    page.goto((site / "search.html").as_uri())
    steps = page.evaluate("""src => new Promise(done => {
        window.agentrigSearch = data => done(data.checkpoints[0]);
        const el = document.createElement("script"); el.src = src; document.head.appendChild(el);
    }).then(c => {
        const T = window.agentrigTrajectory;
        return T.read(c.text, c.bad).steps.map((s, i) => [i + 1, s.kind, T.searchText(s)]);
    })""",
                          (site / "search/1/e.js").as_uri())
    assert steps == EXPECTED["search"]


def _python_fields(step: Any) -> dict[str, Any]:
    """A step read by the Python reader, as the script's step holds it (a timestamp as microseconds since the epoch)."""
    if not hasattr(step, "model_dump"):
        return {"unknown": True, "kind": step.kind}
    data = step.model_dump(mode="json")
    stamp = step.timestamp if step.timestamp.tzinfo else step.timestamp.replace(tzinfo=timezone.utc)
    data["timestamp"] = (stamp - datetime(1970, 1, 1, tzinfo=timezone.utc)) // _MICROSECOND
    return data


_MICROSECOND = datetime(1970, 1, 1, 0, 0, 0, 1) - datetime(1970, 1, 1)
#: Values of each checked type, some valid, some not: the Python reader decides which.
_VALUES = {
    "exit_code": [3, 3.0, 3.5, "3", " 3 ", "3.0", True, "1e3", 1e3, None, "0x10", "1_000", 1e20, [], "x"],
    "elapsed": [1, "1.5", True, "1e3", None, " 2 ", "x", {}, -0.0],
    "is_error": [True, 1, 0, "true", "yes", "on", "1", 2, 1.0, "True", "t", "y", "off", "no", "n", "f", None, "maybe"],
    "tool": ["a", 1, True, None],
    "timestamp": ["2024-01-01T00:00:00Z", "2024-01-01T00:00:00.123456+02:00", 1700000000, 1700000000000, "1700000000",
                  "2024-01-01", "2024-01-01 00:00:00Z", "2024-01-01T00:00Z", 1.5, "2024-01-01T00:00:00.1234567Z",
                  "2024-01-01t00:00:00z", "2024-02-30T00:00:00Z", "yesterday", "2024-01-01T25:00:00Z", "2024-01-01T00:00:00-0530"],
    "metadata": [{}, [], "x", None, {"a": 1}],
    "arguments": [{}, "text", [], None, 5],
}


def test_step_fields_are_read_as_the_python_reader_reads_them(page: Any, tmp_path: Path) -> None:
    page.goto("about:blank")
    page.add_script_tag(path=str(ASSET))
    lines = [json.dumps({"kind": "tool_use", "tool": "t", "timestamp": "2024-01-01T00:00:00Z", field: value})
             for field, values in _VALUES.items() for value in values]
    lines += [json.dumps({"kind": "llm_call", "model": "m", "usage": usage, "timestamp": 0})
              for usage in ({"input": "7", "output": 2.0}, {"input": 1, "surplus": 2}, None, {"input": -1}, [])]
    lines += [json.dumps({"kind": "llm_call", "model": "m", "timestamp": 0, "sent": sent})
              for sent in ([{"role": "user", "extra": 1}], [{"content": "x"}], [{"role": "tool", "tool_calls": [{"name": "n"}]}], "x")]
    path = tmp_path / "trajectory.jsonl"
    path.write_text("\n".join(lines) + "\n")
    python, _ = read_steps(path)
    script = page.evaluate("text => window.agentrigTrajectory.read(text, []).steps", "\n".join(lines))
    assert len(script) == len(python) == len(lines)
    for line, mine, theirs in zip(lines, script, python, strict=True):
        want = _python_fields(theirs)
        if mine.get("unknown"):
            assert want == {"unknown": True, "kind": mine["kind"]}, line
            continue
        mine["timestamp"] = mine.pop("time")
        assert {k: v for k, v in mine.items() if k in want} == want, line


def test_numbers_and_json_are_written_as_python_writes_them(page: Any) -> None:
    from agentrig.formatting import money, tokens_text

    page.goto("about:blank")
    page.add_script_tag(path=str(ASSET))
    values = [0.0, -0.0, 0.125, 0.375, 2.675, 1.05, 0.5, 1.5, 2.5, -2.5, 0.045, 1e-7, 123456.785, 9.995, 1e21, 1.23e22,
              0.000125, 3.14159, 999.95, 1e-300, 5e-324, 1e16, 2.0 ** 53 + 2]
    digits = [1, 2, 3, 4, 6]
    got = page.evaluate("""([values, digits]) => values.map(v => digits.map(d => window.agentrigTrajectory.fixed(v, d)))""",
                        [values, digits])
    assert got == [[f"{v:.{d}f}" for d in digits] for v in values]
    counts = [0, 999, 1000, 1049, 1050, 999949, 999950, 1000000, 123456789]
    assert page.evaluate("c => c.map(n => window.agentrigTrajectory.tokens(n))", counts) == [tokens_text(c) for c in counts]
    costs = [None, 0.0, 0.000125, 1.0000005, 12.3456785]
    assert page.evaluate("c => c.map(v => window.agentrigTrajectory.money(v, 6))", costs) == [money(c, 6) for c in costs]
    documents = [{"a": [1, 2.5, None, True, False], "é": "\u2028\x7f\x01\"\\", "n": {"x": 1e-7, "y": 12345.678, "z": []}},
                 [], {}, "𝄞", 0.1, [[[]]], {"k": {}}]
    for indent in (None, 2):
        for ascii_ in (True, False):
            got = page.evaluate("([d, i, a]) => d.map(x => window.agentrigTrajectory.dumps(x, i, a))", [documents, indent, ascii_])
            assert got == [json.dumps(d, indent=indent, ensure_ascii=ascii_) for d in documents]


def test_counts_and_an_empty_trajectory(page: Any, tmp_path: Path) -> None:
    from agentrig.view.render import Report
    from agentrig.view.site import write_site

    run = write_run(tmp_path / "run", {"p": [CheckpointPlan("one", calls=0), CheckpointPlan("none", calls=0)]})
    (run / "p/none/trajectory.jsonl").write_text("")
    write_site(Report([run], cache_runs=True), tmp_path / "site")
    page.goto((tmp_path / "site/runs/1/p/one.html").as_uri())
    assert page.locator("#trajectory-count").inner_text() == "1 entry" and page.locator("#no-steps").is_hidden()
    assert page.locator("#system-prompt").is_hidden()  # no model call recorded one
    page.goto((tmp_path / "site/runs/1/p/none.html").as_uri())
    assert page.locator("#trajectory-count").inner_text() == "0 entries"
    assert page.locator("#no-steps").inner_text() == "No step recorded."


def test_lines_nested_too_deeply_are_named_not_drawn(page: Any, tmp_path: Path) -> None:
    from agentrig.view.render import Report
    from agentrig.view.site import write_site

    run = write_run(tmp_path / "run", {"p": [CheckpointPlan("c", calls=1)]})
    deep_list, deep_step = "[" * 100_000 + "]" * 100_000, json.dumps({"kind": "newer", "x": json.loads("[" * 70 + "]" * 70)})
    with (run / "p/c/trajectory.jsonl").open("a") as trajectory:
        trajectory.write(f"{deep_list}\n{deep_step}\n")
    python, notices = read_steps(run / "p/c/trajectory.jsonl")
    write_site(Report([run], cache_runs=True), tmp_path / "site")
    page.goto((tmp_path / "site/runs/1/p/c.html").as_uri())
    assert page.locator("#trajectory-count").inner_text() == f"{len(python)} entries"
    (notice,) = page.locator("#trajectory-notices p.notice").all_inner_texts()
    assert notice == notices[0] and "is nested too deeply (and 1 more such lines)" in notice
