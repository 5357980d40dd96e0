"""``agentrig view`` without a browser: bad input, the pages a report has, nothing fetched from elsewhere,
long trajectories split into pages, and no view import on the ``agents list`` path."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentrig.cli import main
from agentrig.testing.runs import CheckpointPlan, outcome_run, write_run
from agentrig.view.paths import STEPS_PER_PAGE

#: A page's trajectory element: its lines are read from the problem run's search shard, which the page loads
#: (test_view_trajectory_js.py draws them).
TRAJECTORY_DATA = re.compile(
    r'<ol class="steps" id="steps"><script type="text/x-agentrig-jsonl" class="trajectory-data" data-prefix="step-"'
    r' data-shard="([^"]*)" data-checkpoint="([^"]*)" data-size="(\d+)"(?: data-from="(\d+)" data-to="(\d+)")?></script>'
)
SUBAGENTS_DATA = re.compile(r'<script type="application/json" class="subagents-data">(.*?)</script>')


def shard_data(report: Any, run: int, problem: str) -> Any:
    """The data of a problem run's search shard (``agentrigSearch({...});``), which its checkpoint pages draw from."""
    body = report.render(f"/search/{run}/{problem}.js").body.decode()
    assert body.startswith("agentrigSearch(") and body.endswith(");\n")
    return json.loads(body[len("agentrigSearch("):-len(");\n")])


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("agentrig: error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_view_not_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    assert main(["view", str(tmp_path / "empty"), "--no-open"]) == 2
    assert "is not a run directory (run.json and results.jsonl missing)" in one_error_line(capsys.readouterr().err)
    assert main(["view", str(tmp_path / "nowhere"), "--out", str(tmp_path / "out")]) == 2
    assert "no such directory" in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "out").exists()


def test_view_bad_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = outcome_run(tmp_path / "run")
    (tmp_path / "file").write_text("x")
    assert main(["view", str(run), "--out", str(tmp_path / "file")]) == 2
    assert "--out" in one_error_line(capsys.readouterr().err)
    assert main(["view", str(run), "--port", "70000", "--no-open"]) == 2
    assert "--port 70000" in one_error_line(capsys.readouterr().err)


