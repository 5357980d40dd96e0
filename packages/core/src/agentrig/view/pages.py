"""What each page of the report shows, computed from runs read by :mod:`agentrig.report`.

Values are formatted here (money, tokens, times, folded outputs, diff lines)
so that the templates only lay them out.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from html import escape
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from agentrig.formatting import plural
from agentrig.report.metrics import headline_text, metric_value, metrics_text
from agentrig.report.passk import pass_at_k_lines
from agentrig.report.reader import CheckpointDetail, CheckpointEntry, LoadedRun, raw_trajectory_of
from agentrig.report.summary import CheckpointRow, RunSummary, informative_score, money, seconds, tests_text, tokens_text
from agentrig.report.text import test_results
from agentrig.view.forks import fork_link
from agentrig.view.paths import STEPS_PER_PAGE, checkpoint_page, problem_page, search_link, search_shard
from agentrig.view.steps import script_json, trajectory_script
from agentrig.view.subagents import subagent_trajectories

if TYPE_CHECKING:
    from agentrig.report.compare import Comparison, VerdictChange

@dataclass
class Cell:
    """One run's result for one checkpoint in the results table."""

    status: str
    href: str | None
    metrics: str
    title: str = ""


@dataclass
class TableRow:
    """One ``problem/checkpoint`` row of the results table, one cell per run."""

    problem: str
    checkpoint: str
    cells: list[Cell | None]


def _metrics(row: CheckpointRow) -> str:
    if row.steps is None:
        return ""
    parts = []
    if row.tests:
        parts.append(f"tests {tests_text(row.tests)}")
    if informative_score(row):
        parts.append(f"score {row.score:.2f}")
    if row.metrics and len(row.metrics) > 1:  # a reward of several metrics (one is the score already)
        parts.append(metrics_text(row.metrics))
    parts += [plural(row.steps, "step"), tokens_text(row.tokens), money(row.cost), seconds(row.elapsed)]
    return " · ".join(parts)


def _cell(run_index: int, entry: CheckpointEntry) -> Cell:
    row = CheckpointRow.of(entry)
    href = checkpoint_page(run_index, entry.problem, entry.checkpoint) if entry.state != "pending" else None
    return Cell(status=row.status, href=href, metrics=_metrics(row), title=row.stop_reason or "")


#: The most characters of a model's name shown in a plot's legend (the full label shows on hover).
LABEL_CHARS = 28


def short_label(text: str, limit: int = LABEL_CHARS) -> str:
    """``text`` as a legend shows it: whole when short; else its last path segment (a replay file's name
    rather than its whole path), cut to ``limit`` characters with an ellipsis."""
    if len(text) <= limit:
        return text
    tail = text.rstrip("/").rsplit("/", 1)[-1] or text
    return tail if len(tail) <= limit else tail[: limit - 1] + "…"


def _elapsed(run: LoadedRun) -> dict[str, Any]:
    """The run's time so far: ``elapsed`` as ``run.json`` records it, or for a run in progress the time since
    it started (``run.json`` is rewritten only now and then), with ``since`` (its start, in seconds since the
    epoch) for the page's clock to count on."""
    record = run.record
    if record is None:
        return {"elapsed": "", "since": None}
    if not run.live:
        return {"elapsed": seconds(record.elapsed), "since": None}
    started = record.started if record.started.tzinfo else record.started.replace(tzinfo=timezone.utc)
    now = datetime.now(timezone.utc)
    return {"elapsed": seconds(max(record.elapsed, (now - started).total_seconds())), "since": started.timestamp()}


