"""The report's plots and texts in Debian's headless chromium, checked as they are drawn: axis ranges on
constant and all-zero data, axis titles clear of their tick labels, short legends, long titles inside their
card, values on hover, the time split within the checkpoint's time, counts in the right number, and a run
in progress whose clock goes on. Screenshots are kept under test-artifacts/screenshots/."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from agentrig.cli import main
from agentrig.testing.runs import CheckpointPlan, write_run

pytestmark = [pytest.mark.chromium, pytest.mark.xdist_group("chromium")]  # one browser for the module

LONG_PATH = "/" + "/".join(["very-long-directory-name"] * 6) + "/replay.jsonl"
LONG_MODEL = f"replay:{LONG_PATH}"  # the label of a replay file as the model


@pytest.fixture
def page(chromium_browser: Any) -> Iterator[Any]:
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    page.problems = []
    page.on("console", lambda m: page.problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: page.problems.append(f"page error: {e}"))
    yield page
    context.close()


def oracle_run(tmp_path: Path) -> Path:
    """A real run of the oracle agent on a two-checkpoint problem: both pass (a constant pass rate), nothing
    costs anything (all-zero costs), no model is called, each trajectory holds one entry and 0 steps."""
    problem = tmp_path / "tiny"
    for name in ("one", "two"):
        (problem / f"solution_{name}").mkdir(parents=True)
        (problem / f"solution_{name}" / f"{name}.txt").write_text(name)
        (problem / f"{name}.md").write_text(f"write {name}.txt")
    (problem / "problem.yaml").write_text(
        "name: tiny\ncheckpoints:\n"
        + "".join(f"  - name: {n}\n    prompt: {n}.md\n    solution: solution_{n}\n    test: test -f {n}.txt\n"
                  for n in ("one", "two"))
    )
    out = tmp_path / "run"
    assert main(["run", str(problem), "--agent", "oracle", "--output", str(out), "-q"]) == 0
    return out


def axes(page: Any, selector: str) -> list[dict[str, Any]]:
    """The value axes of a drawn plot: title, tick labels, width (``data-axes``, written as the plot is drawn)."""
    page.wait_for_function("sel => document.querySelector(sel).dataset.axes", arg=selector)
    return json.loads(page.locator(selector).get_attribute("data-axes"))


def tick_widths_fit(page: Any, axis: dict[str, Any]) -> bool:
    """Whether the widest tick label, measured in the page's font, fits the axis beside its title."""
    widest = page.evaluate(
        """a => { const c = document.createElement('canvas').getContext('2d'); c.font = a.font;
                  return Math.max(0, ...a.ticks.map(t => c.measureText(t).width)); }""", axis)
    return axis["tick"] + axis["gap"] + widest <= axis["size"]


def not_clipped(page: Any, selector: str) -> None:
    """Every element matched shows all of its text: nothing runs past its box or past its card."""
    for box in page.locator(selector).all():
        assert box.evaluate("e => e.scrollWidth <= e.clientWidth"), box.inner_text()
        card = box.evaluate("""e => { const c = e.closest('.card').getBoundingClientRect(), b = e.getBoundingClientRect();
                                      return b.left >= c.left && b.right <= c.right; }""")
        assert card, box.inner_text()


