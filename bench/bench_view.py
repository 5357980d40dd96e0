"""Benchmark: the report of a synthetic run of 1,000 checkpoints x 50 steps, and the first screen of 10,000.

Builds the runs with ``agentrig.testing.runs.synthetic_run``, then measures (median of ``--runs``):

- the time ``agentrig view RUN --out DIR`` takes to write the static report (every checkpoint page)
  against ``agentrig show RUN --json`` (reading the same run), the two measured side by side, one after
  the other in each round; the ratio of the CPU times (the process's and its helpers'), of the medians
  and of the minimums (the least disturbed by other work on the machine). Target: at most 3x;
- time to first screen in Debian's headless chromium (Playwright over /usr/bin/chromium), from navigation
  start: the first contentful paint, the first screen drawn (the page's ``agentrig:first-screen`` mark:
  run cards, plots and the first rows of the results table in place) and the load event, for the static
  index opened from disk, the served index (``agentrig view`` on 127.0.0.1) and a served checkpoint page,
  at ``--checkpoints`` and at ``--large`` checkpoints (10,000: its run has ``--large-steps`` steps per
  checkpoint, as the index reads no trajectory, and only its index and assets are written), and a served
  problem page. Target: under 1 s;
- search across the whole run in the static report (search.html, every problem's shard loaded from
  disk): the time from the search to its last result, and the shards' size.

    hatch run hatch-test.all:python bench/bench_view.py [--checkpoints 1000] [--steps 50] [--large 10000]
        [--large-steps 5] [--runs 5]

In the test environment: it uses the test kit (pytest) and Playwright.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "packages" / "core" / "src"))
sys.path.insert(0, str(REPO / "tests" / "fixtures" / "scripted-agent" / "src"))
PYCACHE = REPO / ".cache" / "bench-pycache"

from agentrig_scripted.testkit import bytecode_env  # noqa: E402

from agentrig.testing.browser import CHROMIUM, FLAGS  # noqa: E402
from agentrig.testing.runs import synthetic_run  # noqa: E402

AGENTRIG = str(Path(sys.executable).with_name("agentrig"))
SCREEN = """() => new Promise(done => new PerformanceObserver((list, observer) => {
    const p = list.getEntriesByName('first-contentful-paint')[0];
    if (!p) return;
    observer.disconnect();
    const n = performance.getEntriesByType('navigation')[0];
    const m = performance.getEntriesByName('agentrig:first-screen')[0];
    done([p.startTime / 1000, m ? m.startTime / 1000 : null, n.loadEventEnd / 1000]);
}).observe({type: 'paint', buffered: true}))"""


@contextmanager
def no_fsync() -> Iterator[None]:
    """Fixtures need no durability: with an fsync per file, 10,000 checkpoints took minutes to build."""
    real = os.fsync
    os.fsync = lambda fd: None
    try:
        yield
    finally:
        os.fsync = real


def build(path: Path, checkpoints: int, steps: int) -> Path:
    start = time.perf_counter()
    with no_fsync():
        run = synthetic_run(path, checkpoints=checkpoints, steps=steps)
    count = sum(1 for p in run.glob("*/*/trajectory.jsonl") for _ in p.open())
    print(f"synthetic run: {checkpoints} checkpoints, {count} steps ({count / checkpoints:.0f} per checkpoint),"
          f" built in {time.perf_counter() - start:.1f}s")
    return run


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user and system, the command's and its children's) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def static_against_show(run: Path, root: Path, runs: int) -> Path:
    """The static report's writing time against ``show --json``'s, side by side; the first report written.

    Both run as an installed agentrig does, with compiled bytecode (``testkit.bytecode_env``; where
    ``PYTHONDONTWRITEBYTECODE`` is set, each would compile its modules anew, and ``view`` imports more of them)
    and the report's compiled templates kept: a first round, not counted, makes both."""
    env = bytecode_env(dict(os.environ), PYCACHE)
    timed([AGENTRIG, "show", str(run), "--json"], env)
    timed([AGENTRIG, "view", str(run), "--out", str(root / "warm")], env)
    static, show = [], []
    for i in range(runs):
        show.append(timed([AGENTRIG, "show", str(run), "--json"], env))
        static.append(timed([AGENTRIG, "view", str(run), "--out", str(root / f"site{i}")], env))
    site = root / "site0"
    files = sum(1 for p in site.rglob("*") if p.is_file())
    size = (site / "index.html").stat().st_size
    wall = [s[0] for s in static], [s[0] for s in show]
    cpu = [s[1] for s in static], [s[1] for s in show]
    print(f"static report (agentrig view --out): median {statistics.median(wall[0]):.2f}s (min {min(wall[0]):.2f}s),"
          f" CPU {statistics.median(cpu[0]):.2f}s (min {min(cpu[0]):.2f}s); {files} files, index.html {size / 1024:.0f} KiB")
    print(f"peer, same run, side by side: agentrig show --json: median {statistics.median(wall[1]):.2f}s"
          f" (min {min(wall[1]):.2f}s), CPU {statistics.median(cpu[1]):.2f}s (min {min(cpu[1]):.2f}s)")
    print(f"ratio (target: at most 3x): {statistics.median(cpu[0]) / statistics.median(cpu[1]):.1f}x CPU (medians),"
          f" {min(cpu[0]) / min(cpu[1]):.1f}x CPU (minimums); {statistics.median(wall[0]) / statistics.median(wall[1]):.1f}x wall"
          f" (medians), {min(wall[0]) / min(wall[1]):.1f}x wall (minimums) (on a busy machine the wall times swing; the CPU"
          f" times and the minimums less)")
    return site


