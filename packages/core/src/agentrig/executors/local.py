"""The core's ``local`` executor: problems on this machine, one at a time or ``--jobs N`` at once."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentrig.executors.interface import DoneCallback, EventReceiver, Executor
from agentrig.run.job import ProblemJob


class LocalExecutor(Executor):
    """``--jobs 1``: one problem after another in this process; ``--jobs N``: a pool of N worker processes.

    The pool (:class:`agentrig.executors.pool.ProcessPool`) forks its workers
    from a fork server that preloaded what a problem run imports; a worker
    that dies is recorded as a failed problem and replaced. Takes no options.
    """

    def __init__(self, options: Mapping[str, Any] | None = None, *, jobs: int = 1) -> None:
        """Inline for ``jobs`` 1, a process pool above."""
        super().__init__(options, jobs=jobs)
        if self.jobs > 1:
            from agentrig.executors.pool import ProcessPool

            self.tick_interval = ProcessPool.tick_interval

    def run(self, jobs: Sequence[ProblemJob], emit: EventReceiver, done: DoneCallback, tick: Callable[[], None]) -> None:
        """Run the jobs: in order here, or ``--jobs`` at a time in worker processes."""
        if self.jobs > 1:
            from agentrig.executors.pool import ProcessPool

            ProcessPool(self.jobs).run(jobs, emit, done, tick)
            return
        from agentrig.run.problem_run import run_problem

        for job in jobs:
            done(job, run_problem(job, emit))
