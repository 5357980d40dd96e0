"""Executors: how problem jobs are dispatched.

:class:`InlineExecutor` runs them one after another in this process;
:class:`ProcessPoolExecutor` runs up to N at once, each in its own process
(``--jobs N``). Both only hand a :class:`ProblemJob` to
:func:`~agentrig.run.problem_run.run_problem` and pass its events and record
back, which is all a distributed executor (Ray) needs to do too.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import queue as queue_module
import select
import signal
import sys
import threading
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

    #: Seconds between calls of ``tick`` while jobs run; ``None``: not called while a job runs.
    tick_interval: float | None = None

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


def _exit_with_dispatcher(dispatcher: int) -> bool:
    """SIGTERM this worker when the dispatcher process ends, even by SIGKILL; False if it is gone already.

    Workers are children of the fork server, not of the dispatcher, so the
    parent-death signal cannot tell; a thread waits on a pidfd of the
    dispatcher instead (polling where pidfds do not exist). SIGTERM then runs
    the same cleanup as Ctrl-C: agent cleanup, containers removed, records written.
    """
    try:
        pidfd: int | None = os.pidfd_open(dispatcher)  # type: ignore[attr-defined,unused-ignore]
    except ProcessLookupError:
        return False
    except (AttributeError, OSError):
        pidfd = None
        try:
            os.kill(dispatcher, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass

    def watch() -> None:
        if pidfd is not None:
            select.select([pidfd], [], [])
        else:
            while True:
                time.sleep(0.5)
                try:
                    os.kill(dispatcher, 0)
                except ProcessLookupError:
                    break
                except PermissionError:
                    continue
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="agentrig-dispatcher-watch", daemon=True).start()
    return True


def _worker(jobs: Any, results: Any, parent: int) -> None:
    """Entry point of a worker process: take jobs until the ``None`` sentinel, send events and records back.

    A worker keeps only imported modules between problems (that is what it
    saves: a fresh interpreter per problem costs seconds of imports); each
    problem builds its own agent, session and model client.
    """
    from agentrig.run.problem_run import run_problem
    from agentrig.run.signals import install_termination_handler

    install_termination_handler()
    if not _exit_with_dispatcher(parent):
        return

    def emit(event: ProgressEvent) -> None:
        results.put(("event", event.model_dump_json()))

    try:
        while True:
            job_json = jobs.get()
            if job_json is None:
                break
            job = ProblemJob.model_validate_json(job_json)
            results.put(("start", json.dumps([job.problem_name, os.getpid()])))
            try:
                record = run_problem(job, emit)
            except KeyboardInterrupt:
                record = ProblemRecord(name=job.problem_name, path=job.problem_path, status="interrupted", error="interrupted")
                results.put(("done", record.model_dump_json()))
                raise
            results.put(("done", record.model_dump_json()))
    except KeyboardInterrupt:
        results.close()
        results.join_thread()
        sys.exit(130)
    results.close()
    results.join_thread()


class ProcessPoolExecutor(Executor):
    """Up to ``workers`` problems at once, in a pool of worker processes (``--jobs N``).

    Workers are never forked from the dispatcher: they share nothing with it
    but the jobs they are given. They fork from a fresh fork server that has
    only imported what a problem run needs (:mod:`agentrig.run.preload`), so
    imports are paid once per run, not once per worker. A worker that dies is
    recorded as a failed problem, a new worker takes its place, and the
    others go on.
    """

    tick_interval = 0.2

    def __init__(self, workers: int) -> None:
        """Run at most ``workers`` problems concurrently."""
        self.workers = max(1, workers)

    def run(self, jobs: Sequence[ProblemJob], emit: EventSink, done: DoneCallback, tick: Callable[[], None]) -> None:
        """Run the jobs, ``workers`` at a time."""
        from agentrig.run.preload import modules_for, worker_context

        context = worker_context(modules_for(jobs[0])) if jobs else multiprocessing.get_context("spawn")
        job_queue = context.Queue()
        results = context.Queue()
        by_name = {job.problem_name: job for job in jobs}
        for job in jobs:
            job_queue.put(job.model_dump_json())
        unstarted = len(jobs)
        processes: dict[int, Any] = {}
        current: dict[int, str] = {}  # worker pid -> the problem it is running
        finished: set[str] = set()

        def receive(timeout: float) -> None:
            nonlocal unstarted
            try:
                kind, payload = results.get(timeout=timeout)
            except queue_module.Empty:
                return
            if kind == "event":
                emit(ProgressEvent.model_validate_json(payload))
            elif kind == "start":
                name, pid = json.loads(payload)
                current[pid] = name
                unstarted -= 1
            else:
                record = ProblemRecord.model_validate_json(payload)
                if record.name not in finished and record.name in by_name:
                    finished.add(record.name)
                    done(by_name[record.name], record)
                for pid, name in list(current.items()):
                    if name == record.name:
                        del current[pid]

        def spawn() -> None:
            process = context.Process(target=_worker, args=(job_queue, results, os.getpid()), name="agentrig-worker")
            process.start()
            processes[process.pid] = process

        try:
            for _ in range(min(self.workers, len(jobs))):
                spawn()
            while len(finished) < len(jobs):
                receive(self.tick_interval)
                tick()
                for pid, process in list(processes.items()):
                    if process.is_alive():
                        continue
                    deadline = time.monotonic() + 2
                    while pid in current and current[pid] not in finished and time.monotonic() < deadline:
                        receive(0.1)  # what it sent before it died
                    name = current.pop(pid, None)
                    if name is not None and name not in finished:
                        finished.add(name)
                        done(by_name[name], _crashed(by_name[name], process.exitcode))
                    process.join()
                    del processes[pid]
                    if unstarted > 0 and len(processes) < self.workers:
                        spawn()
                if not processes and len(finished) < len(jobs):
                    if unstarted <= 0:  # nobody will report the rest: should not happen, but never hang
                        for name, job in by_name.items():
                            if name not in finished:
                                finished.add(name)
                                done(job, _crashed(job, None))
                    else:
                        spawn()
            for _ in processes:
                job_queue.put(None)
            for process in processes.values():
                process.join(10)
        except KeyboardInterrupt:
            self._shutdown(processes, receive)
            raise

    @staticmethod
    def _shutdown(processes: dict[int, Any], receive: Callable[[float], None]) -> None:
        """Ask every worker to stop (SIGTERM: agent cleanup, containers removed), then make sure."""
        from agentrig.run.signals import deferred_interrupts

        with deferred_interrupts():
            for process in processes.values():
                if process.is_alive() and process.pid:
                    try:
                        os.kill(process.pid, signal.SIGTERM)
                    except ProcessLookupError:
                        pass
            deadline = time.monotonic() + SHUTDOWN_GRACE
            while any(p.is_alive() for p in processes.values()) and time.monotonic() < deadline:
                receive(0.1)  # keep their queue flowing so they can exit
            for process in processes.values():
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
