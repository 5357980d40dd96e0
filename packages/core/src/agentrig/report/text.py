"""One checkpoint as readable text (``agentrig show RUN PROBLEM/CHECKPOINT``) and as JSON."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from agentrig.formatting import plural
from agentrig.report.metrics import headline_text, metrics_text
from agentrig.report.quality import QualityPoint
from agentrig.report.reader import CheckpointDetail, UnknownStep
from agentrig.report.summary import CheckpointRow, money, seconds, tokens_text, tries_text
from agentrig.run.records import DiffRecord, EvaluationRecord
from agentrig.usage import UsageTracker

OUTPUT_LINES = 40


class CheckpointReport(BaseModel):
    """``agentrig show RUN PROBLEM/CHECKPOINT --json``: everything recorded for one checkpoint."""

    run_dir: str
    problem: str
    checkpoint: str
    row: CheckpointRow
    prompt: str | None = None
    stop_reason: str | None = None
    usage: UsageTracker | None = None
    error_message: str | None = None
    evaluation: EvaluationRecord | None = None
    diff: DiffRecord | None = None
    steps: list[dict[str, Any]] = Field(default_factory=list)
    notices: list[str] = Field(default_factory=list)
    #: the checkpoint's code-quality figures (``quality.json``), when measured
    quality: QualityPoint | None = None

    @classmethod
    def of(cls, detail: CheckpointDetail, quality: QualityPoint | None = None) -> CheckpointReport:
        """The report of one checkpoint read from disk (with its code quality, when measured)."""
        entry = detail.entry
        inference = detail.inference
        return cls(
            run_dir=str(entry.paths.root.parent.parent), problem=entry.problem, checkpoint=entry.checkpoint,
            row=CheckpointRow.of(entry), prompt=detail.prompt,
            stop_reason=inference.stop_reason if inference else (entry.result.stop_reason if entry.result else None),
            usage=inference.usage if inference else None,
            error_message=inference.error_message if inference else None,
            evaluation=detail.evaluation, diff=detail.diff,
            steps=[step_dict(s) for s in detail.steps], notices=detail.notices, quality=quality,
        )


def step_dict(step: Any) -> dict[str, Any]:
    """A step as JSON-ready data (an unknown step as it was read)."""
    if isinstance(step, UnknownStep):
        return step.data
    return step.model_dump(mode="json")


def _indent(text: str, prefix: str = "    ", limit: int | None = OUTPUT_LINES) -> str:
    lines = text.rstrip("\n").splitlines() or [""]
    extra = ""
    if limit is not None and len(lines) > limit:
        extra = f"\n{prefix}… {len(lines) - limit} more lines (--json shows everything)"
        lines = lines[:limit]
    return "\n".join(prefix + line for line in lines) + extra


def _arguments(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False)


def test_results(evaluation: Any) -> list[Any]:
    """Per-test results of an evaluation when the run recorded them (newer runs), else empty."""
    for name in ("tests", "test_results", "results"):
        value = getattr(evaluation, name, None)
        if isinstance(value, list):
            return value
    return []


def _field(item: Any, *names: str) -> Any:
    for name in names:
        value = item.get(name) if isinstance(item, dict) else getattr(item, name, None)
        if value is not None:
            return value
    return None


def step_text(number: int, step: Any, cumulative_cost: float | None) -> str:
    """One step as a few lines of text."""
    if isinstance(step, UnknownStep):
        return f"[{number}] {step.kind} (unknown to this agentrig)\n{_indent(json.dumps(step.data)[:2000])}"
    kind = step.kind
    if kind == "user":
        return f"[{number}] user\n{_indent(step.content)}"
    if kind == "agent_text":
        return f"[{number}] agent\n{_indent(step.content)}"
    if kind == "thinking":
        return f"[{number}] thinking\n{_indent(step.content)}"
    if kind == "error":
        kind_text = f" ({step.error_type})" if step.error_type else ""
        return f"[{number}] ERROR{kind_text}\n{_indent(step.message)}"
    if kind == "llm_call":
        usage = step.usage
        cost = "cost n/a" if step.cost is None else money(step.cost, 6)
        total = "" if cumulative_cost is None else f" (so far {money(cumulative_cost, 6)})"
        return (
            f"[{number}] model call [{step.tag}] {step.model}: in {tokens_text(usage.context)}"
            f" out {tokens_text(usage.output)}, {cost}{total}, {step.latency:.2f}s"
            + (f", stop {step.stop_reason}" if step.stop_reason else "")
        )
    if kind == "tool_use":
        status = []
        if step.exit_code is not None:
            status.append(f"exit {step.exit_code}")
        if step.is_error:
            status.append("error")
        if step.elapsed is not None:
            status.append(f"{step.elapsed:.2f}s")
        head = f"[{number}] tool {step.tool} {_arguments(step.arguments)[:500]}"
        if status:
            head += f"  ({', '.join(status)})"
        if step.result is None:
            return head + "\n    (no result recorded)"
        return head + "\n" + _indent(step.result, "    → ")
    if kind == "plan":
        where = f" step {step.step}" + (f" {step.tool}" if step.tool else "") if step.step else ""
        head = f"[{number}] plan {step.state} (plan {step.iteration}{where})"
        lines = [_indent(step.detail)] if step.detail else []
        for index, item in enumerate(step.plan or [], 1):
            lines.append(f"    {index}. {item.get('tool')} {_arguments(item.get('arguments', {}))[:200]}")
        return "\n".join([head, *lines])
    return f"[{number}] {kind}"


def checkpoint_text(detail: CheckpointDetail, quality: QualityPoint | None = None) -> str:
    """The whole checkpoint as text: verdict, usage, prompt, evaluation, code quality (when measured), files,
    trajectory."""
    from agentrig.report.quality_text import checkpoint_lines

    report = CheckpointReport.of(detail, quality)
    out = _head_lines(report)
    out += ["", "== prompt", _indent(report.prompt) if report.prompt is not None else "    (prompt.txt missing)"]
    out += ["", "== evaluation", *_evaluation_lines(report)]
    if quality is not None:
        out += ["", *checkpoint_lines(quality)]
    diff = report.diff
    out += ["", "== files changed" + (f" (since {diff.base})" if diff else ""), *_diff_lines(diff)]
    out += ["", f"== trajectory ({plural(len(detail.steps), 'entry', 'entries')})", *_trajectory_lines(detail.steps)]
    return "\n".join(out)


def _head_lines(report: CheckpointReport) -> list[str]:
    """The verdict, the usage when recorded, the notices and the agent's error."""
    row = report.row
    verdict = row.status + (f" (stopped: {report.stop_reason})" if report.stop_reason else "")
    out = [f"{row.problem}/{row.checkpoint}: {verdict}"]
    if row.steps is not None and row.token_usage is not None:
        usage = row.token_usage
        out.append(
            f"usage: steps {row.steps}, tokens {tokens_text(row.tokens)} (input {tokens_text(usage.input)},"
            f" output {tokens_text(usage.output)}, cache read {tokens_text(usage.cache_read)},"
            f" cache write {tokens_text(usage.cache_write)}), cost {money(row.cost)},"
            f" time {seconds(row.elapsed)} (agent {seconds(row.agent_elapsed)},"
            f" evaluation {seconds(row.evaluation_elapsed)})"
        )
    if row.tries_spent is not None:  # counted in the usage above: money spent on a failed try is spent
        out.append(f"tries: {row.tries or row.tries_spent.tries + 1}; {tries_text(row.tries_spent)} (in the usage above,"
                   " kept in tries/<n>/)")
    for notice in report.notices:
        out.append(f"note: {notice}")
    if report.error_message:
        out += ["", "== error", _indent(report.error_message, "    ", 30)]
    return out


