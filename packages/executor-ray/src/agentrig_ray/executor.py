"""``--executor ray``: each problem a Ray task on some node of a cluster.

The dispatcher (``agentrig run``) connects as a Ray driver, submits one task
per problem (:func:`agentrig_ray.task.run_problem_task`) and relays the events
the tasks send through an :class:`~agentrig_ray.task.EventChannel` actor. Problem
runs write their artifacts and ``results.jsonl`` lines into the run directory
themselves, so the run directory must be on storage every node mounts at the
same path (on one machine: any directory).

Faults: a task whose worker process or node dies is retried by Ray, at most
``max_retries`` times; the retry starts after the problem's last finished
checkpoint (``run_problem`` reads ``results.jsonl``), so a finished
checkpoint is never redone nor recorded twice. Ctrl-C cancels every task
(``KeyboardInterrupt`` inside it: the agent and its containers are cleaned
up), waits for them, and force-kills what is left after a grace period.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentrig.executors import DoneCallback, Executor, ExecutorError, ExecutorUnavailableError
from agentrig.run.job import ProblemJob
from agentrig.run.progress import EventSink, ProgressEvent
from agentrig.run.records import ProblemRecord, utcnow

log = logging.getLogger(__name__)

#: Seconds cancelled tasks get to clean up (agent, containers) before they are force-killed.
SHUTDOWN_GRACE = 30.0

#: Seconds to wait for a TCP answer from the cluster's address before giving up.
CONNECT_TIMEOUT = 5.0


class RayOptions(BaseModel):
    """``-c executor.KEY=VALUE`` options of the ``ray`` executor."""

    model_config = ConfigDict(extra="forbid")

    address: str = Field(
        default="auto",
        description="HOST:PORT of the cluster's head (GCS), ray://HOST:PORT (Ray Client), or auto (RAY_ADDRESS, else the cluster started on this machine)",
    )
    num_cpus: float = Field(default=1.0, ge=0, description="CPUs each problem's task reserves")
    resources: dict[str, float] = Field(default_factory=dict, description="custom resources each task reserves, e.g. {docker: 1}")
    max_retries: int = Field(default=2, ge=0, description="times a problem is retried after its worker or node died")
    env: list[str] = Field(default_factory=list, description="more environment variables to send to the workers")


def _tcp_target(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of an explicit address, ``None`` for ``auto``."""
    if address == "auto":
        return None
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise ExecutorError(f"-c executor.address={address}: expected HOST:PORT, ray://HOST:PORT or auto")
    return host.strip("[]"), int(port)


def _check_reachable(address: str) -> None:
    target = _tcp_target(address)
    if target is None:
        return
    try:
        with socket.create_connection(target, timeout=CONNECT_TIMEOUT):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ExecutorUnavailableError(f"cannot reach the Ray cluster at {address} ({reason}); check -c executor.address") from None


def _failed(job: ProblemJob, error: str) -> ProblemRecord:
    return ProblemRecord(name=job.problem_name, path=job.problem_path, status="failed", error=error, ended=utcnow())


def _describe(exc: BaseException, retries: int) -> str:
    """One line for a task that ended in a Ray error."""
    import ray.exceptions as rex

    if isinstance(exc, rex.RayTaskError):
        cause = exc.cause if getattr(exc, "cause", None) is not None else exc
        text = " ".join(str(cause).split())
        return f"{type(cause).__name__}: {text}" if text else type(cause).__name__
    if isinstance(exc, (rex.WorkerCrashedError, rex.NodeDiedError, rex.OutOfMemoryError, rex.LocalRayletDiedError)):
        return f"the Ray worker running it died {retries + 1} times ({type(exc).__name__}); gave up after -c executor.max_retries={retries}"
    text = " ".join(str(exc).split())
    return f"Ray: {type(exc).__name__}: {text[:300]}"


def _quiet_raylet_messages() -> None:
    """Keep Ray's error messages (a worker died, ...) off this process's stdout.

    A Ray driver prints the cluster's error messages for its job to stdout from a
    thread of its own, whatever ``log_to_driver`` says, through
    ``ray._private.worker.print_to_stdstream``; they would land in the middle of
    the progress display and the results table. What they report reaches the
    user as agentrig's own events and records (a retry resumes at checkpoint
    N; a problem that failed says why), so they go to the debug log instead.
    """
    try:
        import ray._private.worker as ray_worker
    except ImportError:  # a future Ray without it: its messages are printed, nothing breaks
        return

    def to_debug_log(data: Any, ignore_prefix: bool = False) -> None:
        for line in data.get("lines", []) if isinstance(data, dict) else []:
            log.debug("ray: %s", line)

    ray_worker.print_to_stdstream = to_debug_log


