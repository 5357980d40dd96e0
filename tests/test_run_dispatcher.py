"""The dispatcher's bookkeeping: totals from ``results.jsonl``, ``run.json`` kept current without a rewrite per event."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from agentrig.run import runner
from agentrig.executors import DoneCallback, Executor
from agentrig.run.job import ProblemJob
from agentrig.run.layout import RunDirectory
from agentrig.run.progress import EventSink, ProgressEvent
from agentrig.run.records import (
    AgentRecord,
    CheckpointResultLine,
    ModelRecord,
    ProblemRecord,
    RunIdentity,
    RunRecord,
    RuntimeRecord,
)
from agentrig.usage import TokenUsage


def _line(problem: str, checkpoint: str, status: str = "passed") -> CheckpointResultLine:
    return CheckpointResultLine(
        problem=problem, checkpoint=checkpoint, index=0, status=status, cost=0.5, steps=2,  # type: ignore[arg-type]
        tokens=TokenUsage(input=10, output=5),
    )


def _prepared(root: Path, names: list[str], jobs: int) -> runner.PreparedRun:
    directory = RunDirectory(root)
    root.mkdir(parents=True, exist_ok=True)
    identity = RunIdentity(
        agent=AgentRecord(type="x", config={}), model=ModelRecord(id="a/b", provider="a", name="b"),
        runtime=RuntimeRecord(name="local"), problems=names,
    )
    record = RunRecord(run_id="r", identity=identity)
    for name in names:
        record.problems[name] = ProblemRecord(name=name, path="/p", checkpoints=["c1", "c2"])
    directory.write_run(record)
    job_list = [
        ProblemJob(problem_path="/p", problem_name=n, agent_config={"type": "x"}, model="a/b", output_dir=str(root)) for n in names
    ]
    request = runner.RunRequest(problems=[], agent_config={}, model="a/b", jobs=jobs)
    return runner.PreparedRun(request=request, directory=root, record=record, jobs=job_list)


class _Scripted(Executor):
    """Runs 'problems' that only append their result lines; ``between`` runs after each one."""

    def __init__(self, tick_interval: float | None, between: Callable[[str], None] = lambda name: None) -> None:
        self.tick_interval = tick_interval
        self.between = between

    def run(self, jobs: Sequence[ProblemJob], emit: EventSink, done: DoneCallback, tick: Callable[[], None]) -> None:
        directory = RunDirectory(Path(jobs[0].output_dir))
        for job in jobs:
            emit(ProgressEvent(kind="problem_start", problem=job.problem_name))
            directory.append_result(_line(job.problem_name, "c1"))
            directory.append_result(_line(job.problem_name, "c2", "failed"))
            # what a dead worker reports: no totals; the dispatcher must count from the file
            done(job, ProblemRecord(name=job.problem_name, path="/p", status="completed"))
            self.between(job.problem_name)
            tick()


def test_results_of_one_problem_are_exactly_its_lines(tmp_path: Path) -> None:
    directory = RunDirectory(tmp_path)
    for problem, checkpoint in [("p1", "c1"), ("p10", "p1"), ("p1", "c2"), ("x.p1", "c1"), ("p1", "c1")]:
        directory.append_result(_line(problem, checkpoint))
    assert [(x.problem, x.checkpoint) for x in directory.results("p1")] == [("p1", "c2"), ("p1", "c1")]
    assert [(x.problem, x.checkpoint) for x in directory.results("p10")] == [("p10", "p1")]
    assert len(directory.results()) == 4


@pytest.mark.parametrize("tick_interval", [None, 0.2])
def test_totals_come_from_the_results_file(tmp_path: Path, tick_interval: float | None) -> None:
    names = [f"p{i}" for i in range(12)]
    record = runner.execute(_prepared(tmp_path, names, jobs=4), lambda e: None, executor=_Scripted(tick_interval))
    on_disk = RunDirectory(tmp_path).read_run()
    for rec in (record, on_disk):
        assert rec.status == "completed"
        assert rec.totals.checkpoints == 24 and rec.totals.passed == 12 and rec.totals.failed == 12
        assert rec.totals.cost == pytest.approx(12.0) and rec.totals.tokens.input == 240 and rec.totals.steps == 48
        assert all(p.finished == 2 and p.totals.passed == 1 and p.totals.cost == pytest.approx(1.0) for p in rec.problems.values())
        assert rec.problems["p3"].checkpoints == ["c1", "c2"]  # kept from the prepared record


def test_inline_runs_write_every_change(tmp_path: Path) -> None:
    seen: list[str] = []

    def between(name: str) -> None:
        run = RunDirectory(tmp_path).read_run()
        seen.append(f"{run.problems[name].status} {run.problems[name].finished} {run.totals.checkpoints}")

    runner.execute(_prepared(tmp_path, ["a", "b", "c"], jobs=1), lambda e: None, executor=_Scripted(None, between))
    assert seen == ["completed 2 2", "completed 2 4", "completed 2 6"]


def test_concurrent_runs_coalesce_writes_but_catch_up_on_the_next_tick(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "RUN_FILE_INTERVAL", 0.3)
    writes: list[float] = []
    real_write = RunDirectory.write_run

    def counting(self: RunDirectory, record: RunRecord) -> None:
        writes.append(time.monotonic())
        real_write(self, record)

    monkeypatch.setattr(RunDirectory, "write_run", counting)
    names = [f"p{i}" for i in range(40)]
    stale: list[str] = []

    def between(name: str) -> None:
        if name == "p20":
            stale.append(RunDirectory(tmp_path).read_run().problems["p20"].status)
            time.sleep(0.35)  # longer than the interval: the tick that follows brings run.json up to date
        elif name == "p21":
            stale.append(RunDirectory(tmp_path).read_run().problems["p20"].status)

    runner.execute(_prepared(tmp_path, names, jobs=4), lambda e: None, executor=_Scripted(0.2, between))
    # 80 state changes; a handful of writes (the first at once, then at most one per interval, and the last)
    assert 2 <= len(writes) <= 8, len(writes)
    assert stale[0] != "completed" and stale[1] == "completed"  # coalesced, then caught up ...
    statuses = RunDirectory(tmp_path).read_run().problems
    assert all(p.status == "completed" for p in statuses.values())  # ... and everything is at the end
