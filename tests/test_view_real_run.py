"""A real run (the react agent on the greeter example, replayed offline) read back by every reader:
``agentrig view --out`` opened in Debian's chromium, ``agentrig export`` in both formats."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentrig.report.atif import AtifTrajectory

REPO = Path(__file__).resolve().parents[1]
AGENTRIG = str(Path(sys.executable).with_name("agentrig"))


@pytest.fixture(scope="module")
def greeter_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("real") / "run"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "AGENTRIG_"))}
    proc = subprocess.run(
        [AGENTRIG, "run", "examples/greeter", "--agent", "react", "--model", "replay/examples/greeter/replay.jsonl",
         "--output", str(out), "-q"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return out


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([AGENTRIG, *args], capture_output=True, text=True, timeout=120)


def test_export_of_a_real_run(greeter_run: Path, tmp_path: Path) -> None:
    assert cli("export", str(greeter_run), "--format", "atif", "-o", str(tmp_path / "atif")).returncode == 0
    for checkpoint in ("greet_function", "command_line"):
        atif = AtifTrajectory.model_validate_json((tmp_path / "atif/greeter" / f"{checkpoint}.json").read_text())
        source = [json.loads(x) for x in (greeter_run / "greeter" / checkpoint / "trajectory.jsonl").read_text().splitlines()]
        calls = [s for s in source if s["kind"] == "llm_call"]
        tools = [s for s in source if s["kind"] == "tool_use"]
        assert len([s for s in atif.steps if s.source == "agent"]) == len(calls)
        assert [c.tool_call_id for s in atif.steps for c in s.tool_calls or []] == [t["tool_call_id"] for t in tools]
        assert atif.final_metrics.total_cost_usd == pytest.approx(sum(c["cost"] for c in calls))
        assert atif.extra["agentrig"]["passed"] is True
    proc = cli("export", str(greeter_run), "--format", "jsonl", "-o", "-")
    records = [json.loads(x) for x in proc.stdout.splitlines()]
    assert len(records) == sum(len(p.read_text().splitlines()) for p in greeter_run.glob("greeter/*/trajectory.jsonl"))


@pytest.mark.chromium
@pytest.mark.xdist_group("chromium")  # the worker that already runs the browser
def test_static_report_of_a_real_run_in_chromium(greeter_run: Path, tmp_path: Path, chromium_browser: Any,
                                                 screenshots: Path) -> None:
    assert cli("view", str(greeter_run), "--out", str(tmp_path / "report")).returncode == 0
    page = chromium_browser.new_page(viewport={"width": 1280, "height": 1000})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((tmp_path / "report/index.html").as_uri())
    assert [t.split()[0] for t in page.locator("#results tbody tr td:nth-child(3)").all_inner_texts()] == ["passed", "passed"]
    page.locator("a", has_text="passed").nth(1).click()
    page.wait_for_load_state()
    lines = (greeter_run / "greeter/command_line/trajectory.jsonl").read_text().splitlines()
    assert page.locator("#steps > li.step").count() == len(lines)
    assert "greet.py" in page.locator("ul.files").inner_text()
    assert page.locator(".patch .d-add").count() > 0
    legend = page.locator("#plot-time .bar-legend").inner_text()  # the time split: its parts add up to its total
    parts = {name: float(value.rstrip("s")) for name, value in (p.rsplit(" ", 1) for p in legend.split(" · "))}
    total = parts.pop("total")
    assert sum(parts.values()) == pytest.approx(total, abs=1e-9)  # shown parts rounded to add up to the shown total
    line = next(json.loads(x) for x in (greeter_run / "results.jsonl").read_text().splitlines() if "command_line" in x)
    assert total == pytest.approx(line["elapsed"], abs=0.05)
    # each shown part is within a tenth of its own time (rounded with the others to the shown total)
    assert parts["model"] + parts["tools"] + parts["other agent"] == pytest.approx(line["agent_elapsed"], abs=0.35)
    page.screenshot(path=str(screenshots / "real-run-checkpoint.png"), full_page=True)
    assert errors == []
    page.close()


def test_replayed_calls_take_their_own_time(greeter_run: Path) -> None:
    """The replay records each call's latency as what it took in this run: the recorded calls took up to 0.6 s,
    a replayed one takes about nothing, and no checkpoint's model time exceeds its agent's time."""
    recorded = [json.loads(x)["latency"] for x in (REPO / "examples/greeter/replay.jsonl").read_text().splitlines()]
    assert max(recorded) > 0.5
    results = {json.loads(x)["checkpoint"]: json.loads(x) for x in (greeter_run / "results.jsonl").read_text().splitlines()}
    latencies = []
    for checkpoint, line in results.items():
        steps = [json.loads(x) for x in (greeter_run / "greeter" / checkpoint / "trajectory.jsonl").read_text().splitlines()]
        calls = [s["latency"] for s in steps if s["kind"] == "llm_call"]
        assert sum(calls) <= line["agent_elapsed"]
        latencies += calls
    assert len(latencies) == len(recorded) and latencies != recorded and max(latencies) < 0.5