def index_only(run: Path, out: Path) -> Path:
    """The static index and its assets (what the first screen loads), without the checkpoint pages."""
    from agentrig.view.paths import ASSETS, INDEX
    from agentrig.view.render import ASSET_FILES, Report
    from agentrig.view.site import _write

    report = Report([run], cache_runs=True)
    start = time.perf_counter()
    for name in ASSET_FILES:
        _write(out, f"{ASSETS}/{name}", report.asset(name).body)
    _write(out, INDEX, report.index().body)
    print(f"static index of {run.name}: written in {time.perf_counter() - start:.2f}s,"
          f" {(out / INDEX).stat().st_size / 1024:.0f} KiB")
    return out


def search_time(page: Any, site: Path) -> float:
    """Seconds from a search of the whole static report to its last result (every shard loaded and scanned)."""
    page.goto((site / "search.html").as_uri())
    start = time.perf_counter()
    page.locator("#search-q").fill("output step 7")
    page.locator("#search-form button").click()
    page.locator("#search-status").get_by_text(" ms").wait_for(timeout=120_000)
    elapsed = time.perf_counter() - start
    page.close()
    return elapsed


def first_screens(browser: Any, targets: dict[str, str], runs: int) -> None:
    """Each target's first contentful paint, first screen and load event (medians)."""
    for url in targets.values():  # warm the browser, and the server's cache of finished pages, once
        page = browser.new_page()
        page.goto(url, wait_until="load")
        page.close()
    results: dict[str, list[tuple[float, float | None, float]]] = {name: [] for name in targets}
    for _ in range(runs):
        for name, url in targets.items():
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.goto(url, wait_until="load")
            results[name].append(tuple(page.evaluate(SCREEN)))
            page.close()
    for name, values in results.items():
        fcp = statistics.median(v[0] for v in values)
        marks = [v[1] for v in values if v[1] is not None]
        screen = f"{statistics.median(marks):.3f}s" if marks else "n/a"
        load = statistics.median(v[2] for v in values)
        print(f"time to first screen, {name}: first contentful paint {fcp:.3f}s, first screen drawn {screen},"
              f" load {load:.3f}s (median of {len(values)})")


def browse(sites: dict[str, tuple[Path, Path]], runs: int) -> None:
    """The first screens of every run's static index and served pages."""
    from playwright.sync_api import sync_playwright

    from agentrig.view.paths import checkpoint_page, problem_page
    from agentrig.view.render import Report
    from agentrig.view.server import make_server, url_of

    servers, targets = [], {}
    for label, (run, site) in sites.items():
        report = Report([run])
        start = time.perf_counter()
        report.render("index.html")  # what the first request of the served index waits for
        print(f"served index, {label}: rendered on its first request in {time.perf_counter() - start:.2f}s (then kept)")
        server = make_server(report)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        url = url_of(server)
        targets[f"static index, {label}"] = (site / "index.html").as_uri()
        targets[f"served index, {label}"] = url
        middle = report.checkpoints()[len(report.checkpoints()) // 2]
        targets[f"served checkpoint, {label}"] = url + checkpoint_page(*middle)
        targets[f"served problem page, {label}"] = url + problem_page(middle[0], middle[1])
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
            first_screens(browser, targets, runs)
            site = next(iter(sites.values()))[1]
            searches = [search_time(browser.new_page(), site) for _ in range(runs)]
            shards = sum(p.stat().st_size for p in (site / "search").rglob("*.js"))
            print(f"search across the run (static, {shards / 2**20:.1f} MiB of shards): median {statistics.median(searches):.2f}s")
            browser.close()
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoints", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--large", type=int, default=10000, help="checkpoints of the run whose first screen is timed too (0: none)")
    parser.add_argument("--large-steps", type=int, default=5)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentrig-bench-view-") as tmp:
        root = Path(tmp)
        run = build(root / "run", args.checkpoints, args.steps)
        sites = {f"{args.checkpoints} checkpoints": (run, static_against_show(run, root, args.runs))}
        if args.large:
            large = build(root / "large", args.large, args.large_steps)
            sites[f"{args.large} checkpoints"] = (large, index_only(large, root / "large-site"))
        browse(sites, args.runs)


if __name__ == "__main__":
    main()