class RayExecutor(Executor):
    """Problems as Ray tasks; ``--jobs N`` (N > 1) caps the tasks in flight, else the cluster's CPUs do."""

    options_model = RayOptions
    tick_interval = 0.2

    def __init__(self, options: Mapping[str, Any] | None = None, *, jobs: int = 1) -> None:
        """Validate the options; connect to nothing yet."""
        super().__init__(options, jobs=jobs)
        assert isinstance(self.options, RayOptions)
        self.settings: RayOptions = self.options
        _tcp_target(self.settings.address)  # a malformed address is a usage error, found now
        self._connected = False

    # -- connection -------------------------------------------------------------

    def open(self) -> None:
        """Connect to the cluster as a driver; one line naming the address when it cannot be reached."""
        try:
            import ray
        except ImportError:
            raise ExecutorError("ray is not installed: pip install agentrig-ray") from None
        from agentrig_ray.environment import forwarded

        address = self.settings.address
        _check_reachable(address)
        public, self._secrets = forwarded(os.environ, self.settings.env)
        try:
            ray.init(
                address=address,
                runtime_env={"env_vars": public} if public else None,
                namespace="agentrig",
                logging_level=logging.ERROR,
                log_to_driver=False,  # worker output would tear through the progress display
            )
        except (ConnectionError, RuntimeError, ValueError) as exc:
            text = " ".join(str(exc).split())
            raise ExecutorUnavailableError(f"cannot reach the Ray cluster at {address}: {text[:300]}") from None
        self._connected = True
        _quiet_raylet_messages()

    def close(self) -> None:
        """Disconnect from the cluster (the cluster itself keeps running)."""
        if self._connected:
            import ray

            ray.shutdown()
            self._connected = False

    # -- the run --------------------------------------------------------------

    def run(self, jobs: Sequence[ProblemJob], emit: EventSink, done: DoneCallback, tick: Callable[[], None]) -> None:
        """Submit every job as a task (at most ``--jobs`` at once when N > 1), relay events, report records."""
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from agentrig_ray.task import EventChannel, StopSignal, run_problem_task

        settings = self.settings
        here = ray.get_runtime_context().get_node_id()
        channel = (
            ray.remote(EventChannel)
            .options(num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=True))
            .remote()
        )
        stop = ray.remote(StopSignal).options(num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=True)).remote()
        secrets = ray.put(self._secrets)  # a reference in the task's arguments, never the values
        task = ray.remote(run_problem_task)
        task_options: dict[str, Any] = {
            "num_cpus": settings.num_cpus,
            "max_retries": settings.max_retries,
            "retry_exceptions": False,  # a problem's own failure is in its record, not raised
        }
        if settings.resources:
            task_options["resources"] = settings.resources
        limit = self.jobs if self.jobs > 1 else len(jobs)
        pending = deque(jobs)
        running: dict[Any, ProblemJob] = {}

        def submit() -> None:
            while pending and len(running) < limit:
                job = pending.popleft()
                ref = task.options(name=f"agentrig:{job.problem_name}", **task_options).remote(job.model_dump_json(), channel, stop, secrets)
                running[ref] = job

        def relay() -> None:
            for text in ray.get(channel.take.remote()):
                emit(ProgressEvent.model_validate_json(text))

        def finish(ref: Any) -> None:
            job = running.pop(ref)
            try:
                record = ProblemRecord.model_validate_json(ray.get(ref))
            except ray.exceptions.RayError as exc:
                record = _failed(job, _describe(exc, settings.max_retries))
            done(job, record)

        try:
            submit()
            while running:
                ready, _ = ray.wait(list(running), num_returns=1, timeout=self.tick_interval)
                if ready:
                    ready, _ = ray.wait(list(running), num_returns=len(running), timeout=0)
                relay()  # a finished task's events were all received before it returned
                for ref in ready:
                    finish(ref)
                submit()
                tick()
        except KeyboardInterrupt:
            pending.clear()
            self._cancel(running, relay, stop)
            raise

    @staticmethod
    def _cancel(running: dict[Any, ProblemJob], relay: Callable[[], None], stop: Any) -> None:
        """Stop every task (running ones clean up, queued ones never start), wait, then force-kill what is left."""
        import ray

        from agentrig.run.signals import deferred_interrupts

        with deferred_interrupts():
            refs = list(running)
            stop.stop.remote()
            for ref in refs:
                ray.cancel(ref, force=False)
            deadline = time.monotonic() + SHUTDOWN_GRACE
            while refs and time.monotonic() < deadline:
                _, refs = ray.wait(refs, num_returns=len(refs), timeout=0.2)
                try:
                    relay()
                except ray.exceptions.RayError:
                    break
            for ref in refs:
                try:
                    ray.cancel(ref, force=True)
                except ray.exceptions.RayError:
                    pass
            if refs:
                ray.wait(refs, num_returns=len(refs), timeout=5)
