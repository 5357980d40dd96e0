"""The problem page's cards (issue 25, item 13): each a :class:`CheckpointCard` whose fields the template reads as
attributes (a dict's keys were found by Jinja only after a failed attribute lookup each), the page as before."""

from __future__ import annotations

from pathlib import Path

from agentrig.report.reader import load_checkpoint, open_run
from agentrig.testing.runs import CheckpointPlan, write_run
from agentrig.view.problem_page import CheckpointCard, problem_page_context
from agentrig.view.render import Report


def test_cards_carry_what_the_page_shows(tmp_path: Path) -> None:
    root = write_run(tmp_path / "run", {"alpha": [CheckpointPlan("first", "passed", tests=3),
                                                  CheckpointPlan("second", "failed", tests=6),
                                                  CheckpointPlan("third", "interrupted"), CheckpointPlan("fourth", "pending")]})
    run = open_run(root)
    details = {e.checkpoint: load_checkpoint(e) for e in run.find("alpha") if e.state != "pending"}
    context = problem_page_context(1, run, "alpha", details)
    cards = context["cards"]
    assert all(isinstance(card, CheckpointCard) for card in cards)
    first, second, third, fourth = cards
    assert first.href == "runs/1/alpha/first.html" and first.facts.startswith("tests 3/3 passed · ")
    assert second.failed_tests and all(t["outcome"] in ("failed", "error") for t in second.failed_tests)
    assert third.notices and "killed mid-checkpoint" in third.notices[-1] and third.diff is None
    assert fourth.href is None and fourth.notices == [] and fourth.row.status == "pending"
    assert context["summary"].startswith("1/4 checkpoints passed")

    page = Report([root]).render("runs/1/alpha.html")
    assert page is not None
    html = page.body.decode()
    assert '<a href="../../runs/1/alpha/first.html">first</a>' in html
    assert html.count('<table class="tests failing">') == 1 and "not started" in html
    assert '<pre class="patch">' in html and "stopped: <b>" in html