def test_constant_and_zero_data(tmp_path: Path, page: Any, screenshots: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = oracle_run(tmp_path)
    out = tmp_path / "report"
    assert main(["view", str(run), "--out", str(out)]) == 0
    capsys.readouterr()
    page.goto((out / "index.html").as_uri())
    pass_rate = axes(page, "#plot-pass-rate")[0]
    assert pass_rate["ticks"][0] == "0%" and pass_rate["ticks"][-1] == "100%"  # 100% everywhere: 0-100%, not 0-200%
    cost = axes(page, "#plot-cost")[0]
    assert cost["ticks"][0] == "$0.000" and cost["ticks"][-1] == "$0.010"  # all zero: not $0-$100.000
    assert all(tick_widths_fit(page, a) for a in (pass_rate, cost))
    assert "0 steps" in page.locator("#results tbody tr").first.inner_text()
    page.screenshot(path=str(screenshots / "plots-constant-index.png"), full_page=True)
    page.locator("#results tbody tr").first.locator("a").click()
    page.wait_for_load_state()
    assert page.locator(".trajectory h2").inner_text() == "Trajectory 1 entry"
    assert page.locator("#plot-calls").inner_text() == "no model call recorded"  # finished: not "no data yet"
    legend = page.locator("#plot-time .bar-legend").inner_text()
    # under a second: to the hundredth (the oracle's tool time is measured: 0.01 s on a loaded machine)
    assert re.match(r"model 0\.00s · tools 0\.\d\ds · other agent", legend), legend
    page.screenshot(path=str(screenshots / "plots-oracle-checkpoint.png"), full_page=True)
    assert page.problems == []


def test_long_titles_short_legends_and_values_on_hover(tmp_path: Path, page: Any, screenshots: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    plans = {"alpha": [CheckpointPlan("first", "passed"), CheckpointPlan("second", "failed"), CheckpointPlan("third")],
             "beta": [CheckpointPlan("first", "passed"), CheckpointPlan("second", "passed")]}
    runs = [write_run(tmp_path / name, plans, status="completed") for name in ("one", "two")]
    record = json.loads((runs[1] / "run.json").read_text())
    record["identity"]["model"] = {"id": f"replay/{LONG_PATH}", "provider": "replay", "name": LONG_PATH}
    (runs[1] / "run.json").write_text(json.dumps(record))
    out = tmp_path / "report"
    assert main(["view", *map(str, runs), "--out", str(out)]) == 0
    capsys.readouterr()
    page.goto((out / "index.html").as_uri())
    not_clipped(page, ".run h2")
    not_clipped(page, ".run .meta")
    assert page.locator(".run h2").nth(1).get_attribute("title") == f"[2] react · {LONG_MODEL}"
    items = page.locator("#plot-cost .legend-item")
    assert items.all_inner_texts() == ["[1] react · openai/gpt-4o-mini", "[2] react · replay.jsonl"]
    assert items.nth(1).get_attribute("title") == f"[2] react · {LONG_MODEL}"
    for item in items.all():  # one line each, inside the card
        assert item.bounding_box()["height"] < 20
    not_clipped(page, "#plot-cost .legend-item span")
    for selector in ("#plot-pass-rate", "#plot-cost"):
        assert all(tick_widths_fit(page, a) for a in axes(page, selector))
    assert axes(page, "#plot-pass-rate")[0]["ticks"][-1] == "100%"
    over = page.locator("#plot-cost .u-over")
    box = over.bounding_box()
    page.mouse.move(box["x"] + 2, box["y"] + box["height"] / 2)  # over checkpoint 1
    tip = page.locator("#plot-cost .tip")
    tip.wait_for(state="visible")
    lines = tip.inner_text().splitlines()
    assert lines[0] == "checkpoint 1"
    assert lines[1].startswith("[1] react · openai/gpt-4o-mini: $0.000") and lines[2].startswith("[2] react · replay.jsonl: $")
    tip_box = tip.bounding_box()
    chart = page.locator("#plot-cost").bounding_box()
    assert chart["x"] <= tip_box["x"] and tip_box["x"] + tip_box["width"] <= chart["x"] + chart["width"]  # inside the card
    page.screenshot(path=str(screenshots / "plots-hover-long-titles.png"), full_page=True)
    page.mouse.move(0, 0)
    tip.wait_for(state="hidden")
    page.goto((out / "runs/1/alpha/first.html").as_uri())
    calls = axes(page, "#plot-calls")
    assert [a["label"] for a in calls] == ["tokens", "USD"]
    assert all(tick_widths_fit(page, a) for a in calls)
    assert calls[0]["ticks"][0] == "0" and calls[1]["ticks"][0] == "$0.0000"
    over = page.locator("#plot-calls .u-over")
    box = over.bounding_box()
    page.mouse.move(box["x"] + box["width"] - 2, box["y"] + box["height"] / 2)  # over the last call
    page.locator("#plot-calls .tip").wait_for(state="visible")
    assert page.locator("#plot-calls .tip").inner_text().splitlines() == [
        "model call 3", "input tokens: 1.6k", "output tokens: 50", "cost so far: $0.000576"]
    page.screenshot(path=str(screenshots / "plots-checkpoint-hover.png"), full_page=True)
    assert page.problems == []


def test_time_split_never_exceeds_the_checkpoint(tmp_path: Path, page: Any, screenshots: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A trajectory whose calls record more time than the agent took (latencies copied from another run by
    an older replay): the bar's parts add up to the checkpoint's time, and the page says they were scaled."""
    run = write_run(tmp_path / "run", {"p": [CheckpointPlan("only", "passed", calls=1)]}, status="completed")
    lines = (run / "results.jsonl").read_text().splitlines()
    line = json.loads(lines[0])
    line.update(agent_elapsed=0.2, evaluation_elapsed=0.1, elapsed=0.3)
    (run / "results.jsonl").write_text(json.dumps(line) + "\n")
    steps = [json.loads(s) for s in (run / "p/only/trajectory.jsonl").read_text().splitlines()]
    for step in steps:
        if step["kind"] == "llm_call":
            step["latency"] = 0.7
    (run / "p/only/trajectory.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    out = tmp_path / "report"
    assert main(["view", str(run), "--out", str(out)]) == 0
    capsys.readouterr()
    page.goto((out / "runs/1/p/only.html").as_uri())
    legend = page.locator("#plot-time .bar-legend").inner_text()
    parts = {name: float(value.rstrip("s")) for name, value in (p.rsplit(" ", 1) for p in legend.split(" · "))}
    assert parts["total"] == pytest.approx(0.3, abs=0.01)
    assert parts["model"] + parts["tools"] + parts["other agent"] <= 0.2 + 0.01
    assert "model and tool time as recorded (0.70s + 0.25s) exceed the agent's 0.20s" in page.locator(".bar-note").inner_text()
    widths = page.locator("#plot-time .bar .seg").evaluate_all("els => els.map(e => e.getBoundingClientRect().width)")
    assert sum(widths) <= page.locator("#plot-time .bar").bounding_box()["width"] + 1
    page.screenshot(path=str(screenshots / "plots-time-split.png"), full_page=True)
    assert page.problems == []


@pytest.fixture
def served() -> Iterator[Any]:
    servers = []

    def start(run_dir: Path) -> str:
        from agentrig.view.render import Report
        from agentrig.view.server import make_server, url_of

        server = make_server(Report([run_dir]))
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(server)
        return url_of(server)

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_live_index_clock_goes_on(tmp_path: Path, page: Any, served: Any, screenshots: Path) -> None:
    """run.json is rewritten only now and then (its elapsed was 0.1 s): the live index counts from the start."""
    run = write_run(tmp_path / "live", {"alpha": [CheckpointPlan("first"), CheckpointPlan("second", "interrupted")]},
                    live_pid=os.getpid())
    record = json.loads((run / "run.json").read_text())
    started = datetime.now(timezone.utc) - timedelta(seconds=30)
    record.update(started=started.isoformat().replace("+00:00", "Z"), elapsed=0.1)
    (run / "run.json").write_text(json.dumps(record))
    page.goto(served(run))
    clock = page.locator(".run .clock")
    first = float(clock.inner_text().rstrip("s"))
    assert 29 <= first < 120
    time.sleep(2.2)
    assert float(clock.inner_text().rstrip("s")) >= first + 1.5
    page.screenshot(path=str(screenshots / "plots-live-index.png"), full_page=True)
    assert page.problems == []
