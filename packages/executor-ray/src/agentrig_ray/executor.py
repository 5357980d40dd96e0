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
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentrig.executors import DoneCallback, EventReceiver, Executor, ExecutorError, ExecutorUnavailableError
from agentrig.run.job import ProblemJob
from agentrig_ray.options import RayOptions

log = logging.getLogger(__name__)

#: Seconds the cluster gets to start agentrig's worker pool (an actor) when a run connects.
POOL_START_TIMEOUT = 120.0

#: Seconds to wait for a TCP answer from the cluster's address before giving up.
CONNECT_TIMEOUT = 5.0


def _tcp_target(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of an explicit address, ``None`` for ``auto``."""
    if address == "auto":
        return None
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not (port.isascii() and port.isdigit()):
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
            given = os.environ["RAY_ADDRESS"]
            raise ExecutorError(f"RAY_ADDRESS={given}: expected HOST:PORT or ray://HOST:PORT (-c executor.address=auto)") from None
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
        from agentrig_ray.dispatch import RayDispatch

        wanted = min(len(jobs), self.jobs if self.jobs > 1 else (self._capacity() or len(jobs)))
        dispatch = RayDispatch(
            self.settings, self._pool_actor, jobs, emit, done, env=self._env, flavor=self._flavor(), wanted=wanted
        )
        try:
            dispatch.add_workers()
            while dispatch.busy():
                dispatch.step(self.tick_interval)
                tick()
        except KeyboardInterrupt:
            dispatch.cancel()
            raise
        finally:
            dispatch.give_back()
