"""Code quality in the report, drawn in Debian's headless chromium: per-run totals and the runs side by side
on the index, the erosion plots of each problem (each figure across checkpoints, one line per run, drawn
with the report's plotting code and inside their cards), the functions that grew most on the problem and
checkpoint pages; a run without ``quality.json`` adds nothing, a broken one is one notice naming it.
Screenshots are kept under test-artifacts/screenshots/."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentrig.cli import main
from agentrig.testing.quality_runs import measured_run
from agentrig.view.render import Report


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    root = tmp_path_factory.mktemp("quality-view")
    runs = [measured_run(root / "a", 3, sloppy=True), measured_run(root / "b", 1)]
    out = root / "report"
    assert main(["view", *map(str, runs), "--out", str(out)]) == 0
    return out, runs


@pytest.fixture
def page(chromium_browser: Any) -> Iterator[Any]:
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    page.problems = []
    page.on("console", lambda m: page.problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: page.problems.append(f"page error: {e}"))
    yield page
    context.close()


def drawn(page: Any, selector: str) -> list[dict[str, Any]]:
    """The value axes of a drawn plot (``data-axes``, written by app.js as it draws)."""
    page.wait_for_function("sel => document.querySelector(sel) && document.querySelector(sel).dataset.axes", arg=selector)
    return json.loads(page.locator(selector).get_attribute("data-axes"))


def inside_cards(page: Any) -> bool:
    """Whether every erosion plot's canvas lies inside its card (a plot drawn before its grid was full did not)."""
    return page.evaluate("""() => [...document.querySelectorAll('#quality-plots .card')].every(card => {
        const c = card.getBoundingClientRect(), u = card.querySelector('.uplot').getBoundingClientRect();
        return u.left >= c.left && u.right <= c.right; })""")


@pytest.mark.chromium
@pytest.mark.xdist_group("chromium")
def test_index_erosion_plots_one_line_per_run(report: tuple[Path, list[Path]], page: Any, screenshots: Path) -> None:
    out, _ = report
    assert (out / "assets" / "quality.js").is_file()
    page.goto((out / "index.html").as_uri())
    cards = page.locator(".run .quality-line").all_inner_texts()
    assert len(cards) == 2 and cards[0].startswith("code quality at the last checkpoint of 2 problems")
    assert "max CC: 8 (+5)" in cards[0] and "max CC: 4 (+1)" in cards[1]
    rows = {r.locator("td").first.inner_text(): r.locator("td").all_inner_texts()[1:]
            for r in page.locator(".quality-table tbody tr").all()}
    assert rows["max CC"] == ["8 (+5)", "4 (+1)", "-4"] and rows["duplicated lines"] == ["16 (+16)", "0 (±0)", "-16"]
    assert page.locator("#quality-plots").get_attribute("data-problem") == "erosion"
    titles = page.locator("#quality-plots .card h3").all_inner_texts()
    assert titles[:4] == ["lines of code", "lint violations", "mean CC", "max CC"]
    cc = drawn(page, "#quality-plot-cc_max")[0]
    assert cc["label"] == "max CC" and cc["ticks"][0] == "0"
    assert "erosion (SlopCodeBench)" in titles and "verbosity (SlopCodeBench)" not in titles  # no ast-grep rules named
    assert drawn(page, "#quality-plot-erosion")[0]["label"] == "erosion (SlopCodeBench)"
    legend = page.locator("#quality-plot-cc_max .legend-item").all_inner_texts()
    assert legend == ["[1] react · openai/gpt-4o-mini", "[2] react · openai/gpt-4o-mini"]
    page.locator("#quality-plot-cc_max").scroll_into_view_if_needed()
    over = page.locator("#quality-plot-cc_max .u-over").bounding_box()
    page.mouse.move(over["x"] + over["width"] - 2, over["y"] + over["height"] / 2)  # over checkpoint 3
    tip = page.locator("#quality-plot-cc_max .tip")
    tip.wait_for(state="visible")
    assert tip.inner_text().splitlines() == ["checkpoint 3", "[1] react · openai/gpt-4o-mini: 8",
                                             "[2] react · openai/gpt-4o-mini: 4"]
    assert inside_cards(page)
    page.screenshot(path=str(screenshots / "quality-index.png"), full_page=True)
    page.select_option("#quality-problem", "steady")
    page.wait_for_function("() => document.querySelector('#quality-plots').dataset.problem === 'steady'")
    drawn(page, "#quality-plot-loc")
    assert page.locator("#quality-plot-loc .legend-item").count() == 2 and inside_cards(page)
    page.set_viewport_size({"width": 900, "height": 1000})  # redrawn on resize, still inside the cards
    page.wait_for_timeout(400)
    assert page.locator("#quality-plots").get_attribute("data-problem") == "steady" and inside_cards(page)
    assert page.problems == []


