"""What runs on a Ray node: one problem, through agentrig's own ``run_problem``, its events sent back in order.

:func:`run_problem_task` is the Ray task (one per problem). Two actors owned by
the dispatcher go with it:

* :class:`EventChannel` carries the task's events. Ray runs the calls one
  caller makes on a (synchronous) actor in the order they were made, so a
  problem's events arrive in order; the task's last call waits for the
  channel to have them all before the task returns, so they come before its result.
* :class:`StopSignal` tells running tasks to stop. ``ray.cancel`` alone raises
  ``KeyboardInterrupt`` only when the task next runs Python code, not while it
  waits in a system call (a model request can take minutes); so a thread of
  each worker waits on this actor and, when the dispatcher says stop or dies
  (the actor dies with its owner), sends the worker a real SIGTERM, which
  interrupts the wait and unwinds ``run_problem`` exactly as Ctrl-C does: the
  agent cleaned up, its containers removed, what finished written.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
from pathlib import Path
from typing import Any


class EventChannel:
    """A mailbox of progress events (JSON strings) that the dispatcher empties every tick."""

    def __init__(self) -> None:
        """Start empty."""
        self._events: list[str] = []

    def put(self, event: str) -> None:
        """Add one event."""
        self._events.append(event)

    def take(self) -> list[str]:
        """Every event received since the last call, in arrival order."""
        events, self._events = self._events, []
        return events

    def flush(self) -> None:
        """Nothing: returning means every earlier ``put`` of the caller has been received."""


class StopSignal:
    """Set once by the dispatcher (Ctrl-C); every worker's watcher is waiting on it."""

    def __init__(self) -> None:
        """Not set."""
        import asyncio

        self._stop = asyncio.Event()

    async def wait(self) -> None:
        """Return once :meth:`stop` was called."""
        await self._stop.wait()

    async def stop(self) -> None:
        """Release every waiter."""
        self._stop.set()


class _Watcher:
    """This worker process's thread waiting on the run's :class:`StopSignal`; signals the problem running here."""

    lock = threading.Lock()
    watched: set[str] = set()
    running = False

    @classmethod
    def ensure(cls, stop: Any) -> None:
        key = str(stop._actor_id)  # one thread per process and run
        with cls.lock:
            if key in cls.watched:
                return
            cls.watched.add(key)
        threading.Thread(target=cls._wait, args=(stop,), name="agentrig-stop-watch", daemon=True).start()

    @classmethod
    def _wait(cls, stop: Any) -> None:
        import ray

        try:
            ray.get(stop.wait.remote())
        except Exception:  # noqa: BLE001 - the actor died with the dispatcher: stop just the same
            pass
        if cls.running:
            os.kill(os.getpid(), signal.SIGTERM)


class RunDirectoryNotVisibleError(RuntimeError):
    """The run directory is not on storage this node sees at the same path."""


def _check_run_directory(output_dir: str) -> None:
    if not (Path(output_dir) / "run.json").is_file():
        raise RunDirectoryNotVisibleError(
            f"run directory {output_dir} is not visible on Ray node {socket.gethostname()}:"
            " --output must be on storage every node mounts at the same path"
        )


#: Under the run directory: one lock file per problem, held by the task running it.
LOCKS_DIR = ".agentrig-locks"


def _lock_problem(output_dir: str, problem: str) -> int:
    """Hold the problem's lock (waiting for an earlier holder); returns the fd to close when done.

    Ray retries a task whose node it believes dead; a node that was only cut
    off may still be running the first attempt. The lock, on the shared run
    directory, makes the retry wait until that attempt is really over, so two
    attempts never run one problem at once. A dead holder's lock is released
    by its kernel at once.
    """
    import fcntl

    locks = Path(output_dir) / LOCKS_DIR
    locks.mkdir(exist_ok=True)
    # an attempt's unit name is '<problem>/attempt_<i>' (--attempts K): one flat file each
    fd = os.open(locks / f"{problem.replace('/', '~')}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return fd


def run_problem_task(job_json: str, channel: Any, stop: Any, secrets: dict[str, str]) -> str:
    """Run one problem (a :class:`~agentrig.run.job.ProblemJob` as JSON); return its ``ProblemRecord`` as JSON.

    ``secrets`` (API keys) arrive through Ray's object store and are set in this
    worker's environment only while the problem runs. A retried task (its
    worker died) runs the problem again: ``run_problem`` starts after the last
    checkpoint recorded in ``results.jsonl``. Cancellation (``ray.cancel``)
    raises ``KeyboardInterrupt`` here, which ``run_problem`` answers by
    cleaning up the agent and its containers before it re-raises.
    """
    from agentrig.run.job import ProblemJob
    from agentrig.run.problem_run import run_problem
    from agentrig.run.progress import ProgressEvent
    from agentrig.run.signals import install_termination_handler

    job = ProblemJob.model_validate_json(job_json)
    _check_run_directory(job.output_dir)
    sending = threading.Lock()  # agents may emit steps from their own threads

    def emit(event: ProgressEvent) -> None:
        with sending:
            channel.put.remote(event.model_dump_json())

    saved = {name: os.environ.get(name) for name in secrets}
    os.environ.update(secrets)
    ray_handler = signal.getsignal(signal.SIGTERM)
    install_termination_handler()  # SIGTERM: Terminated (a KeyboardInterrupt), as in agentrig's own workers
    _Watcher.running = True
    _Watcher.ensure(stop)
    lock = -1
    try:
        lock = _lock_problem(job.output_dir, job.problem_name)
        record = run_problem(job, emit)
    finally:
        if lock >= 0:
            os.close(lock)
        _Watcher.running = False
        signal.signal(signal.SIGTERM, ray_handler)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    import ray

    ray.get(channel.flush.remote())
    return record.model_dump_json()