def run_card(index: int, run: LoadedRun) -> dict[str, Any]:
    """The header card of one run."""
    summary = RunSummary.of(run)
    record = run.record
    return {
        "index": index,
        "summary": summary,
        "totals_line": summary.totals.line(),
        "problems_line": summary.problems_line(),
        "pass_at_k_lines": pass_at_k_lines(summary.pass_at_k) if summary.pass_at_k is not None else [],
        "pass_rate": summary.totals.pass_rate,
        "runtime": record.identity.runtime.name if record else "?",
        "image": record.identity.runtime.agent_image or record.identity.runtime.image if record else None,
        "started": record.started.strftime("%Y-%m-%d %H:%M:%S UTC") if record else "?",
        **_elapsed(run),
        "problems_failed": [p for p in summary.problems if p.status not in ("completed", "unknown")],
        "metric_means_line": summary.metric_means.line() if summary.metric_means is not None else None,
    }


def _position_plots(runs: list[LoadedRun]) -> dict[str, Any]:
    """Pass rate and mean cost at each checkpoint position (1st, 2nd, ... checkpoint of a problem), per run."""
    positions = max((e.index for run in runs for e in run.entries()), default=0)
    xs = list(range(1, positions + 1))
    pass_rate: list[list[float | None]] = []
    cost: list[list[float | None]] = []
    for run in runs:
        judged = [0] * positions
        passed = [0] * positions
        costs: list[list[float]] = [[] for _ in xs]
        for entry in run.entries():
            row = CheckpointRow.of(entry)
            i = entry.index - 1
            if row.status in ("passed", "failed", "error"):
                judged[i] += 1
                passed[i] += row.status == "passed"
            if row.cost is not None and row.steps is not None:
                costs[i].append(row.cost)
        pass_rate.append([round(100 * p / j, 1) if j else None for p, j in zip(passed, judged, strict=True)])
        cost.append([round(sum(c) / len(c), 6) if c else None for c in costs])
    return {"x": xs, "pass_rate": pass_rate, "cost": cost}


def _run_time(run: LoadedRun) -> dict[str, float]:
    """A run's time over its finished checkpoints: the agents', the evaluations' and the harness's (the rest of
    each checkpoint's time: the workspace made ready, artifacts saved, snapshot and diff taken)."""
    rows = [CheckpointRow.of(e) for e in run.entries()]
    agent = sum(r.agent_elapsed or 0.0 for r in rows)
    evaluation = sum(r.evaluation_elapsed or 0.0 for r in rows)
    harness = sum(max(0.0, (r.elapsed or 0.0) - (r.agent_elapsed or 0.0) - (r.evaluation_elapsed or 0.0)) for r in rows)
    return {"agent": round(agent, 3), "evaluation": round(evaluation, 3), "harness": round(harness, 3)}


def results_json(table: list[TableRow]) -> str:
    """The results table as data for the page's script, which builds its rows: per row ``[problem, checkpoint,
    cells]``, a cell ``[status, page, metrics, stop reason]`` (``page`` relative to the report's root, ``null``
    when the checkpoint has none) or ``null`` (the run has no such checkpoint); :func:`script_json`-escaped.

    A results table of 10,000 rows as HTML kept the browser parsing for seconds before the plots above it were
    drawn; as data it is read at once, its first rows are shown with the first screen and the rest just after.
    """
    return script_json([
        [row.problem, row.checkpoint,
         [None if cell is None else [cell.status, cell.href, cell.metrics, cell.title] for cell in row.cells]]
        for row in table
    ])