@pytest.mark.chromium
@pytest.mark.xdist_group("chromium")
def test_problem_and_checkpoint_pages_show_the_worst_growing_functions(report: tuple[Path, list[Path]], page: Any,
                                                                       screenshots: Path) -> None:
    out, _ = report
    page.goto((out / "runs/1/erosion.html").as_uri())
    assert drawn(page, "#quality-plot-cc_mean")[0]["label"] == "mean CC"
    assert page.locator("#quality-plot-cc_mean .legend-item").count() == 2  # run [2] ran the problem too
    assert page.locator("#quality-problem").count() == 0 and inside_cards(page)
    first, second, third = page.locator(".checkpoint-card").all()
    assert first.locator(".quality-growth").count() == 0  # nothing before it
    assert second.locator(".quality-growth caption").inner_text() == "functions that grew most since checkpoint_1"
    assert second.locator(".quality-growth tbody tr").first.locator("td").all_inner_texts() == [
        "app.py:parse", "2 → 5 (+3)", "4 → 10 (+6)"]
    assert third.locator(".quality-growth tbody tr").first.locator("td").all_inner_texts()[1] == "5 → 8 (+3)"
    page.screenshot(path=str(screenshots / "quality-problem.png"), full_page=True)
    page.goto((out / "runs/1/erosion/checkpoint_3.html").as_uri())
    figures = {r.locator("td").first.inner_text(): r.locator("td").all_inner_texts()[1:]
               for r in page.locator(".quality-figures tbody tr").all()}
    assert figures["max CC"] == ["8", "+3"] and figures["duplicated lines"] == ["16", "+16"]
    assert page.locator(".quality .count").inner_text() == "change since checkpoint_2"
    assert page.locator(".quality-growth tbody td").first.inner_text() == "app.py:parse"
    page.screenshot(path=str(screenshots / "quality-checkpoint.png"), full_page=True)
    assert page.problems == []


def rendered(runs: list[Path], path: str) -> str:
    response = Report(runs).render(path)
    assert response is not None, path
    return response.body.decode()


def test_no_quality_json_adds_nothing_and_a_broken_one_is_a_notice(tmp_path: Path) -> None:
    bare = measured_run(tmp_path / "bare", 2, measure=False)
    index = rendered([bare], "index.html")
    assert 'id="quality"' not in index and "quality-line" not in index
    problem = rendered([bare], "runs/1/erosion.html")
    assert 'id="quality"' not in problem and "quality-growth" not in problem
    assert 'id="quality"' not in rendered([bare], "runs/1/erosion/checkpoint_2.html")
    run = measured_run(tmp_path / "broken", 2, steady=False)
    broken = run / "erosion" / "checkpoint_2" / "quality.json"
    broken.write_text("[1, 2")
    index = rendered([run], "index.html")
    assert index.count("code-quality figures are left out") == 1 and str(broken) in index
    page = rendered([run], "runs/1/erosion/checkpoint_2.html")
    assert "not valid JSON" in page and "quality-figures" not in page
