"""A run's results as rows and totals: what ``show``, ``compare`` and the viewer print.

The rows are pydantic models so that ``--json`` is their ``model_dump_json()``.
Fields that only newer runs record (a score, per-group test counts) are read
when present and left ``None`` otherwise.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from agentrig.formatting import money, plural, tokens_text
from agentrig.report.metrics import MetricMeans, metric_means
from agentrig.report.quality import RunQuality, run_quality
from agentrig.report.reader import CheckpointEntry, LoadedRun, ProblemEntry
from agentrig.run.records import CheckpointResultLine, ForkRecord, NetworkRecord, PassAtKSummary, TriesSpent, counted_score
from agentrig.usage import TokenUsage


def line_cost(line: CheckpointResultLine) -> float | None:
    """The checkpoint's cost in USD, ``None`` when unknown (no pricing for the model)."""
    cost = getattr(line, "cost", None)
    if cost is None or not getattr(line, "cost_known", True):
        return None
    return float(cost)


def line_score(line: CheckpointResultLine) -> float | None:
    """The evaluation's score in [0, 1] when the run recorded one."""
    score = getattr(line, "score", None)
    return float(score) if isinstance(score, (int, float)) else None


def line_tests(line: CheckpointResultLine) -> dict[str, int] | None:
    """Test counts (``passed``, ``total``, ...) when the run recorded per-test results."""
    for name in ("tests", "test_counts"):
        value = getattr(line, name, None)
        if value is None:
            continue
        if isinstance(value, BaseModel):
            value = value.model_dump()
        if isinstance(value, dict):
            return {k: v for k, v in value.items() if isinstance(v, int)}
    return None




def seconds(value: float | None) -> str:
    """``12.3s``."""
    return "" if value is None else f"{value:.1f}s"


def tests_text(tests: dict[str, int] | None) -> str:
    """``27/30`` (passed of total) when counts exist."""
    if not tests:
        return ""
    total = tests.get("total")
    passed = tests.get("passed")
    if total is None or passed is None:
        return " ".join(f"{k} {v}" for k, v in tests.items())
    return f"{passed}/{total}"


class CheckpointRow(BaseModel):
    """One checkpoint in a run's summary. ``status`` is the verdict once finished
    (``passed``, ``failed``, ``not_evaluated``, ``error``, ``skipped``), else
    ``running``, ``interrupted`` or ``pending``; ``cost`` is ``None`` when unknown;
    ``without_results``: evaluated, but its tests timed out before giving a result or
    could not run (it counts as failed, or errored, in the totals). ``cost``, ``tokens`` and ``token_usage``
    count every try of the checkpoint (money spent on a failed try is spent): ``tries_spent`` says how much of
    them the earlier tries, kept in ``tries/<n>/``, spent; ``steps`` is the counted try's."""

    problem: str
    checkpoint: str
    index: int  # position in the problem, from 1
    status: str
    passed: bool | None = None
    score: float | None = None
    tests: dict[str, int] | None = None
    stop_reason: str | None = None
    steps: int | None = None
    tokens: int | None = None
    token_usage: TokenUsage | None = None
    cost: float | None = None
    agent_elapsed: float | None = None
    evaluation_elapsed: float | None = None
    elapsed: float | None = None
    started: datetime | None = None
    #: every metric of the checkpoint's reward (``{"correctness": 1.0, "performance": 0.0}``), when it had one
    metrics: dict[str, float] | None = None
    without_results: bool = False
    not_run: int | None = None
    #: how many tries the checkpoint took, when more than one
    tries: int | None = None
    tries_spent: TriesSpent | None = None

    @classmethod
    def of(cls, entry: CheckpointEntry) -> CheckpointRow:
        """The row of one checkpoint (computed once per entry read)."""
        row = entry.cache.get("row")
        if row is None:
            row = entry.cache["row"] = cls._of(entry)
        return row

    @classmethod
    def _of(cls, entry: CheckpointEntry) -> CheckpointRow:
        line = entry.result
        if line is None:
            return cls(problem=entry.problem, checkpoint=entry.checkpoint, index=entry.index, status=entry.state)
        return cls.of_line(line, entry.problem, entry.index)

    @classmethod
    def of_line(cls, line: CheckpointResultLine, problem: str, index: int) -> CheckpointRow:
        """The row of a finished checkpoint's ``results.jsonl`` line (``problem``: as the row names it)."""
        spent = line.tries_spent
        usage = line.tokens if spent is None else line.tokens + spent.tokens
        return cls(
            problem=problem, checkpoint=line.checkpoint, index=index, status=line.status,
            passed=line.passed, score=line_score(line), tests=line_tests(line), stop_reason=line.stop_reason,
            steps=line.steps, tokens=usage.total, token_usage=usage, cost=line_cost(line) if spent is None else line.spent,
            agent_elapsed=line.agent_elapsed, evaluation_elapsed=line.evaluation_elapsed,
            elapsed=line.elapsed, started=line.started, metrics=line.metrics,
            without_results=line.without_results, not_run=line.not_run, tries=line.tries, tries_spent=spent,
        )

    def cells(self) -> list[Any]:
        """The cells of the text table (as at the end of ``agentrig run``)."""
        finished = self.steps is not None
        return [
            self.problem, self.checkpoint, self.status, tests_text(self.tests),
            "" if self.score is None else f"{self.score:.2f}", self.stop_reason or "",
            self.steps if finished else "", tokens_text(self.tokens),
            money(self.cost) if finished else "", seconds(self.elapsed),
        ]