def index_page(runs: list[LoadedRun]) -> dict[str, Any]:
    """The report's first page: each run, verdict changes, plots, and the results table."""
    # imported here: comparing runs and their statistics are the index's alone (not every checkpoint page's)
    from agentrig.report.compare import compare
    from agentrig.view.statistics import statistics_context

    comparison: Comparison | None = compare(runs) if len(runs) > 1 else None
    keys: dict[tuple[str, str], None] = {}
    by_run: list[dict[tuple[str, str], CheckpointEntry]] = []
    for run in runs:
        entries = {(e.problem, e.checkpoint): e for e in run.entries()}
        by_run.append(entries)
        for key in entries:
            keys.setdefault(key, None)
    table = [
        TableRow(problem=p, checkpoint=c,
                 cells=[_cell(i, entries[(p, c)]) if (p, c) in entries else None for i, entries in enumerate(by_run, 1)])
        for p, c in keys
    ]
    changes = []
    if comparison is not None:
        def page_of(change: VerdictChange, run: int, status: str) -> str | None:
            no_page = status in ("missing", "pending")
            return None if no_page else checkpoint_page(run, change.problem, change.checkpoint)

        for change in comparison.changes:
            changes.append({
                "change": change,
                "before": page_of(change, 1, change.before),
                "after": page_of(change, change.run, change.after),
            })
    plots = _position_plots(runs)
    plots["runs"] = [f"[{i}] {run.agent} · {run.model}" for i, run in enumerate(runs, 1)]
    plots["labels"] = [f"[{i}] {run.agent} · {short_label(run.model)}" for i, run in enumerate(runs, 1)]
    plots["time"] = [_run_time(run) for run in runs]
    cards = [run_card(i, run) for i, run in enumerate(runs, 1)]
    for card, run in zip(cards, runs, strict=True):
        card["fork"] = fork_link(run, runs)  # "forked from RUN/PROBLEM/CHECKPOINT", linked when that run is here
    if comparison is not None and comparison.metrics:  # the same metric names for every run
        for card, compared in zip(cards, comparison.runs, strict=True):
            card["metric_means_line"] = compared.metric_means.line() if compared.metric_means is not None else None
    return {
        "runs": cards,
        "table": table,
        "results_json": results_json(table),
        "changes": changes,
        "plots_json": script_json(plots),
        "live": any(run.live for run in runs),
        "notices": [(i, n) for i, run in enumerate(runs, 1) for n in run.notices],
        "statistics": statistics_context(comparison),
    }


def diff_lines(patch: str) -> list[tuple[str, str]]:
    """The patch as ``(css class, line)`` pairs: added, removed, hunk, file header, context."""
    out = []
    for line in patch.splitlines():
        if line.startswith(("+++", "---", "diff ", "index ", "Binary ")):
            css = "file"
        elif line.startswith("@@"):
            css = "hunk"
        elif line.startswith("+"):
            css = "add"
        elif line.startswith("-"):
            css = "del"
        else:
            css = "ctx"
        out.append((css, line))
    return out


def patch_html(patch: str) -> Markup:
    """The patch as the page's ``<pre class="patch">`` holds it: one ``<span class="d-<css class>">`` per line
    (:func:`diff_lines`), the text escaped once for the whole patch (no line's class depends on ``&``,
    ``<``, ``>``, which escaping changes); an empty line as a space, so that it keeps its height."""
    return Markup("".join(f'<span class="d-{css}">{line or " "}</span>' for css, line in diff_lines(escape(patch, quote=False))))


def test_rows(evaluation: Any) -> list[dict[str, str]]:
    """Per-test results of an evaluation as shown (test, outcome, group, duration, message); empty when the
    tests reported none."""
    rows = []
    for test in test_results(evaluation) if evaluation is not None else []:
        data = test.model_dump() if hasattr(test, "model_dump") else dict(test)
        rows.append({
            "id": data.get("id") or data.get("name") or data.get("nodeid") or "?",
            "outcome": data.get("outcome") or data.get("status") or "?",
            "group": data.get("group") or "",
            "duration": seconds(data.get("duration")) if isinstance(data.get("duration"), (int, float)) else "",
            "message": data.get("message") or data.get("failure") or "",
        })
    return rows


def _evaluation_summary(evaluation: Any) -> str:
    """``tests 3/5 passed, 2 failed · score 0.600 · policy all`` of an evaluation record (empty without one)."""
    parts = []
    if evaluation is not None:
        counts = getattr(evaluation, "counts", None)
        if counts is not None:
            text = f"tests {counts.passed}/{counts.total} passed"
            for number, word in ((counts.failed, "failed"), (counts.errors, "errors"), (counts.skipped, "skipped")):
                if number:
                    text += f", {number} {word}"
            parts.append(text)
        score = getattr(evaluation, "score", None)
        if score is not None and (counts is not None or score not in (0.0, 1.0)):
            parts.append(f"score {score:.3f}")
        if getattr(evaluation, "policy", None):
            parts.append(f"policy {evaluation.policy}")
    return " · ".join(parts)