def _evaluation_lines(report: CheckpointReport) -> list[str]:
    """The evaluation: command and verdict, errors, score and counts, metrics, groups, each test, output."""
    evaluation, row = report.evaluation, report.row
    if evaluation is None:
        return ["    (not evaluated yet)" if row.steps is None else "    (evaluation.json missing)"]
    verdict = {True: "passed", False: "failed", None: "no verdict"}[evaluation.passed]
    parts = [f"command: {evaluation.command or '(none)'}", f"exit {evaluation.exit_code}", verdict,
             seconds(evaluation.elapsed)]
    if evaluation.timed_out:
        parts.append("timed out")
    out = ["    " + " · ".join(parts)]
    if evaluation.error:
        out.append(f"    error: {evaluation.error}")
    if getattr(evaluation, "infrastructure_failure", False):
        out.append("    infrastructure failure: the tests could not be run or read (no verdict on the agent's work)")
    out += _score_lines(evaluation)
    not_run = getattr(evaluation, "not_run", None)
    if row.without_results and not getattr(evaluation, "infrastructure_failure", False):
        out.append("    no results: the tests' time was up before any finished (counted as failed in every total)")
    if not_run:
        more = "more " if getattr(evaluation, "counts", None) is not None else ""
        out.append(f"    {not_run} {more}collected tests never finished (their time was up): none counts as passed")
    groups = getattr(evaluation, "groups", None) or {}
    if groups:
        out.append("    groups: " + ", ".join(f"{name} {c.passed}/{c.total}" for name, c in groups.items()))
    out += [_test_line(test) for test in test_results(evaluation)]
    if evaluation.output_tail:
        out += ["    output (end):", _indent(evaluation.output_tail, "      ", 30)]
    return out