def informative_score(row: CheckpointRow) -> bool:
    """Whether a row's score says more than its verdict (tests were counted, or a reward between 0 and 1);
    a plain exit-code test scores 1 or 0, which the result column already says."""
    return row.score is not None and (bool(row.tests) or row.score not in (0.0, 1.0))


TABLE_HEADERS = ["problem", "checkpoint", "result", "tests", "score", "stopped", "steps", "tokens", "cost", "time"]


def table(rows: list[CheckpointRow]) -> tuple[list[str], list[list[Any]]]:
    """Headers and cells, leaving out the ``tests`` and ``score`` columns when no row has them."""
    keep = [
        i for i, h in enumerate(TABLE_HEADERS)
        if not (h == "tests" and not any(r.tests for r in rows)) and not (h == "score" and not any(informative_score(r) for r in rows))
    ]
    return [TABLE_HEADERS[i] for i in keep], [[r.cells()[i] for i in keep] for r in rows]


class RunTotals(BaseModel):
    """Sums over a run's checkpoints; ``cost`` is ``None`` when some finished checkpoint's cost is unknown
    (``cost_known_part`` then holds the sum of the known ones). ``score`` is the mean over the evaluated
    checkpoints, each counted as ``run.json``'s totals count it (:func:`~agentrig.run.records.counted_score`:
    one without results counts as failed); ``tests_passed``/``tests_total`` count the tests that ran,
    ``tests_not_run`` those collected that never finished (their time was up); ``without_results`` the
    evaluated checkpoints whose tests timed out before giving a result or could not run. ``cost`` and ``tokens``
    count the failed tries too; ``tries_spent`` is what those spent (``None``: no checkpoint took two tries)."""

    checkpoints: int = 0
    finished: int = 0
    passed: int = 0
    failed: int = 0
    not_evaluated: int = 0
    errors: int = 0
    skipped: int = 0
    unfinished: int = 0
    without_results: int = 0
    score: float | None = None
    score_informative: bool = False
    tests_passed: int = 0
    tests_total: int = 0
    tests_not_run: int = 0
    cost: float | None = 0.0
    cost_known_part: float = 0.0
    tokens: int = 0
    steps: int = 0
    elapsed: float = 0.0
    tries_spent: TriesSpent | None = None

    @classmethod
    def of(cls, rows: list[CheckpointRow]) -> RunTotals:
        """The totals of ``rows``."""
        totals = cls(checkpoints=len(rows))
        scores: list[float] = []
        informative = False
        unknown_cost = False
        for row in rows:
            if row.steps is None:
                totals.unfinished += 1
                continue
            totals.finished += 1
            totals.passed += row.status == "passed"
            totals.failed += row.status == "failed"
            totals.not_evaluated += row.status == "not_evaluated"
            totals.errors += row.status == "error"
            totals.skipped += row.status == "skipped"
            totals.without_results += row.without_results
            score = counted_score(row.passed, row.score)
            if score is not None:
                scores.append(score)
                informative = informative or informative_score(row)
            if row.tests and "total" in row.tests:
                totals.tests_total += row.tests["total"]
                totals.tests_passed += row.tests.get("passed", 0)
            totals.tests_not_run += row.not_run or 0
            if row.cost is None:
                unknown_cost = True
            else:
                totals.cost_known_part += row.cost
            totals.tokens += row.tokens or 0
            if row.tries_spent is not None:  # in the row's cost and tokens already
                totals.tries_spent = row.tries_spent if totals.tries_spent is None else totals.tries_spent + row.tries_spent
            totals.steps += row.steps or 0
            totals.elapsed += row.elapsed or 0.0
        totals.cost = None if unknown_cost else totals.cost_known_part
        totals.score = sum(scores) / len(scores) if scores else None
        totals.score_informative = informative
        return totals

    @property
    def pass_rate(self) -> float | None:
        """Passed over checkpoints with a verdict (passed or failed or errored)."""
        judged = self.passed + self.failed + self.errors
        return self.passed / judged if judged else None

    def line(self) -> str:
        """``2 checkpoints: 2 passed, 0 failed | cost $0.0016 | tokens 9.4k | steps 7``; checkpoints
        without results are named (``4 checkpoints: 2 passed, 2 failed (2 without results) | ...``)."""
        parts = [f"{plural(self.finished, 'checkpoint')}: {self.passed} passed, {self.failed} failed"]
        for count, word in ((self.errors, "error" if self.errors == 1 else "errors"), (self.skipped, "skipped"),
                            (self.not_evaluated, "not evaluated"), (self.unfinished, "unfinished")):
            if count:
                parts.append(f"{count} {word}")
        text = ", ".join(parts)
        if self.without_results:
            text += f" ({self.without_results} without results)"
        if self.tests_total:
            text += f" | passed {self.tests_passed}/{self.tests_total} {'test' if self.tests_total == 1 else 'tests'}"
        if self.tests_not_run:
            never = plural(self.tests_not_run, "test")
            text += f" ({self.tests_not_run} more never finished)" if self.tests_total else f" | {never} never finished"
        if self.score is not None and self.score_informative:
            text += f" | mean score {self.score:.3f}"
        cost = money(self.cost) if self.cost is not None else "n/a"
        if self.cost is None and self.cost_known_part:  # unknown is never zero: no "known part $0.0000"
            cost += f" (known part {money(self.cost_known_part)})"
        if self.tries_spent is not None:
            cost += f" ({tries_text(self.tries_spent)})"
        return text + f" | cost {cost} | tokens {tokens_text(self.tokens)} | steps {self.steps}"


