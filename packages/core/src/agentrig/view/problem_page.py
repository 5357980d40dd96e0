"""The problem page: every checkpoint of one problem run (one attempt), in order, with its verdict, cost,
tests and diff."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentrig.report.reader import CheckpointDetail, CheckpointEntry, LoadedRun
from agentrig.report.summary import CheckpointRow, money, seconds, tests_text, tokens_text
from agentrig.run.records import DiffRecord
from agentrig.view.paths import checkpoint_page, search_link, search_shard


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _groups_line(detail: CheckpointDetail | None) -> str:
    evaluation = detail.evaluation if detail is not None else None
    groups = getattr(evaluation, "groups", None) or {}
    return " · ".join(f"{name} {c.passed}/{c.total}" for name, c in groups.items())


def _failed_tests(detail: CheckpointDetail | None) -> list[dict[str, str]]:
    from agentrig.view.pages import test_rows

    evaluation = detail.evaluation if detail is not None else None
    return [t for t in test_rows(evaluation) if t["outcome"] in ("failed", "error")]


@dataclass(slots=True)
class CheckpointCard:
    """One checkpoint of the problem page, as its template lays it out (a class, not a dict: the template reads a
    dozen fields of each card, and a dict's field was found by Jinja after a failed attribute lookup)."""

    entry: CheckpointEntry
    row: CheckpointRow
    #: Its page, ``None`` when not started.
    href: str | None
    facts: str
    stop_reason: str | None
    groups_line: str
    failed_tests: list[dict[str, str]]
    diff: DiffRecord | None
    patch_html: str
    notices: list[str]


def checkpoint_card(run_index: int, entry: CheckpointEntry, detail: CheckpointDetail | None) -> CheckpointCard:
    """One checkpoint of the problem page: verdict, usage, tests, diff (``detail`` ``None``: not started)."""
    from agentrig.view.pages import patch_html

    row = CheckpointRow.of(entry)
    facts = []
    if row.steps is not None:
        facts = [_plural(row.steps, "step"), f"{tokens_text(row.tokens)} tokens", money(row.cost), seconds(row.elapsed)]
    if row.tests:
        facts.insert(0, f"tests {tests_text(row.tests)} passed")
    if row.score is not None and not row.tests:
        facts.insert(0, f"score {row.score:.3f}")
    diff = detail.diff if detail is not None else None
    return CheckpointCard(
        entry=entry,
        row=row,
        href=checkpoint_page(run_index, entry.problem, entry.checkpoint) if detail is not None else None,
        facts=" · ".join(facts),
        stop_reason=row.stop_reason,
        groups_line=_groups_line(detail),
        failed_tests=_failed_tests(detail),
        diff=diff,
        patch_html=patch_html(diff.patch) if diff is not None and diff.patch else "",
        notices=detail.notices if detail is not None else [],
    )


def problem_page_context(run_index: int, run: LoadedRun, problem: str,
                         details: dict[str, CheckpointDetail]) -> dict[str, Any]:
    """The page of problem run ``problem``: ``details`` holds the checkpoints read (by name; those not started
    are absent)."""
    entries = [e for e in run.find(problem) if e.problem == problem]  # the run's index: no pass over every checkpoint
    cards = [checkpoint_card(run_index, e, details.get(e.checkpoint)) for e in entries]
    rows = [c.row for c in cards]
    costs = [r.cost for r in rows if r.steps is not None]
    judged = [r for r in rows if r.status in ("passed", "failed", "error")]
    summary = [f"{sum(r.status == 'passed' for r in judged)}/{len(entries)} checkpoints passed"]
    if costs:
        summary.append("cost " + money(None if None in costs else sum(c for c in costs if c is not None)))
    return {
        "problem": problem,
        "run_index": run_index,
        "run": {"run_id": run.name, "agent": run.agent, "model": run.model},
        "cards": cards,
        "summary": " · ".join(summary),
        "search_href": search_link(run_index, problem),
        "shard": search_shard(run_index, problem),
        "live": run.live and any(e.state != "finished" for e in entries),
    }
