"""Runs side by side: per checkpoint, per run; totals; verdicts that changed.

Runs are matched by ``problem/checkpoint``; a checkpoint missing from a run
has no cell there. Verdict changes are taken against the first run (the
baseline): ``regression`` (passed there, failed or errored here) first, then
``fix`` (the reverse), then ``changed`` (any other difference of status).
When the runs' rewards hold several metrics (Harbor's ``reward.json``), each
run carries each metric's mean over its judged checkpoints, the same metric
names for every run (:mod:`agentrig.report.metrics`), and each cell its metrics.

Each run after the first is also tested against it over the checkpoints both
judged (:mod:`agentrig.report.significance`): the difference in pass rate with
its paired bootstrap interval and exact p-value, cost and tokens per passed
checkpoint, the pass rates at equal cost; a run with ``--attempts`` gets its
pass@k's interval.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from agentrig.report.budget import BudgetUnit
from agentrig.report.metrics import MetricMeans, metric_means, metric_names
from agentrig.report.paired import Method
from agentrig.report.quality_compare import QualityComparison, compare_quality
from agentrig.report.reader import LoadedRun
from agentrig.report.significance import PairedComparison, PassAtKInterval, compare_pair, pass_at_k_interval
from agentrig.report.summary import CheckpointRow, RunTotals
from agentrig.run.records import PassAtKSummary

ChangeKind = Literal["regression", "fix", "changed"]
_GOOD = {"passed"}
_BAD = {"failed", "error"}


class ComparedRun(BaseModel):
    """One of the compared runs; ``index`` counts from 1 in the order given."""

    index: int
    run_dir: str
    run_id: str
    agent: str
    model: str
    status: str
    totals: RunTotals
    pass_rate: float | None = None
    #: pass@1 and pass@k over the problems of a run with ``--attempts K`` (K > 1).
    pass_at_k: PassAtKSummary | None = None
    #: the bootstrap intervals of pass@1 and pass@k over the run's problems (``--attempts K``, K > 1)
    pass_at_k_interval: PassAtKInterval | None = None
    #: each metric's mean (over every metric any of the runs has), when the rewards hold several
    metric_means: MetricMeans | None = None


class ComparedCheckpoint(BaseModel):
    """One ``problem/checkpoint`` with its row in each run (``None`` where a run lacks it)."""

    problem: str
    checkpoint: str
    cells: list[CheckpointRow | None]


class VerdictChange(BaseModel):
    """A checkpoint whose status differs from the baseline's (the first run's)."""

    kind: ChangeKind
    problem: str
    checkpoint: str
    run: int
    before: str
    after: str


class Comparison(BaseModel):
    """``agentrig compare --json``: the runs, every checkpoint side by side, the verdict changes."""

    runs: list[ComparedRun]
    checkpoints: list[ComparedCheckpoint] = Field(default_factory=list)
    changes: list[VerdictChange] = Field(default_factory=list)
    #: the metric names the runs' rewards hold between them, when more than one (else empty)
    metrics: list[str] = Field(default_factory=list)
    #: each run after the first against the first (run 1), over the checkpoints both judged
    statistics: list[PairedComparison] = Field(default_factory=list)
    #: how the statistics were computed (confidence, resamples, seed, significance level)
    method: Method = Field(default_factory=Method)
    #: the runs' code quality side by side (:mod:`agentrig.report.quality_compare`); ``None`` when no run recorded any
    quality: QualityComparison | None = None


def change_kind(before: str, after: str) -> ChangeKind | None:
    """How a status changed between two runs, ``None`` when it did not."""
    if before == after:
        return None
    if before in _GOOD and after in _BAD:
        return "regression"
    if before in _BAD and after in _GOOD:
        return "fix"
    return "changed"


def compare(runs: list[LoadedRun], *, budget_unit: BudgetUnit | None = None, budget: float | None = None) -> Comparison:
    """Put ``runs`` side by side, and test each against the first; ``budget_unit`` and ``budget``: the
    equal-cost cut's unit and fixed budget per problem (:mod:`agentrig.report.budget`; by default dollars
    when every cost is known, and the cheaper run's spend)."""
    headers: list[ComparedRun] = []
    by_run: list[dict[tuple[str, str], CheckpointRow]] = []
    order: dict[tuple[str, str], None] = {}
    for index, run in enumerate(runs, 1):
        rows = {(e.problem, e.checkpoint): CheckpointRow.of(e) for e in run.entries()}
        for key in rows:
            order.setdefault(key, None)
        by_run.append(rows)
        totals = RunTotals.of(list(rows.values()))
        summary = run.pass_at_k()
        headers.append(ComparedRun(index=index, run_dir=str(run.root), run_id=run.name, agent=run.agent,
                                   model=run.model, status=run.status, totals=totals, pass_rate=totals.pass_rate,
                                   pass_at_k=summary, pass_at_k_interval=pass_at_k_interval(summary)))
    names = metric_names(row for rows in by_run for row in rows.values())
    if len(names) > 1:
        for header, rows in zip(headers, by_run, strict=True):
            header.metric_means = metric_means(list(rows.values()), names)
    else:
        names = []
    checkpoints = [
        ComparedCheckpoint(problem=p, checkpoint=c, cells=[rows.get((p, c)) for rows in by_run]) for p, c in order
    ]
    changes: list[VerdictChange] = []
    for item in checkpoints:
        base = item.cells[0]
        for index, cell in enumerate(item.cells[1:], 2):
            before = base.status if base else "missing"
            after = cell.status if cell else "missing"
            kind = change_kind(before, after)
            if kind is not None:
                changes.append(VerdictChange(kind=kind, problem=item.problem, checkpoint=item.checkpoint,
                                             run=index, before=before, after=after))
    rank = {"regression": 0, "fix": 1, "changed": 2}
    changes.sort(key=lambda c: rank[c.kind])
    statistics = [
        compare_pair(header.index, list(by_run[0].values()), list(rows.values()),
                     pass_at_k=(headers[0].pass_at_k, header.pass_at_k), budget_unit=budget_unit, budget=budget)
        for header, rows in zip(headers[1:], by_run[1:], strict=True)
    ]
    return Comparison(runs=headers, checkpoints=checkpoints, changes=changes, metrics=names, statistics=statistics,
                      quality=compare_quality(runs))