def tries_text(spent: TriesSpent) -> str:
    """``2 earlier tries cost $0.0040, 1.2k tokens``: what checkpoints' earlier tries (kept in ``tries/<n>/``) spent."""
    cost = money(spent.cost) if spent.cost is not None else "n/a"
    return f"{plural(spent.tries, 'earlier try', 'earlier tries')} cost {cost}, {tokens_text(spent.tokens.total)} tokens"


class ProblemRow(BaseModel):
    """A problem's status and, when it failed outside its checkpoints, why; ``score`` and
    ``score_rule``: its own score where its format defines one (a Harbor multi-step task's reward);
    the network its container had."""

    name: str
    status: str
    error: str | None = None
    score: float | None = None
    score_rule: str | None = None
    network: NetworkRecord | None = None

    def network_text(self) -> str | None:
        """``agent bridge, verifier none`` (one word when both phases had the same), when recorded."""
        network = self.network
        if network is None:
            return None
        if network.agent == network.verifier:
            return network.agent
        return f"agent {network.agent}, verifier {network.verifier}"


class RunSummary(BaseModel):
    """``agentrig show RUN_DIR --json``: the run, its problems, checkpoints and totals."""

    run_dir: str
    run_id: str
    agent: str
    model: str
    runtime: str | None = None
    status: str
    live: bool = False
    started: datetime | None = None
    ended: datetime | None = None
    elapsed: float | None = None
    versions: dict[str, str] = Field(default_factory=dict)
    problems: list[ProblemRow] = Field(default_factory=list)
    checkpoints: list[CheckpointRow] = Field(default_factory=list)
    totals: RunTotals = Field(default_factory=RunTotals)
    problems_solved: int | None = None
    problems_partial: int | None = None
    notices: list[str] = Field(default_factory=list)
    #: pass@1 and pass@k of a run with ``--attempts K`` (K > 1); ``None`` otherwise.
    pass_at_k: PassAtKSummary | None = None
    #: each metric's mean when the rewards hold several metrics (Harbor's ``reward.json``); see :mod:`agentrig.report.metrics`
    metric_means: MetricMeans | None = None
    #: the reducer over attempts the summary leads with (``show --reduce``); ``None``: pass@1 and pass@k
    reduce: str | None = None
    #: the code quality its checkpoints' ``quality.json`` recorded (:mod:`agentrig.report.quality`); ``None`` without any
    quality: RunQuality | None = None
    #: where a forked run (``run --from RUN/PROBLEM/CHECKPOINT``) started; ``None``: not a fork
    forked_from: ForkRecord | None = None

    def fork_line(self) -> str | None:
        """``forked from RUN/PROBLEM/CHECKPOINT (with its conversation)``, for a forked run."""
        fork = self.forked_from
        if fork is None:
            return None
        return f"forked from {fork.label}" + (" (with its conversation)" if fork.keep_context else "")

    def problems_line(self) -> str | None:
        """``3 problems: 1 solved, 1 partial, 1 unsolved`` (as the benchmarks report), when known."""
        if self.problems_solved is None or len(self.problems) < 2 or self.pass_at_k is not None:
            return None
        partial = self.problems_partial or 0
        unsolved = len(self.problems) - self.problems_solved - partial
        return f"{plural(len(self.problems), 'problem')}: {self.problems_solved} solved, {partial} partial, {unsolved} unsolved"

    @classmethod
    def of(cls, run: LoadedRun, problem: str | None = None, reduce: str | None = None) -> RunSummary:
        """The summary of ``run`` (of one problem if given), its attempts' lines leading with ``reduce``."""
        record = run.record
        problems = [p for p in run.problems if problem is None or problem in (p.name, p.problem)]
        pass_at_k = run.pass_at_k(problems[0].problem if problem is not None and problems else problem)
        rows = [CheckpointRow.of(e) for p in problems for e in p.checkpoints]
        return cls(
            run_dir=str(run.root), run_id=run.name, agent=run.agent, model=run.model,
            runtime=record.identity.runtime.name if record else None, status=run.status, live=run.live,
            started=record.started if record else None, ended=record.ended if record else None,
            elapsed=record.elapsed if record else None, versions=record.versions if record else {},
            problems=[
                ProblemRow(
                    name=p.name, status=p.status, error=p.error,
                    score=p.score.score if p.score else None, score_rule=p.score.rule if p.score else None,
                    network=p.network,
                )
                for p in problems
            ],
            checkpoints=rows, totals=RunTotals.of(rows), notices=list(run.notices),
            pass_at_k=pass_at_k, metric_means=metric_means(rows), reduce=reduce, quality=run_quality(run, problem),
            forked_from=record.identity.forked_from if record else None,
            **_problem_verdicts(problems),
        )


def _problem_verdicts(problems: list[ProblemEntry]) -> dict[str, int | None]:
    """Problems solved (every checkpoint passed) and partial (some passed), counted over finished problems."""
    if not problems:
        return {"problems_solved": None, "problems_partial": None}
    solved = partial = 0
    for problem in problems:
        statuses = [e.status for e in problem.checkpoints]
        if statuses and all(s == "passed" for s in statuses):
            solved += 1
        elif any(s == "passed" for s in statuses):
            partial += 1
    return {"problems_solved": solved, "problems_partial": partial}
