"""JSON embedded in the report's pages (the plot data) against values from a run directory that try to end
the ``<script>`` element or pull the rest of the page into it: a model name ``<!--<script>`` in ``run.json``.

The run is a real one (``agentrig run`` of the greeter example, its replies replayed from a file whose name
carries the payload, so ``run.json`` records the model as ``replay/.../<!--<script>.jsonl``); the page is
served by the real server, and read in Debian's chromium when it is there."""

from __future__ import annotations

import json
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.request import urlopen

import pytest

from agentrig.cli import main

REPO = Path(__file__).resolve().parents[2]
GREETER = REPO / "examples" / "greeter"
PAYLOAD = "<!--<script>"
PLOT_DATA = re.compile(r'<script type="application/json" id="plot-data">(.*?)</script>', re.DOTALL)
RESULTS_DATA = re.compile(r'<script type="application/json" id="results-data">(.*?)</script>', re.DOTALL)


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run of two checkpoints whose ``run.json`` names the model ``replay/.../<!--<script>.jsonl``."""
    root = tmp_path_factory.mktemp("hostile")
    replies = root / f"{PAYLOAD}.jsonl"
    shutil.copyfile(GREETER / "replay.jsonl", replies)
    out = root / "run"
    assert main(["run", str(GREETER), "--agent", "react", "--model", f"replay/{replies}", "--output", str(out), "-q"]) == 0
    assert PAYLOAD in json.loads((out / "run.json").read_text())["identity"]["model"]["id"]
    return out


@pytest.fixture
def served_url(hostile_run: Path) -> Iterator[str]:
    from agentrig.view.render import Report
    from agentrig.view.server import make_server, url_of

    server = make_server(Report([hostile_run]))
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield url_of(server)
    finally:
        server.shutdown()
        server.server_close()


def plot_data(html: str) -> str:
    """The text of the page's plot-data element, up to the first ``</script>``."""
    found = PLOT_DATA.search(html)
    assert found is not None
    return found.group(1)


def test_model_name_cannot_break_out_of_the_plot_data_element(hostile_run: Path, served_url: str,
                                                               tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    served = urlopen(served_url + "index.html", timeout=10).read().decode()
    assert main(["view", str(hostile_run), "--out", str(tmp_path / "site")]) == 0
    capsys.readouterr()
    written = (tmp_path / "site" / "index.html").read_text()
    for html in (served, written):
        data = plot_data(html)
        assert not set(data) & set("<>&"), data  # nothing in it an HTML parser acts on inside a script element
        runs = json.loads(data)["runs"]
        assert len(runs) == 1 and runs[0].startswith("[1] react · replay:/") and runs[0].endswith(f"{PAYLOAD}.jsonl")
        assert "&lt;!--&lt;script&gt;" in html  # the run's header shows the name, escaped as text
        results = RESULTS_DATA.search(html)  # the results table's data, the page's other JSON element
        assert results is not None and not set(results.group(1)) & set("<>&")
        assert [row[:2] for row in json.loads(results.group(1))] == [["greeter", "greet_function"], ["greeter", "command_line"]]
    checkpoint = urlopen(served_url + "runs/1/greeter/greet_function.html", timeout=10).read().decode()
    assert not set(plot_data(checkpoint)) & set("<>&")


@pytest.mark.chromium
@pytest.mark.xdist_group("chromium")
def test_model_name_leaves_both_index_plots_and_the_table_in_a_browser(served_url: str, chromium_browser: Any,
                                                                       screenshots: Path) -> None:
    page = chromium_browser.new_page(viewport={"width": 1280, "height": 1000})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        assert page.goto(served_url).status == 200
        drawn = page.evaluate(
            """() => ['#plot-pass-rate', '#plot-cost'].filter(sel => {
                 const c = document.querySelector(sel + ' canvas'); if (!c || !c.width) return false;
                 const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                 let ink = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) ink++; return ink > 500; })"""
        )
        assert drawn == ["#plot-pass-rate", "#plot-cost"]
        assert page.locator("#results tbody tr").count() == 2
        assert page.locator(".run h2").first.inner_text().endswith(f"{PAYLOAD}.jsonl")
        # plot data, results data, uPlot, trajectory.js, app.js, quality.js, search.js
        assert page.evaluate("() => document.querySelectorAll('script').length") == 7
        page.screenshot(path=str(screenshots / "security-model-name-index.png"), full_page=True)
        assert errors == []
    finally:
        page.close()