def _trajectory(run_index: int, run: LoadedRun, detail: CheckpointDetail, part: int) -> dict[str, Any]:
    """The page's trajectory: how many parts it takes, which one this is, and where its script reads the lines it
    draws the part's steps from (the whole trajectory: a step's cost so far and the messages it refers to come
    before it), the problem run's search shard, which the page loads: every trajectory is written once."""
    entry = detail.entry
    raw = raw_trajectory_of(detail)
    parts = raw.parts(STEPS_PER_PAGE)
    part = min(max(1, part), parts)
    subagents = subagent_trajectories(entry.paths.agent, raw, run.root)
    shown = ((part - 1) * STEPS_PER_PAGE + 1, part * STEPS_PER_PAGE)
    shard = (f"{run_index}/{entry.problem}", entry.checkpoint)
    return {"part": part, "parts": parts, "trajectory_shard": search_shard(run_index, entry.problem),
            "steps_script": trajectory_script(raw, shown=shown if parts > 1 else None, subagents=subagents, shard=shard)}


def checkpoint_page_context(run_index: int, run: LoadedRun, detail: CheckpointDetail, part: int = 1) -> dict[str, Any]:
    """One checkpoint: verdict, usage, evaluation, plots, trajectory (one part of it), diff, prompt."""
    entry = detail.entry
    row = CheckpointRow.of(entry)
    trajectory = _trajectory(run_index, run, detail, part)
    part = trajectory["part"]
    evaluation = detail.evaluation
    problem_entries = run.find(entry.problem)
    position = [e.checkpoint for e in problem_entries].index(entry.checkpoint)
    neighbours = {
        "previous": checkpoint_page(run_index, entry.problem, problem_entries[position - 1].checkpoint)
        if position > 0 and problem_entries[position - 1].state != "pending" else None,
        "next": checkpoint_page(run_index, entry.problem, problem_entries[position + 1].checkpoint)
        if position + 1 < len(problem_entries) and problem_entries[position + 1].state != "pending" else None,
    }
    inference = detail.inference
    metrics = getattr(evaluation, "metrics", None) or {}
    # the time split's parts come from the trajectory (model and tool time): the page's script adds them up
    timing = ({"agent": row.agent_elapsed, "evaluation": row.evaluation_elapsed, "elapsed": row.elapsed}
              if row.steps is not None else None)
    from agentrig.view.tries import try_views

    return {
        **trajectory,
        "tries": try_views(run.root, entry.paths),
        "evaluation_summary": _evaluation_summary(evaluation),
        "reward_metrics": [(name, metric_value(value)) for name, value in sorted(metrics.items())],
        "reward_headline": headline_text(metrics) if metrics else "",
        "run_index": run_index,
        "run": {"run_id": run.name, "agent": run.agent, "model": run.model},
        "entry": entry,
        "row": row,
        "metrics": _metrics(row),
        "stop_reason": inference.stop_reason if inference else row.stop_reason,
        "error_message": inference.error_message if inference else None,
        "usage": row.token_usage,
        "prompt": detail.prompt,
        "problem_href": problem_page(run_index, entry.problem),
        "search_href": search_link(run_index, entry.problem, entry.checkpoint),
        "evaluation": evaluation,
        "tests": test_rows(evaluation),
        "diff": detail.diff,
        "patch_html": patch_html(detail.diff.patch) if detail.diff else "",
        "part_links": [(n, checkpoint_page(run_index, entry.problem, entry.checkpoint, n))
                       for n in range(1, trajectory["parts"] + 1)],
        "plots_json": script_json({"timing": timing}),
        "notices": detail.notices,
        "neighbours": neighbours,
        "live": run.live and entry.state != "finished",
        "money": money,
        "tokens": tokens_text,
        "seconds": seconds,
        "tests_text": tests_text,
        "metrics_text": metrics_text,
    }
