"""Executors: how problem jobs are dispatched.

:class:`InlineExecutor` runs them one after another in this process;
:class:`ProcessPoolExecutor` runs up to N at once, each in its own process
(``--jobs N``). Both only hand a :class:`ProblemJob` to
:func:`~agentrig.run.problem_run.run_problem` and pass its events and record
back, which is all a distributed executor (Ray) needs to do too.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import queue as queue_module
import signal
import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

from agentrig.run.job import ProblemJob
from agentrig.run.progress import EventSink, ProgressEvent
from agentrig.run.records import ProblemRecord, utcnow

DoneCallback = Callable[[ProblemJob, ProblemRecord], None]
"""Called once per problem with its final record, in the dispatcher's process."""

#: Seconds workers get to clean up (agent, containers) after an interrupt before SIGKILL.
SHUTDOWN_GRACE = 30.0


class Executor(ABC):
    """Runs problem jobs and reports each one's events and final record."""

    @abstractmethod
    def run(self, jobs: Sequence[ProblemJob], emit: EventSink, done: DoneCallback, tick: Callable[[], None]) -> None:
        """Run every job; ``KeyboardInterrupt`` propagates after the jobs have cleaned up."""


class InlineExecutor(Executor):
    """One problem after another, in this process (``--jobs 1``)."""

    def run(self, jobs: Sequence[ProblemJob], emit: EventSink, done: DoneCallback, tick: Callable[[], None]) -> None:
        """Run the jobs in order."""
        from agentrig.run.problem_run import run_problem

        for job in jobs:
            done(job, run_problem(job, emit))


def _die_with_parent() -> None:
    """Ask Linux to send us SIGTERM when the dispatcher dies (even by SIGKILL)."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def _worker(job_json: str, results: Any, parent: int) -> None:
    """Entry point of a worker process: run one job, send events and the record back."""
    from agentrig.run.problem_run import run_problem
    from agentrig.run.signals import install_termination_handler

    _die_with_parent()
    install_termination_handler()
    if os.getppid() != parent:  # the dispatcher died before prctl took effect
        return
    job = ProblemJob.model_validate_json(job_json)

    def emit(event: ProgressEvent) -> None:
        results.put(("event", event.model_dump_json()))

    try:
        record = run_problem(job, emit)
    except KeyboardInterrupt:
        record = ProblemRecord(name=job.problem_name, path=job.problem_path, status="interrupted", error="interrupted")
        results.put(("done", record.model_dump_json()))
        results.close()
        results.join_thread()
        sys.exit(130)
    results.put(("done", record.model_dump_json()))
    results.close()
    results.join_thread()


class ProcessPoolExecutor(Executor):
    """Up to ``workers`` problems at once, each in a fresh process (``--jobs N``).

    Processes are spawned (not forked): a worker shares nothing with the
    dispatcher but the job it was given. A worker that dies is recorded as a
    failed problem; the others go on.
    """

    def __init__(self, workers: int) -> None:
        """Run at most ``workers`` problems concurrently."""
        self.workers = max(1, workers)

    def run(self, jobs: Sequence[ProblemJob], emit: EventSink, done: DoneCallback, tick: Callable[[], None]) -> None:
        """Run the jobs, ``workers`` at a time."""
        context = multiprocessing.get_context("spawn")
        results = context.Queue()
        pending = list(jobs)
        running: dict[str, tuple[Any, ProblemJob]] = {}
        finished: set[str] = set()

        def receive(timeout: float) -> None:
            try:
                kind, payload = results.get(timeout=timeout)
            except queue_module.Empty:
                return
            if kind == "event":
                emit(ProgressEvent.model_validate_json(payload))
            else:
                record = ProblemRecord.model_validate_json(payload)
                if record.name in running and record.name not in finished:
                    finished.add(record.name)
                    done(running[record.name][1], record)

        try:
            while pending or running:
                while pending and len(running) < self.workers:
                    job = pending.pop(0)
                    process = context.Process(
                        target=_worker,
                        args=(job.model_dump_json(), results, os.getpid()),
                        name=f"agentrig-{job.problem_name}",
                        daemon=False,
                    )
                    process.start()
                    running[job.problem_name] = (process, job)
                receive(0.5)
                tick()
                for name, (process, job) in list(running.items()):
                    if process.is_alive():
                        continue
                    # drain what it sent before it exited
                    deadline = time.monotonic() + 2
                    while name not in finished and time.monotonic() < deadline:
                        receive(0.1)
                    if name not in finished:
                        finished.add(name)
                        done(job, _crashed(job, process.exitcode))
                    process.join()
                    del running[name]
        except KeyboardInterrupt:
            self._shutdown(running, receive)
            raise

    @staticmethod
    def _shutdown(running: dict[str, tuple[Any, ProblemJob]], receive: Callable[[float], None]) -> None:
        """Ask every worker to stop (SIGTERM: agent cleanup, containers removed), then make sure."""
        from agentrig.run.signals import deferred_interrupts

        with deferred_interrupts():
            for process, _ in running.values():
                if process.is_alive() and process.pid:
                    try:
                        os.kill(process.pid, signal.SIGTERM)
                    except ProcessLookupError:
                        pass
            deadline = time.monotonic() + SHUTDOWN_GRACE
            while any(p.is_alive() for p, _ in running.values()) and time.monotonic() < deadline:
                receive(0.1)  # keep their queue flowing so they can exit
            for process, _ in running.values():
                if process.is_alive():
                    process.kill()
                process.join(5)


def _crashed(job: ProblemJob, exitcode: int | None) -> ProblemRecord:
    how = f"killed by signal {-exitcode}" if exitcode is not None and exitcode < 0 else f"exit status {exitcode}"
    return ProblemRecord(
        name=job.problem_name,
        path=job.problem_path,
        status="failed",
        error=f"worker process ended unexpectedly ({how})",
        ended=utcnow(),
    )


def make_executor(jobs: int) -> Executor:
    """The local executor for ``--jobs``: inline for 1, a process pool above."""
    return InlineExecutor() if jobs <= 1 else ProcessPoolExecutor(jobs)
