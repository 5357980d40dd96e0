"""What each page of the report shows, computed from runs read by :mod:`agentrig.report`.

Values are formatted here (money, tokens, times, folded outputs, diff lines)
so that the templates only lay them out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from markupsafe import Markup

from agentrig.formatting import plural
from agentrig.report.metrics import headline_text, metric_value, metrics_text
from agentrig.report.passk import pass_at_k_lines
from agentrig.report.reader import CheckpointDetail, CheckpointEntry, LoadedRun, UnknownStep
from agentrig.report.summary import CheckpointRow, RunSummary, informative_score, money, seconds, tests_text, tokens_text
from agentrig.report.text import test_results
from agentrig.view.calls import call_data, system_prompt
from agentrig.view.forks import fork_link
from agentrig.view.paths import SEARCH, STEPS_PER_PAGE, checkpoint_page, problem_page
from agentrig.view.steps import StepData, SubagentData, script_json, steps_script
from agentrig.view.subagents import SUBAGENT_DEPTH, read_subagent_steps, subagent_place

if TYPE_CHECKING:
    from agentrig.report.compare import Comparison, VerdictChange

FOLD_LINES = 12
FOLD_CHARS = 1500


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


@dataclass
class TimeSplit:
    """A checkpoint's time in parts: the agent's (model calls, tools, the rest), the evaluation's, and the
    harness's (the workspace made ready, the agent's artifacts saved, the snapshot and diff taken).

    The parts add up to the checkpoint's time: model and tool time are summed from the trajectory
    (each call's latency, each tool's elapsed time) and can add up to more than the agent's time
    (calls that overlap, or latencies copied from another run by an older agentrig's replay); they
    are then scaled down together to fit, and :attr:`note` says so with the recorded figures.
    """

    model: float
    tools: float
    other: float
    evaluation: float
    harness: float = 0.0
    note: str | None = None

    @classmethod
    def of(cls, row: CheckpointRow, model: float, tools: float) -> TimeSplit:
        """The split of a finished checkpoint's ``row``, from its trajectory's model and tool time."""
        agent = row.agent_elapsed or 0.0
        note = None
        if model + tools > agent:
            note = (f"model and tool time as recorded ({model:.2f}s + {tools:.2f}s) exceed the agent's {agent:.2f}s:"
                    " shown scaled to fit")
            scale = agent / (model + tools)
            model, tools = model * scale, tools * scale
        evaluation = row.evaluation_elapsed or 0.0
        return cls(model=model, tools=tools, other=max(0.0, agent - model - tools), evaluation=evaluation,
                   harness=max(0.0, (row.elapsed or 0.0) - agent - evaluation), note=note)

    def parts(self) -> dict[str, float]:
        """The parts by name, as the bar shows them (seconds, to the millisecond)."""
        return {"model": round(self.model, 3), "tools": round(self.tools, 3), "other agent": round(self.other, 3),
                "evaluation": round(self.evaluation, 3), "harness": round(self.harness, 3)}


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


def _fold(text: str) -> tuple[bool, int]:
    lines = text.count("\n") + 1
    return lines > FOLD_LINES or len(text) > FOLD_CHARS, lines


def _arguments(arguments: Any) -> str:
    """Tool arguments as people read them: a lone command as is, else ``key: value`` lines with
    strings raw (a file's content keeps its line breaks) and other values as JSON."""
    if isinstance(arguments, str):
        return arguments
    if not isinstance(arguments, dict):
        return json.dumps(arguments, indent=2, ensure_ascii=False)
    if set(arguments) == {"command"} and isinstance(arguments["command"], str):
        return arguments["command"]
    lines = []
    for key, value in arguments.items():
        if isinstance(value, str) and "\n" in value:
            lines.append(f"{key}:\n" + "\n".join("  " + line for line in value.rstrip("\n").split("\n")))
        elif isinstance(value, str):
            lines.append(f"{key}: {value}")
        else:
            lines.append(f"{key}: {json.dumps(value, ensure_ascii=False)}")
    return "\n".join(lines)


class _Shown:
    """What the steps so far show: tool results by call id, user messages by text (to refer to them)."""

    def __init__(self, system: str | None) -> None:
        self.system = system
        self.results: dict[str, tuple[int, str | None]] = {}
        self.users: dict[str, int] = {}

    def add(self, number: int, step: Any) -> None:
        if step.kind == "tool_use" and step.tool_call_id:
            self.results[step.tool_call_id] = (number, step.result)
        elif step.kind == "user":
            self.users.setdefault(step.content, number)

    def lookup(self, message: Any) -> int | None:
        """The step that shows ``message`` already (0: the system prompt card), or ``None``."""
        if message.cut:
            return None
        if message.role == "system":
            return 0 if message.content == self.system else None
        if message.role == "tool" and message.tool_call_id in self.results:
            number, result = self.results[message.tool_call_id]
            return number if result is not None and message.content.strip() == result.strip() else None
        if message.role == "user":
            return self.users.get(message.content)
        return None


def _call_step(number: int, offset: str, step: Any, cumulative: float | None, shown: _Shown | None = None) -> StepData:
    usage = step.usage
    badges = [f"in {tokens_text(usage.context)}", f"out {tokens_text(usage.output)}"]
    if usage.cache_read:
        badges.append(f"cache read {tokens_text(usage.cache_read)}")
    if usage.reasoning:
        badges.append(f"reasoning {tokens_text(usage.reasoning)}")
    badges += [money(step.cost, 6), f"total {money(cumulative, 6)}", f"{step.latency:.2f}s"]
    if step.stop_reason:
        badges.append(f"stop: {step.stop_reason}")
    view: StepData = {"number": number, "kind": step.kind, "offset": offset, "title": f"model call [{step.tag}] {step.model}",
                      "badges": badges}
    call = call_data(step, shown.lookup if shown is not None else None)
    if call is not None:
        view["call"] = call
    return view


def _tool_step(number: int, offset: str, step: Any, nesting: Nesting | None) -> StepData:
    badges = []
    if step.exit_code is not None:
        badges.append(f"exit {step.exit_code}")
    if step.elapsed is not None:
        badges.append(f"{step.elapsed:.2f}s")
    result = step.result
    view: StepData = {"number": number, "kind": step.kind, "offset": offset, "title": f"tool {step.tool}",
                      "arguments": _arguments(step.arguments), "result": result}
    if result is not None:
        folded, lines = _fold(result)
        if folded:
            view["result_folded"] = True
            view["result_lines"] = lines
    if badges:
        view["badges"] = badges
    if step.is_error or (step.exit_code not in (None, 0)):
        view["error"] = True
    if nesting is not None:
        subagent = nesting.subagent(step.metadata)
        if subagent is not None:
            view["subagent"] = subagent
    return view


@dataclass
class Nesting:
    """Where a trajectory's subagents were recorded (``agent_dir``), inside run directory ``root``."""

    agent_dir: Path
    root: Path
    depth: int = 0

    def subagent(self, metadata: dict[str, Any] | None) -> SubagentData | None:
        """The trajectory of the subagent call ``metadata`` names, as shown; ``None`` for other tool calls."""
        place = subagent_place(self.agent_dir, metadata)
        if place is None:
            return None
        if self.depth + 1 > SUBAGENT_DEPTH:
            return {"label": place.label, "steps": [],
                    "notices": [f"subagents deeper than {SUBAGENT_DEPTH} levels are not shown"]}
        steps, notices = read_subagent_steps(place, self.root)
        inner = Nesting(place.directory, self.root, self.depth + 1)
        views, _ = trajectory_views(steps, inner)
        return {"label": place.label, "steps": views, "notices": notices}


def step_views(detail: CheckpointDetail, root: Path | None = None) -> tuple[list[StepData], dict[str, Any]]:
    """Every step as shown, and the per-model-call series of the tokens-and-cost plot; with ``root`` (the run
    directory), each subagent's trajectory nested under the tool call that started it."""
    nesting = Nesting(detail.entry.paths.agent, root) if root is not None else None
    return trajectory_views(detail.steps, nesting)


_TEXT_TITLES = {"user": "user", "agent_text": "agent", "thinking": "thinking"}


def _text_step(number: int, offset: str, step: Any) -> StepData:
    """A ``user``, ``agent_text`` or ``thinking`` step: its text, folded when long (thinking beyond 3 lines)."""
    kind = step.kind
    view: StepData = {"number": number, "kind": kind, "offset": offset, "title": _TEXT_TITLES[kind], "text": step.content}
    folded, lines = _fold(step.content)
    if folded or (kind == "thinking" and lines > 3):
        view["folded"] = True
        view["lines"] = lines
    return view


def _plan_step(number: int, offset: str, step: Any) -> StepData:
    where = f" step {step.step}" + (f" {step.tool}" if step.tool else "") if step.step else ""
    listing = "\n".join(
        f"{index}. {item.get('tool')} {_arguments(item.get('arguments', {}))}"
        for index, item in enumerate(step.plan or [], 1)
    )
    view: StepData = {"number": number, "kind": step.kind, "offset": offset,
                      "title": f"plan {step.state} (plan {step.iteration}{where})",
                      "text": "\n".join(part for part in (step.detail, listing) if part)}
    if step.state == "ERROR_RECOVERY":
        view["error"] = True
    return view


def trajectory_views(steps: list[Any], nesting: Nesting | None = None) -> tuple[list[StepData], dict[str, Any]]:
    """:func:`step_views` of a list of steps (a checkpoint's, or a subagent's under ``nesting``)."""
    views: list[StepData] = []
    first = next((s.timestamp for s in steps if not isinstance(s, UnknownStep)), None)
    cumulative: float | None = 0.0
    calls: dict[str, Any] = {"x": [], "input": [], "output": [], "cost": [], "cumulative": []}
    model_time = 0.0
    tool_time = 0.0
    shown = _Shown(system_prompt(steps) if nesting is None or nesting.depth == 0 else None)
    for number, step in enumerate(steps, 1):
        if isinstance(step, UnknownStep):
            views.append({"number": number, "kind": step.kind, "offset": "", "title": "a step this agentrig does not know",
                          "text": json.dumps(step.data, indent=2)})
            continue
        shown.add(number, step)
        offset = f"+{(step.timestamp - first).total_seconds():.1f}s" if first else ""
        kind = step.kind
        if kind in _TEXT_TITLES:
            views.append(_text_step(number, offset, step))
        elif kind == "error":
            error_type = f" ({step.error_type})" if step.error_type else ""
            views.append({"number": number, "kind": kind, "offset": offset, "title": f"error{error_type}",
                          "text": step.message, "error": True})
        elif kind == "llm_call":
            model_time += step.latency
            if cumulative is not None:
                cumulative = None if step.cost is None else cumulative + step.cost
            views.append(_call_step(number, offset, step, cumulative, shown))
            calls["x"].append(len(calls["x"]) + 1)
            calls["input"].append(step.usage.context)
            calls["output"].append(step.usage.output)
            calls["cost"].append(step.cost)
            calls["cumulative"].append(cumulative)
        elif kind == "tool_use":
            tool_time += step.elapsed or 0.0
            views.append(_tool_step(number, offset, step, nesting))
        elif kind == "plan":
            views.append(_plan_step(number, offset, step))
    calls["model_time"] = model_time
    calls["tool_time"] = tool_time
    return views, calls


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


def checkpoint_page_context(run_index: int, run: LoadedRun, detail: CheckpointDetail, part: int = 1) -> dict[str, Any]:
    """One checkpoint: verdict, usage, evaluation, plots, trajectory (one part of it), diff, prompt."""
    entry = detail.entry
    row = CheckpointRow.of(entry)
    steps, calls = step_views(detail, run.root)
    parts = max(1, -(-len(steps) // STEPS_PER_PAGE))
    part = min(max(1, part), parts)
    shown = steps[(part - 1) * STEPS_PER_PAGE: part * STEPS_PER_PAGE]
    model_time, tool_time = calls.pop("model_time"), calls.pop("tool_time")
    time_split = TimeSplit.of(row, model_time, tool_time) if row.steps is not None else None
    evaluation = detail.evaluation
    tests = test_rows(evaluation)
    problem_entries = run.find(entry.problem)
    position = [e.checkpoint for e in problem_entries].index(entry.checkpoint)
    neighbours = {
        "previous": checkpoint_page(run_index, entry.problem, problem_entries[position - 1].checkpoint)
        if position > 0 and problem_entries[position - 1].state != "pending" else None,
        "next": checkpoint_page(run_index, entry.problem, problem_entries[position + 1].checkpoint)
        if position + 1 < len(problem_entries) and problem_entries[position + 1].state != "pending" else None,
    }
    inference = detail.inference
    evaluation_summary = []
    if evaluation is not None:
        counts = getattr(evaluation, "counts", None)
        if counts is not None:
            text = f"tests {counts.passed}/{counts.total} passed"
            for number, word in ((counts.failed, "failed"), (counts.errors, "errors"), (counts.skipped, "skipped")):
                if number:
                    text += f", {number} {word}"
            evaluation_summary.append(text)
        score = getattr(evaluation, "score", None)
        if score is not None and (counts is not None or score not in (0.0, 1.0)):
            evaluation_summary.append(f"score {score:.3f}")
        if getattr(evaluation, "policy", None):
            evaluation_summary.append(f"policy {evaluation.policy}")
    metrics = getattr(evaluation, "metrics", None) or {}
    from agentrig.view.tries import try_views

    return {
        "tries": try_views(run.root, entry.paths, trajectory_views),
        "evaluation_summary": " · ".join(evaluation_summary),
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
        "system_prompt": system_prompt(detail.steps),
        "problem_href": problem_page(run_index, entry.problem),
        "search_href": f"{SEARCH}#" + urlencode({"run": run_index, "problem": entry.problem, "checkpoint": entry.checkpoint}),
        "evaluation": evaluation,
        "tests": tests,
        "diff": detail.diff,
        "patch_html": patch_html(detail.diff.patch) if detail.diff else "",
        "steps": shown,
        "steps_script": steps_script(shown),
        "step_count": len(steps),
        "part": part,
        "parts": parts,
        "part_links": [(n, checkpoint_page(run_index, entry.problem, entry.checkpoint, n)) for n in range(1, parts + 1)],
        "plots_json": script_json({"calls": calls, "time": time_split.parts() if time_split else None,
                                   "time_note": time_split.note if time_split else None}),
        "notices": detail.notices,
        "neighbours": neighbours,
        "live": run.live and entry.state != "finished",
        "money": money,
        "tokens": tokens_text,
        "seconds": seconds,
        "tests_text": tests_text,
        "metrics_text": metrics_text,
    }
