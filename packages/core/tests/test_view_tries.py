"""The checkpoint page lists the checkpoint's earlier tries (``--retries``, ``--retry-errors``): each with
why it was tried again and a link to its trajectory; a ``tries`` folder that leaves the run is not read."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

from agentrig.run.records import CheckpointResultLine, TryRecord
from agentrig.testing.runs import outcome_run


def _keep(run: Path, number: int, cause: str, delay: float | None) -> None:
    checkpoint = run / "beta" / "only"
    folder = checkpoint / "tries" / str(number)
    folder.mkdir(parents=True)
    shutil.copy(checkpoint / "trajectory.jsonl", folder / "trajectory.jsonl")
    line = CheckpointResultLine(problem="beta", checkpoint="only", index=0, status="error", had_error=True,
                                stop_reason="model_error", cost=0.25)
    record = TryRecord(number=number, reason="retries" if delay is not None else "retry_errors", cause=cause,
                       result=line, delay=delay)
    (folder / "try.json").write_text(record.model_dump_json())


def test_the_checkpoint_page_lists_its_tries_with_their_errors_and_trajectories(tmp_path: Path) -> None:
    from agentrig.view.render import Report

    run = outcome_run(tmp_path / "run")
    _keep(run, 1, "model error: ServerError: openai: server_error (HTTP 500) after 2 attempts", 4.5)
    _keep(run, 2, "ended in an error (model_error); redone by --retry-errors", None)
    page = Report([run]).render("/runs/1/beta/only.html").body.decode()
    assert "Earlier tries" in page and "2 before this one" in page
    assert page.count('<a href="#try-1">try 1</a>') == 1 and '<a href="#try-2">try 2</a>' in page
    assert "server_error (HTTP 500) after 2 attempts" in page and "automatic retry" in page and "--retry-errors" in page
    assert '<details class="try" id="try-1">' in page
    tries = re.findall(
        r'<ol class="steps"><script type="text/x-agentrig-jsonl" class="trajectory-data" data-prefix="(try-[12]-step-)"'
        r' data-path="[^"]*/tries/[12]/trajectory.jsonl" data-limit="400">(.*?)</script>', page, re.DOTALL
    )
    assert [prefix for prefix, _ in tries] == ["try-1-step-", "try-2-step-"]  # their own step ids: try-1-step-1, ...
    # each try's lines, for the page's script to draw its first 400 steps (test_view_trajectory_js.py draws one)
    kept = (run / "beta/only/tries/1/trajectory.jsonl").read_text().rstrip("\n").split("\n")
    assert [json.loads(line)["kind"] for line in tries[0][1].split("\n")] == [json.loads(line)["kind"] for line in kept]
    others = Report([run]).render("/runs/1/alpha/first.html").body.decode()
    assert "Earlier tries" not in others


def test_a_tries_folder_leaving_the_run_is_not_listed(tmp_path: Path) -> None:
    from agentrig.view.render import Report

    run = outcome_run(tmp_path / "run")
    outside = tmp_path / "elsewhere"
    _keep(run, 1, "a secret cause from outside the run", 1.0)
    (run / "beta" / "only" / "tries").rename(outside)
    os.symlink(outside, run / "beta" / "only" / "tries")
    page = Report([run]).render("/runs/1/beta/only.html").body.decode()
    assert "Earlier tries" not in page and "secret cause" not in page