def _score_lines(evaluation: EvaluationRecord) -> list[str]:
    """Tests passed, score and policy on one line when there is a score or counts; the metrics on another."""
    out: list[str] = []
    score = getattr(evaluation, "score", None)
    policy = getattr(evaluation, "policy", None)
    counts = getattr(evaluation, "counts", None)
    if score is not None or counts is not None:
        parts = []
        if counts is not None:
            parts.append(f"tests {counts.passed}/{counts.total} passed")
        if score is not None:
            parts.append(f"score {score:.3f}")
        if policy:
            parts.append(f"policy {policy}")
        out.append("    " + " · ".join(parts))
    metrics = getattr(evaluation, "metrics", None)
    if metrics:
        out.append(f"    metrics: {metrics_text(metrics)} ({headline_text(metrics)})")
    return out


def _test_line(test: Any) -> str:
    """One test's outcome, id and group; the message of one that did not pass."""
    outcome = _field(test, "outcome", "status") or "?"
    ident = _field(test, "id", "name", "nodeid") or "?"
    group = _field(test, "group")
    message = _field(test, "message", "failure")
    line = f"    {outcome:<8} {ident}" + (f" [{group}]" if group else "")
    if message and outcome != "passed":
        line += f": {' '.join(str(message).split())[:200]}"
    return line


def _diff_lines(diff: DiffRecord | None) -> list[str]:
    """The files added, modified and deleted."""
    if diff is None:
        return ["    (diff.json missing)"]
    if not (diff.added or diff.modified or diff.deleted):
        return ["    (none)"]
    from agentrig.pathnames import quote_path  # a name that is not UTF-8 shown as recorded

    out = [f"    A {quote_path(change.path)} ({change.new_size} B)" for change in diff.added]
    out += [f"    M {quote_path(change.path)} ({change.old_size} → {change.new_size} B)" for change in diff.modified]
    out += [f"    D {quote_path(change.path)}" for change in diff.deleted]
    return out


def _trajectory_lines(steps: list[Any]) -> list[str]:
    """Every step, a model call with the cost so far (unknown from the first call of unknown cost on)."""
    out: list[str] = []
    cumulative: float | None = 0.0
    for number, step in enumerate(steps, 1):
        if getattr(step, "kind", None) == "llm_call":
            cumulative = None if cumulative is None or step.cost is None else cumulative + step.cost
        out.append(step_text(number, step, cumulative if getattr(step, "kind", None) == "llm_call" else None))
    return out