def test_static_report_files_and_no_outside_references(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = outcome_run(tmp_path / "run")
    out = tmp_path / "report"
    assert main(["view", str(run), "--out", str(out)]) == 0
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    pages = [f for f in files if f.startswith("runs/")]
    assert pages == sorted([*(f"runs/1/{p}/{c}.html" for p, c in [
        ("alpha", "first"), ("alpha", "second"), ("alpha", "third"), ("beta", "only"), ("gamma", "free"), ("gamma", "untested")
    ]), "runs/1/alpha.html", "runs/1/beta.html", "runs/1/gamma.html"])  # a page per problem
    assert [f for f in files if f.startswith("search")] == ["search.html", *(f"search/1/{p}.js" for p in ("alpha", "beta", "gamma"))]
    assert "index.html" in files and "assets/uplot/uPlot.iife.min.js" in files and "assets/uplot/LICENSE" in files
    for name in files:
        if name.endswith((".html", ".css")) or name in ("assets/app.js", "assets/search.js"):
            text = (out / name).read_text()
            # every reference is relative: nothing is fetched from a network
            assert not re.search(r"""(src|href)\s*=\s*["'](https?:)?//""", text), name
            assert "url(http" not in text and "@import" not in text, name


def test_long_trajectory_is_split_into_pages(tmp_path: Path) -> None:
    from agentrig.view.render import Report

    run = write_run(tmp_path / "long", {"p": [CheckpointPlan("c", calls=150)]})
    total = len((run / "p/c/trajectory.jsonl").read_text().splitlines())
    assert total > STEPS_PER_PAGE
    report = Report([run], cache_runs=True)
    parts = report.checkpoint_parts(1, "p", "c")
    assert [path for path, _ in parts] == ["runs/1/p/c.html", "runs/1/p/c.p2.html"]
    # each page draws its part of the trajectory, read whole (a step's cost so far and the messages it refers to come
    # before it) from the problem's search shard, which holds it once (test_view_browser.py checks them drawn)
    found = [TRAJECTORY_DATA.search(r.body.decode()) for _, r in parts]
    assert [m.groups()[:2] + m.groups()[3:] for m in found] == [
        ("1/p", "c", "1", str(STEPS_PER_PAGE)), ("1/p", "c", str(STEPS_PER_PAGE + 1), str(2 * STEPS_PER_PAGE))]
    assert all('<script class="trajectory-shard" src="../../../search/1/p.js"></script>' in r.body.decode() for _, r in parts)
    (checkpoint,) = shard_data(report, 1, "p")["checkpoints"]
    assert len(checkpoint["text"].split("\n")) == total and checkpoint["pages"] == [path for path, _ in parts]


def test_agents_list_imports_no_report_or_view() -> None:
    code = (
        "import sys\nfrom agentrig.cli import main\nmain(['agents', 'list'])\n"
        "bad = [m for m in sys.modules if m.startswith(('jinja2', 'agentrig.view', 'agentrig.report', 'markupsafe'))]\n"
        "print('LOADED', bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout
    assert "LOADED []" in out


def test_view_serves_on_loopback_until_interrupted(tmp_path: Path) -> None:
    import signal
    import urllib.request

    run = outcome_run(tmp_path / "run")
    agentrig = str(Path(sys.executable).with_name("agentrig"))
    proc = subprocess.Popen([agentrig, "view", str(run), "--no-open"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        match = re.match(r"agentrig view: serving (http://127\.0\.0\.1:(\d+)/) \(Ctrl-C to stop\)", line)
        assert match, line
        with urllib.request.urlopen(match.group(1), timeout=30) as response:
            body = response.read().decode()
        assert response.status == 200 and "fixture-run" in body and '"runs/1/alpha/first.html"' in body
        with urllib.request.urlopen(match.group(1) + "assets/uplot/uPlot.iife.min.js", timeout=30) as response:
            assert response.headers["Content-Type"].startswith("text/javascript")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
        assert "Traceback" not in proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()


def test_every_link_of_a_static_report_resolves(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentrig.testing.runs import write_run as write

    runs = [outcome_run(tmp_path / "a"), write(tmp_path / "b", {"alpha": [CheckpointPlan("first", "failed"),
                                                                          CheckpointPlan("second", "interrupted"),
                                                                          CheckpointPlan("third", "pending")]})]
    out = tmp_path / "report"
    assert main(["view", *map(str, runs), "--out", str(out)]) == 0
    for page in out.rglob("*.html"):
        for link in re.findall(r'(?:href|src)="([^"#]+)"', page.read_text()):
            if link.startswith("data:"):
                continue
            assert (page.parent / link).resolve().is_file(), f"{page.relative_to(out)} links to missing {link}"


def test_problem_page_and_search_shard_routes(tmp_path: Path) -> None:
    from agentrig.view.render import Report

    run = outcome_run(tmp_path / "run")
    report = Report([run])
    problem = report.render("/runs/1/alpha.html").body.decode()
    assert problem.count('class="card checkpoint-card"') == 3 and 'href="../../runs/1/alpha/first.html"' in problem
    shard = report.render("/search/1/alpha.js")
    assert shard.content_type.startswith("text/javascript") and shard.body.startswith(b"agentrigSearch({")
    assert b'"pages": ["runs/1/alpha/first.html"]' in shard.body
    assert report.render("/search.html").status == 200
    for missing in ("/runs/1/delta.html", "/search/1/delta.js", "/search/1/alpha.html", "/runs/1/alpha.js",
                    "/runs/2/alpha.html", "/search/01x/alpha.js", "/search/1/../alpha.js"):
        assert report.render(missing) is None, missing


def test_search_shard_text_cannot_leave_its_script(tmp_path: Path) -> None:
    from agentrig.view.render import Report

    run = write_run(tmp_path / "run", {"p": [CheckpointPlan("c")]})
    trajectory = run / "p/c/trajectory.jsonl"
    from agentrig.run.atomic import append_line
    from agentrig.trajectory import AgentTextStep

    append_line(trajectory, AgentTextStep(content="</script><script>alert(1)</script>\u2028").model_dump_json())
    body = Report([run]).render("/search/1/p.js").body.decode()
    assert "<" not in body and ">" not in body and "\u2028" not in body and "\\u003c/script\\u003e" in body


def test_trajectory_data_cannot_leave_its_script(tmp_path: Path) -> None:
    """A step's text that tries to end the page's steps element: written as escapes, read back unchanged."""
    from agentrig.view.render import Report

    run = write_run(tmp_path / "run", {"p": [CheckpointPlan("c", calls=1)]})
    from agentrig.run.atomic import append_line
    from agentrig.trajectory import AgentTextStep

    hostile = "</script><script>alert(1)</script><!--&amp;\u2028\u2029"
    append_line(run / "p/c/trajectory.jsonl", AgentTextStep(content=hostile).model_dump_json())
    report = Report([run])
    body = report.render("/runs/1/p/c.html").body.decode()
    assert TRAJECTORY_DATA.search(body) is not None and "alert(1)" not in body  # the lines are in the shard
    shard = report.render("/search/1/p.js").body.decode()
    # nothing an HTML parser or a script acts on (a shard is a script: its JSON escapes U+2028/U+2029 too)
    assert not set(shard) & set("<>&\u2028\u2029"), shard
    text = shard_data(report, 1, "p")["checkpoints"][0]["text"]
    assert json.loads(text.split("\n")[-1])["content"] == hostile


def test_subagent_trajectories_nest_and_stay_inside_the_run(tmp_path: Path) -> None:
    from agentrig.view.render import Report
    from agentrig.view.subagents import subagent_place

    run = write_run(tmp_path / "run", {"p": [CheckpointPlan("c", subagent=True)]})
    body = Report([run]).render("/runs/1/p/c.html").body.decode()
    # the subagents' trajectories beside the checkpoint's, by key: the page's script nests each under the tool call
    # that started it (step 13: test_view_browser.py)
    subagents = json.loads(SUBAGENTS_DATA.search(body).group(1))
    assert sorted(subagents) == ["001-helper", "001-helper/001-checker"]
    helper, checker = subagents["001-helper"], subagents["001-helper/001-checker"]
    assert len(helper["text"].split("\n")) == 4 and helper["notices"] == [] and helper["path"].endswith("001-helper/trajectory.jsonl")
    assert "nested checker output" in checker["text"]
    assert "I will ask the checker about <script>alert(1)</script> inputs." in helper["text"]
    assert "\\u003cscript\\u003ealert(1)" in body and "<script>alert(1)" not in body  # escaped in the page's data
    # names read back are untrusted: only NNN-<safe name> is looked up
    agent = run / "p/c/agent"
    for bad in ({"subagent": "../../x", "call": 1}, {"subagent": "h", "call": True}, {"subagent": "h", "call": -1},
                {"subagent": ["h"], "call": 1}, {"call": 1}, None):
        assert subagent_place(agent, bad) is None, bad
    # a subagent trajectory that is a link leading out of the run is not read
    outside = tmp_path / "outside.jsonl"
    outside.write_text('{"kind": "user", "content": "OUTSIDE THE RUN"}\n')
    nested = agent / "subagents/001-helper/trajectory.jsonl"
    nested.unlink()
    nested.symlink_to(outside)
    body = Report([run]).render("/runs/1/p/c.html").body.decode()
    helper = json.loads(SUBAGENTS_DATA.search(body).group(1))["001-helper"]
    assert "OUTSIDE THE RUN" not in body and "a symbolic link leading outside" in " ".join(helper["notices"])
    assert helper["text"] == ""


def test_counts_take_the_right_number(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """1 step, 1 checkpoint, 1 error, 1 entry: never "1 steps" (in the report's pages and in ``show``)."""
    run = write_run(tmp_path / "run", {"p": [CheckpointPlan("only", "error", calls=1)]}, status="completed")
    out = tmp_path / "report"
    assert main(["view", str(run), "--out", str(out)]) == 0
    capsys.readouterr()
    index = (out / "index.html").read_text()
    assert "1 checkpoint: 0 passed, 0 failed, 1 error |" in index
    data = re.search(r'<script type="application/json" id="results-data">(.*?)</script>', index, re.DOTALL)
    assert data is not None and json.loads(data.group(1))[0][2][0][2].startswith("1 step · ")
    assert "1 checkpoints" not in index and "1 steps" not in index and "1 errors" not in index
    # the trajectory's count ("6 entries") is drawn by the page's script: test_view_trajectory_js.py
    shard = (out / "search/1/p.js").read_text()
    assert len(json.loads(shard[len("agentrigSearch("):-len(");\n")])["checkpoints"][0]["text"].split("\n")) == 6
    assert main(["show", str(run)]) == 0
    shown = capsys.readouterr().out
    assert "1 checkpoint: 0 passed, 0 failed, 1 error |" in shown


def test_plural() -> None:
    from agentrig.formatting import plural

    assert [plural(n, "step") for n in (0, 1, 2)] == ["0 steps", "1 step", "2 steps"]
    assert plural(1, "entry", "entries") == "1 entry" and plural(3, "entry", "entries") == "3 entries"


def _child_pids() -> set[int]:
    pid = os.getpid()
    out: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        out |= {int(p) for p in (task / "children").read_text().split()}
    return out


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads a process's children from /proc (Linux)")
def test_large_static_report_is_written_by_several_processes(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A report of many checkpoints is written by forked helpers too: the same files as one process writes, a
    helper's failure is the command's one error line, and no helper outlives the command."""
    from agentrig.run.atomic import append_line
    from agentrig.testing.runs import synthetic_run
    from agentrig.view import site

    monkeypatch.setattr(os, "cpu_count", lambda: 3)  # three writers even on a one-core machine
    problems = site.PARALLEL_FROM + 2
    run = synthetic_run(tmp_path / "run", checkpoints=5 * problems, steps=5)  # 5 checkpoints a problem
    before = _child_pids()
    blocked = tmp_path / "blocked"
    (blocked / "runs/1/problem_0001/checkpoint_2.html").mkdir(parents=True)  # the second problem: a helper's share
    assert main(["view", str(run), "--out", str(blocked)]) == 2
    assert "Is a directory" in one_error_line(capsys.readouterr().err)
    assert not (blocked / "index.html").exists()
    assert _child_pids() == before
    parallel, serial = tmp_path / "parallel", tmp_path / "serial"
    writers = tmp_path / "writers.txt"
    write_pages = site._write_pages

    def counted(*args: object) -> int:
        append_line(writers, str(os.getpid()))  # one line a process: the helpers' lines too
        return write_pages(*args)

    monkeypatch.setattr(site, "_write_pages", counted)
    assert main(["view", str(run), "--out", str(parallel)]) == 0
    assert len(set(writers.read_text().split())) == 3
    assert _child_pids() == before
    monkeypatch.setattr(site, "PARALLEL_FROM", 10**9)
    assert main(["view", str(run), "--out", str(serial)]) == 0
    capsys.readouterr()
    files = sorted(p.relative_to(parallel) for p in parallel.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(serial) for p in serial.rglob("*") if p.is_file())
    assert len([f for f in files if f.parts[0] == "runs" and len(f.parts) == 3]) == problems  # the problem pages
    assert len([f for f in files if f.parts[0] == "runs" and f.name.startswith("checkpoint_")]) == 5 * problems
    assert all((parallel / f).read_bytes() == (serial / f).read_bytes() for f in files)


def test_search_links_are_spelled_as_urlencode_spells_them() -> None:
    from urllib.parse import urlencode

    from agentrig.view.paths import search_link

    for problem, checkpoint in [("a b/attempt_1", "x&y=z#1"), ("é~ü", "c+d%/e"), ("plain", "checkpoint_1")]:
        assert search_link(1, problem, checkpoint) == "search.html#" + urlencode({"run": 1, "problem": problem, "checkpoint": checkpoint})
        assert search_link(2, problem) == "search.html#" + urlencode({"run": 2, "problem": problem})
