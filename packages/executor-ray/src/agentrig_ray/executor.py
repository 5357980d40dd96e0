"""``--executor ray``: each problem run by a worker actor on some node of a cluster.

The dispatcher (``agentrig run``) connects as a Ray driver, borrows warm
:class:`~agentrig_ray.task.ProblemWorker` actors from the cluster's
:class:`~agentrig_ray.pool.WorkerPool` (starting new ones up to what it can
use), hands each idle one a problem, and relays the events the workers send
through an :class:`~agentrig_ray.task.EventChannel` actor; the dispatcher
records each checkpoint's result line as its ``checkpoint_end`` event
arrives, and alone writes ``results.jsonl``, ``run.json`` and ``problem.json``.
Artifacts reach the run directory one of two ways (``-c executor.storage``):

* ``shared`` (the default): the run directory is on storage every node
  mounts at the same path (on one machine: any directory); problem runs write
  their artifacts into it;
* ``ship``: the nodes do not see the run directory. A problem runs in a
  directory of its worker's own; each finished checkpoint's directory is
  packed and sent back with its event, and the dispatcher writes it into the
  run directory before recording the line. A resumed or retried problem gets
  the finished checkpoints' snapshot and trajectories packed by the dispatcher.

Faults: a problem whose worker process or node dies is run again on another
worker, at most ``max_retries`` times, as a job made anew from what the
dispatcher has recorded (:meth:`~agentrig.run.job.ProblemJob.resumed`): it
starts after the last recorded checkpoint, so a recorded checkpoint is never
redone, and the dispatcher records a checkpoint delivered twice only once. Ctrl-C stops every
problem (``KeyboardInterrupt`` inside it: the agent and its containers are
cleaned up), waits for them, and kills the workers still busy after a grace
period. A dispatcher that dies (``kill -9``) is noticed by its workers, which
stop its problems the same way.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentrig.executors import DoneCallback, EventReceiver, Executor, ExecutorError, ExecutorUnavailableError
from agentrig.run.job import ProblemJob
from agentrig.run.progress import ProgressEvent
from agentrig.run.records import ProblemRecord, utcnow

log = logging.getLogger(__name__)

#: Seconds cancelled tasks get to clean up (agent, containers) before they are force-killed.
SHUTDOWN_GRACE = 30.0

#: Seconds the cluster gets to start agentrig's worker pool (an actor) when a run connects.
POOL_START_TIMEOUT = 120.0

#: Seconds between two looks for warm workers given back by other runs while this run's new ones cannot start.
BORROW_INTERVAL = 2.0

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
    storage: Literal["shared", "ship"] = Field(
        default="shared",
        description="shared: every node sees the run directory at the same path; ship: artifacts are sent back to the dispatcher",
    )
    keep_warm: float = Field(
        default=300.0, ge=0,
        description="seconds idle workers stay up for the next run, their imports done (0: they end with the run)",
    )


def _tcp_target(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of an explicit address, ``None`` for ``auto``."""
    if address == "auto":
        return None
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise ExecutorError(f"-c executor.address={address}: expected HOST:PORT, ray://HOST:PORT or auto")
    return host.strip("[]"), int(port)


def _named(address: str) -> str:
    """How an address is named in messages: ``auto`` says where it pointed (``RAY_ADDRESS``)."""
    if address == "auto" and os.environ.get("RAY_ADDRESS"):
        return f"auto (RAY_ADDRESS={os.environ['RAY_ADDRESS']})"
    return address


def _check_reachable(address: str) -> None:
    """One TCP connection to the head (``auto``: to ``RAY_ADDRESS`` when set), before Ray's own slow retries."""
    target = _tcp_target(address)
    if target is None and os.environ.get("RAY_ADDRESS", "auto") != "auto":
        try:
            target = _tcp_target(os.environ["RAY_ADDRESS"])
        except ExecutorError:
            raise ExecutorError(f"RAY_ADDRESS={os.environ['RAY_ADDRESS']}: expected HOST:PORT or ray://HOST:PORT (-c executor.address=auto)") from None
    if target is None:
        return
    try:
        with socket.create_connection(target, timeout=CONNECT_TIMEOUT):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ExecutorUnavailableError(f"cannot reach the Ray cluster at {_named(address)} ({reason}); check -c executor.address") from None


def _connect_error(address: str, exc: BaseException) -> str:
    """The line for a failed ``ray.init``; Ray Client's per-client server dying while starting names the head's fix."""
    text = " ".join(str(exc).split())
    if "Starting Ray client server failed" in text:
        # the head's proxier forks it from a busy gRPC server, and gRPC's fork handlers (on by default)
        # can crash the child before it runs (ray-project/ray#63202)
        return (
            f"cannot connect to the Ray cluster at {_named(address)}: the head's Ray Client server could not start"
            " a server for this client (its process died while starting); start the head node with"
            " GRPC_ENABLE_FORK_SUPPORT=0 in its environment, or use -c executor.address=HEAD:PORT"
        )
    return f"cannot reach the Ray cluster at {_named(address)}: {text[:300]}"


def _last_error(exc: BaseException) -> str:
    """The last ``SomeError: text`` line of a Ray error (whose text holds a remote traceback, colored)."""
    import re

    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))
    lines = [line.strip() for line in text.splitlines() if re.match(r"^\s*[A-Za-z_.]*(Error|Exception)\b.*:", line)]
    return (lines[-1] if lines else " ".join(text.split()))[:300]


def _failed(job: ProblemJob, error: str) -> ProblemRecord:
    return ProblemRecord(name=job.problem_name, path=job.problem_path, status="failed", error=error, ended=utcnow())


def _describe(exc: BaseException, retries: int) -> str:
    """One line for a task that ended in a Ray error."""
    import ray.exceptions as rex

    if isinstance(exc, rex.RayTaskError):
        cause = exc.cause if getattr(exc, "cause", None) is not None else exc
        text = " ".join(str(cause).split())
        return f"{type(cause).__name__}: {text}" if text else type(cause).__name__
    if isinstance(exc, (rex.RayActorError, rex.WorkerCrashedError, rex.NodeDiedError, rex.OutOfMemoryError, rex.LocalRayletDiedError)):
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


class _Slot:
    """The dispatcher's side of one worker: its handle, whether it answered, the job it runs."""

    def __init__(self, worker: Any, fresh: bool) -> None:
        self.worker = worker
        self.fresh = fresh  # started for this run (a failure to start is not a problem's fault)
        self.ready_ref: Any = worker.ready.remote()
        self.job: ProblemJob | None = None
        self.ref: Any = None


class RayExecutor(Executor):
    """Problems on warm Ray worker actors; ``--jobs N`` (N > 1) caps the problems in flight, else the cluster's CPUs do."""

    options_model = RayOptions
    tick_interval = 0.2

    def __init__(self, options: Mapping[str, Any] | None = None, *, jobs: int = 1) -> None:
        """Validate the options; connect to nothing yet."""
        super().__init__(options, jobs=jobs)
        assert isinstance(self.options, RayOptions)
        self.settings: RayOptions = self.options
        _tcp_target(self.settings.address)  # a malformed address is a usage error, found now
        if self.settings.address == "auto" and os.environ.get("RAY_ADDRESS", "auto") != "auto":
            try:
                _tcp_target(os.environ["RAY_ADDRESS"])
            except ExecutorError:
                raise ExecutorError(
                    f"RAY_ADDRESS={os.environ['RAY_ADDRESS']}: expected HOST:PORT or ray://HOST:PORT (-c executor.address=auto)"
                ) from None
        self._connected = False
        self._env: dict[str, str] = {}
        self._pool_actor: Any = None

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
        public, secrets = forwarded(os.environ, self.settings.env)
        self._env = {**public, **secrets}  # to the workers through the object store, never a runtime env
        try:
            ray.init(
                address=address,
                namespace="agentrig",
                logging_level=logging.ERROR,
                log_to_driver=False,  # worker output would tear through the progress display
            )
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ExecutorUnavailableError(_connect_error(address, exc)) from None
        self._connected = True
        _quiet_raylet_messages()
        self._pool_actor = self._check_pool(address)

    def _check_pool(self, address: str) -> Any:
        """The cluster's worker pool, started if need be: a cluster without agentrig-ray on its nodes stops here."""
        import ray

        pool = self._pool()
        try:
            ray.get(pool.stats.remote(), timeout=POOL_START_TIMEOUT)
        except ray.exceptions.GetTimeoutError:
            raise ExecutorUnavailableError(
                f"the Ray cluster at {_named(address)} did not start agentrig's worker pool within {POOL_START_TIMEOUT:.0f} s"
            ) from None
        except ray.exceptions.RayError as exc:
            raise ExecutorUnavailableError(
                f"the Ray cluster at {_named(address)} cannot run agentrig's workers ({_last_error(exc)});"
                " install agentrig-ray and the agent packages on every node"
            ) from None
        return pool

    def close(self) -> None:
        """Disconnect from the cluster (the cluster itself keeps running)."""
        if self._connected:
            import ray

            ray.shutdown()
            self._connected = False

    # -- the run --------------------------------------------------------------

    def _capacity(self) -> int:
        """How many problems the cluster's resources fit at once for this run's per-problem reservation."""
        import ray

        total = ray.cluster_resources()
        needs = {"CPU": self.settings.num_cpus, **self.settings.resources}
        fits = [int(total.get(name, 0.0) // amount) for name, amount in needs.items() if amount > 0]
        return max(1, min(fits)) if fits else 0

    def _flavor(self) -> str:
        import json

        import agentrig

        return json.dumps(
            [self.settings.num_cpus, sorted(self.settings.resources.items()), getattr(agentrig, "__version__", "")]
        )

    def _pool(self) -> Any:
        import ray

        from agentrig_ray.pool import POOL_NAME, WorkerPool

        return (
            ray.remote(WorkerPool)
            .options(name=POOL_NAME, get_if_exists=True, lifetime="detached", num_cpus=0, max_concurrency=1000)
            .remote()
        )

    def run(self, jobs: Sequence[ProblemJob], emit: EventReceiver, done: DoneCallback, tick: Callable[[], None]) -> None:
        """Hand every job to a worker (at most ``--jobs`` at once when N > 1), relay events, report records."""
        import uuid

        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from agentrig.executors.preload import modules_for
        from agentrig.run.signals import deferred_interrupts
        from agentrig_ray.task import EventChannel, StopSignal

        settings = self.settings
        ship = settings.storage == "ship"
        run_id = uuid.uuid4().hex
        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=True)
        channel = ray.remote(EventChannel).options(num_cpus=0, scheduling_strategy=here).remote()
        stop = ray.remote(StopSignal).options(num_cpus=0, scheduling_strategy=here, max_concurrency=1000).remote()
        env = ray.put(self._env)  # a reference in the calls' arguments, never the values
        flavor = self._flavor()
        options: dict[str, Any] = {"num_cpus": settings.num_cpus}
        if settings.resources:
            options["resources"] = settings.resources
        modules = modules_for(jobs[0]) if jobs else []
        wanted = min(len(jobs), self.jobs if self.jobs > 1 else (self._capacity() or len(jobs)))
        pool = self._pool_actor
        pending = deque(jobs)
        slots: list[_Slot] = [
            _Slot(worker, fresh=False) for worker in ray.get(pool.checkout.remote(run_id, flavor, wanted, stop, settings.keep_warm))
        ]
        deaths: dict[str, int] = {}
        failed_starts = 0

        def add_workers() -> None:
            missing = min(wanted, len(pending) + sum(s.job is not None for s in slots)) - len(slots)
            if missing > 0:
                for worker in ray.get(pool.create.remote(run_id, flavor, missing, options, modules)):
                    slots.append(_Slot(worker, fresh=True))

        last_borrow = time.monotonic()

        def borrow_idle() -> None:
            """Workers still starting (a full cluster): take idle warm ones that another run gave back meanwhile."""
            nonlocal last_borrow
            starting = [slot for slot in slots if slot.ready_ref is not None and slot.fresh]
            if not starting or not pending or time.monotonic() - last_borrow < BORROW_INTERVAL:
                return
            last_borrow = time.monotonic()
            for worker in ray.get(pool.checkout.remote(run_id, flavor, len(starting), stop, settings.keep_warm)):
                slots.append(_Slot(worker, fresh=False))
                lose(starting.pop())

        def assign() -> None:
            for slot in slots:
                if not pending:
                    return
                if slot.ready_ref is None and slot.job is None:
                    job = pending.popleft()
                    slot.job = job
                    slot.ref = slot.worker.run.options(name=f"agentrig:{job.problem_name}").remote(
                        job.model_dump_json(), job.problem_name, run_id, channel, stop, env, ship, resume_of(job)
                    )

        def resume_of(job: ProblemJob) -> Any:
            """What a shipping worker needs of the job's finished checkpoints (a reference), else ``None``."""
            if not ship or not job.finished:
                return None
            from pathlib import Path

            from agentrig.run.shipping import pack_resume

            return ray.put(pack_resume(Path(job.output_dir), job.problem_name, job.finished))

        relayed = 0  # events recorded so far; the channel keeps the rest until told

        def relay() -> None:
            """Record the events that arrived; an interrupt waits until the one being recorded is whole."""
            nonlocal relayed
            for text, artifacts in ray.get(channel.take.remote(relayed)):
                with deferred_interrupts():
                    emit(ProgressEvent.model_validate_json(text), artifacts)
                    relayed += 1

        def lose(slot: _Slot) -> None:
            slots.remove(slot)
            pool.discard.remote(run_id, slot.worker)

        def finish(slot: _Slot) -> None:
            job = slot.job
            assert job is not None
            try:
                record = ProblemRecord.model_validate_json(ray.get(slot.ref))
            except ray.exceptions.RayActorError as exc:  # the worker (or its node) died mid-problem
                lose(slot)
                deaths[job.problem_name] = deaths.get(job.problem_name, 0) + 1
                if deaths[job.problem_name] <= settings.max_retries:
                    # run again after the last checkpoint the dispatcher recorded (relay() ran before)
                    pending.appendleft(job.resumed())
                    return
                record = _failed(job, _describe(exc, settings.max_retries))
            except ray.exceptions.RayError as exc:
                record = _failed(job, _describe(exc, settings.max_retries))
            slot.job = slot.ref = None
            done(job, record)

        def started(slot: _Slot) -> None:
            nonlocal failed_starts
            try:
                current = ray.get(slot.ready_ref)
                slot.ready_ref = None
                if current is False:  # a warm worker whose code changed on disk since it started
                    lose(slot)
            except ray.exceptions.RayError as exc:  # a warm worker that died meanwhile, or one that cannot start
                lose(slot)
                if slot.fresh:
                    failed_starts += 1
                    if failed_starts > settings.max_retries + 2:
                        while pending:
                            job = pending.popleft()
                            done(job, _failed(job, f"no Ray worker could start: {_describe(exc, settings.max_retries)}"))

        try:
            add_workers()
            while pending or any(slot.job is not None for slot in slots):
                assign()
                waiting = {slot.ref: slot for slot in slots if slot.ref is not None}
                waiting.update({slot.ready_ref: slot for slot in slots if slot.ready_ref is not None})
                ready, _ = ray.wait(list(waiting), num_returns=1, timeout=self.tick_interval) if waiting else ([], [])
                if ready:
                    ready, _ = ray.wait(list(waiting), num_returns=len(waiting), timeout=0)
                relay()  # a finished problem's events were all received before its record was returned
                for ref in ready:
                    slot = waiting[ref]
                    if slot.ready_ref is not None and ref == slot.ready_ref:  # (Ray Client: equal, not the same object)
                        started(slot)
                    else:
                        finish(slot)
                if pending:
                    add_workers()
                    borrow_idle()
                tick()
        except KeyboardInterrupt:
            pending.clear()
            self._cancel(slots, relay, stop, pool, run_id)
            raise
        finally:
            self._return(slots, pool, run_id)

    @staticmethod
    def _return(slots: list[_Slot], pool: Any, run_id: str) -> None:
        """Give the workers back to the pool (warm for the next run); those that never answered are ended."""
        import ray

        for slot in slots:
            if slot.ready_ref is not None:
                pool.discard.remote(run_id, slot.worker)
        try:
            ray.get(pool.checkin.remote(run_id), timeout=5)
        except (ray.exceptions.RayError, TimeoutError):  # the pool takes them back anyway once this driver is gone
            pass

    @staticmethod
    def _cancel(slots: list[_Slot], relay: Callable[[], None], stop: Any, pool: Any, run_id: str) -> None:
        """Stop every problem (it cleans up), wait, then end the workers still busy after the grace period."""
        import ray

        from agentrig.run.signals import deferred_interrupts

        with deferred_interrupts():
            stop.stop.remote()
            refs = [slot.ref for slot in slots if slot.ref is not None]
            deadline = time.monotonic() + SHUTDOWN_GRACE
            while refs and time.monotonic() < deadline:
                _, refs = ray.wait(refs, num_returns=len(refs), timeout=0.2)
                try:
                    relay()  # after the wait: what the problems sent before they returned is in the channel
                except ray.exceptions.RayError:
                    break
            for slot in list(slots):
                if slot.ref is not None and slot.ref in refs:
                    ray.kill(slot.worker, no_restart=True)
                    slots.remove(slot)
                    pool.discard.remote(run_id, slot.worker)
