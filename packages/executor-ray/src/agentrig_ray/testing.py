"""A real Ray cluster on this machine for tests and benchmarks: a head node and a second worker node.

Both nodes are started with ``ray start --block`` in a session of their own,
bound to 127.0.0.1, under a temporary directory of their own. Teardown ends
exactly the processes of this cluster (never ``ray stop``, which ends every
Ray process of the machine, other people's too): each ``ray start`` process,
its process group, and every process whose command line names the cluster's
directory, with their descendants (workers, agents).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

#: How long a node may take to start on a loaded machine.
START_TIMEOUT = 240.0

#: Times the whole cluster is started anew when a node does not come up.
START_ATTEMPTS = 5

#: How long starting the whole cluster (both nodes, every attempt) may take: well inside the
#: Ray tests' 900 s timeout, which the first test using the cluster shares with its start.
CLUSTER_START_TIMEOUT = 600.0


#: ``ray start`` made to come up on a machine shared by many busy processes (Ray 2.60):
#:
#: * the raylet waits 15 s (hard-coded, no setting) for the dashboard agent, a Python
#:   process that imports half of Ray, to write its port files; on a loaded machine the
#:   agent takes longer and the raylet aborts ("Timed out waiting for file
#:   .../dashboard_agent_listen_port_*", "Check failed"), every time. The dashboard agent's
#:   and the runtime-env agent's ports are given (``--dashboard-agent-grpc-port``,
#:   ``--dashboard-agent-listen-port``, ``--metrics-export-port``, ``--runtime-env-agent-port``),
#:   so their files are written here, with Ray's own ``persist_port``, before the raylet
#:   starts; the agents write the same ports again once they listen;
#: * a node's registration is waited for up to START_TIMEOUT instead of the 30 s
#:   hard-coded in ``ray._private.node``: the check it loops on is retried here, as long
#:   as the raylet lives (a raylet that died fails the attempt within Ray's own 30 s).
_PATIENT_RAY_START = f"""
import inspect, sys, time
import ray._private.services as services
from ray._raylet import (DASHBOARD_AGENT_LISTEN_PORT_NAME, METRICS_AGENT_PORT_NAME, METRICS_EXPORT_PORT_NAME,
                         RUNTIME_ENV_AGENT_PORT_NAME, persist_port)
_start_raylet = services.start_raylet
_raylets = []
def start_raylet(*args, **kwargs):
    given = inspect.signature(_start_raylet).bind(*args, **kwargs).arguments
    for name, port in [(DASHBOARD_AGENT_LISTEN_PORT_NAME, given.get("dashboard_agent_listen_port")),
                       (METRICS_AGENT_PORT_NAME, given.get("metrics_agent_port")),
                       (METRICS_EXPORT_PORT_NAME, given.get("metrics_export_port")),
                       (RUNTIME_ENV_AGENT_PORT_NAME, given.get("runtime_env_agent_port"))]:
        if port:
            persist_port(given["session_dir"], given["node_id"], name, port)
    info = _start_raylet(*args, **kwargs)
    _raylets.append(info.process)
    return info
services.start_raylet = start_raylet
_get_node = services.get_node
def get_node(gcs_address, node_id):
    deadline = time.monotonic() + {START_TIMEOUT}
    while True:
        try:
            return _get_node(gcs_address, node_id)
        except RuntimeError:
            if time.monotonic() > deadline or any(p.poll() is not None for p in _raylets):
                raise
            time.sleep(0.5)
services.get_node = get_node
from ray.scripts.scripts import main
sys.argv = ["ray", *sys.argv[1:]]
sys.exit(main())
"""


def require_ray() -> None:
    """Skip the calling test without Ray; fail it when ``CI`` is set (CI must install agentrig-ray's dependencies)."""
    import pytest

    try:
        import ray  # noqa: F401  # imported only to see that it can be
    except ImportError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but Ray is not importable ({exc}): pip install agentrig-ray", pytrace=False)
        pytest.skip(f"Ray is not installed ({exc})")


def free_port() -> int:
    """A TCP port nobody listens on now, below the ephemeral range (where Ray picks its own ports)."""
    import random

    for _ in range(100):
        port = random.randint(20000, 30000)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free TCP port between 20000 and 30000")


def ray_bin() -> str:
    """The ``ray`` script of the running interpreter's environment."""
    return str(Path(sys.executable).with_name("ray"))


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def processes_of(marker: str, roots: list[int] = []) -> set[int]:  # noqa: B006 - read only
    """Pids of the processes whose command line contains ``marker``, of ``roots``, and all their descendants."""
    tree = _children()
    found = {pid for pids in tree.values() for pid in pids if marker in _cmdline(pid)}
    found |= {pid for pid in roots if os.path.exists(f"/proc/{pid}")}
    todo = list(found)
    while todo:
        for child in tree.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    found.discard(os.getpid())
    return found


def task_workers(problem: str = "") -> list[int]:
    """Pids of Ray worker processes running a problem's task now (named ``agentrig:PROBLEM``, titled ``ray::agentrig:PROBLEM``)."""
    return [pid for pid in _children_flat() if _cmdline(pid).startswith(f"ray::agentrig:{problem}")]


def _children_flat() -> list[int]:
    return [pid for pids in _children().values() for pid in pids]


class LocalRayCluster:
    """``with LocalRayCluster(env) as cluster:`` a head (``cluster.address``) plus a worker node, torn down at exit.

    ``env`` is the nodes' environment: what a node of a real cluster has
    installed and set (its ``PYTHONPATH`` makes the agent packages importable);
    whatever the dispatcher sends comes on top.
    """

    def __init__(
        self, env: Mapping[str, str] | None = None, *, head_cpus: int = 1, worker_cpus: int = 1, hide_from_worker: bool = False
    ) -> None:
        """Choose ports and a directory; nothing starts before ``__enter__``.

        ``hide_from_worker``: the worker node runs in a mount namespace of its own
        where :attr:`hidden` (a directory the head and this process see) is an
        empty read-only file system: a run directory under it is on storage the
        worker node does not share, as on a cluster without shared storage
        (needs ``unshare``, i.e. root or user namespaces).
        """
        self.env = {**(env if env is not None else os.environ), "RAY_USAGE_STATS_ENABLED": "0"}
        # a token in ~/.ray/auth_token (written by any local ray.init()) would turn on token
        # authentication on the head but not on the second node, which then cannot join
        self.env.setdefault("RAY_AUTH_MODE", "disabled")
        # the head's Ray Client proxier forks one server per ray:// client from a busy gRPC server; with
        # gRPC's fork support on (grpcio's default) the child restarts gRPC's threads before exec and
        # sometimes segfaults there ("Starting Ray client server failed", empty logs: ray-project/ray#63202)
        self.env.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")
        self.head_cpus = head_cpus
        self.worker_cpus = worker_cpus
        self.hide_from_worker = hide_from_worker
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.client_port = free_port()
        while self.client_port == self.port:
            self.client_port = free_port()
        #: The head's Ray Client server (``ray://``), on a port of its own (Ray's default, 10001, is shared by every cluster here).
        self.client_address = f"ray://127.0.0.1:{self.client_port}"
        # short: Ray's unix socket paths under it must stay below 108 bytes
        self.root = Path(tempfile.mkdtemp(prefix="arr-", dir="/tmp"))
        #: A directory the worker node cannot see (with ``hide_from_worker``); outside the cluster's own.
        self.hidden = Path(tempfile.mkdtemp(prefix="arr-hidden-", dir="/tmp"))
        self.nodes: list[subprocess.Popen[bytes]] = []

    def _free_ports(self, count: int) -> list[int]:
        """``count`` free ports, none of them one this cluster uses already."""
        ports: list[int] = []
        while len(ports) < count:
            port = free_port()
            if port not in (self.port, self.client_port, *ports):
                ports.append(port)
        return ports

    def _start(self, args: list[str], name: str, hide: Path | None, until: float) -> None:
        """Start one node by ``until`` (monotonic); on failure end its process group (the other node stays) and raise."""
        log = self.root / f"{name}.log"
        # the dashboard agent's ports, chosen here (see _PATIENT_RAY_START); new ones each attempt
        grpc, listen, metrics, runtime_env = self._free_ports(4)
        command = [sys.executable, "-c", _PATIENT_RAY_START, "start", "--block", "--node-ip-address=127.0.0.1",
                   "--disable-usage-stats", f"--dashboard-agent-grpc-port={grpc}", f"--dashboard-agent-listen-port={listen}",
                   f"--metrics-export-port={metrics}", f"--runtime-env-agent-port={runtime_env}", *args]
        if hide is not None:
            # its own mount namespace, the directory covered by an empty read-only tmpfs, then the node
            command = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                       'mount -t tmpfs -o ro,size=64k agentrig-hidden "$0" && exec "$@"', str(hide), *command]
        with open(log, "wb") as out:
            node = subprocess.Popen(
                command, env=self.env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            )
        self.nodes.append(node)
        deadline = min(time.monotonic() + START_TIMEOUT, until)
        while b"Ray runtime started" not in log.read_bytes():
            if node.poll() is not None or time.monotonic() > deadline:
                try:
                    os.killpg(node.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                node.wait(10)
                self.nodes.remove(node)
                raise RuntimeError(f"ray start ({name}) failed:\n{log.read_text(errors='replace')[-3000:]}{self._fatal_lines()}")
            time.sleep(0.2)

    def _fatal_lines(self) -> str:
        """The fatal lines (``Check failed``, a crash) of the raylet logs of the cluster's newest session, if any."""
        lines = []
        for path in sorted(self.root.glob("session_latest/logs/raylet*.out")):
            for line in path.read_text(errors="replace").splitlines():
                if "] (raylet) " in line and " C " in line.split("] (raylet) ")[0]:
                    head, _, failed = line.partition("Check failed:")  # what failed, without Ray's boilerplate
                    lines.append(f"{path.name}: {head[:60]}... Check failed:{failed[:400]}" if failed else f"{path.name}: {line[:500]}")
        return "".join(f"\n{line}" for line in lines)

    def _start_with_retries(self, args: list[str], name: str, until: float, hide: Path | None = None) -> None:
        # a node that does not come up (a port taken meanwhile, a Ray process that died) is started
        # anew, as long as the cluster's time lasts
        for attempt in range(START_ATTEMPTS):
            try:
                self._start(args, name, hide, until)
                return
            except RuntimeError as error:
                pause = 5 * (attempt + 1)
                if attempt == START_ATTEMPTS - 1 or time.monotonic() + pause >= until:
                    raise RuntimeError(
                        f"the local Ray cluster did not start within {CLUSTER_START_TIMEOUT:.0f} s"
                        f" ({attempt + 1} attempts): {error}"
                    ) from None
                time.sleep(pause)

    def __enter__(self) -> LocalRayCluster:
        """Start the head, then the worker node (each tried again if it does not come up); all torn down on failure."""
        until = time.monotonic() + CLUSTER_START_TIMEOUT
        try:
            self._start_with_retries(
                ["--head", f"--port={self.port}", f"--ray-client-server-port={self.client_port}",
                 f"--num-cpus={self.head_cpus}", "--include-dashboard=false",
                 f"--temp-dir={self.root}"],
                "head",
                until,
            )
            self._start_with_retries(
                [f"--address={self.address}", f"--num-cpus={self.worker_cpus}", '--resources={"second_node": 1}',
                 f"--temp-dir={self.root}"],
                "worker",
                until,
                self.hidden if self.hide_from_worker else None,
            )
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        """Tear the cluster down."""
        self.stop()

    def worker_processes(self) -> set[int]:
        """Pids of this cluster's ProblemWorker actor processes, idle or busy (other clusters' on this machine aside)."""
        mine = processes_of(str(self.root), [node.pid for node in self.nodes])
        return {pid for pid in mine if _cmdline(pid).startswith(("ray::ProblemWorker", "ray::agentrig"))}

    def session_dir(self) -> Path:
        """The head's session directory (logs, sockets) under the cluster's directory."""
        return self.root / "session_latest"

    def stop(self) -> None:
        """End every process of this cluster: politely, then by SIGKILL; remove its directory."""
        roots = [node.pid for node in self.nodes]
        for node in self.nodes:
            if node.poll() is None:
                try:
                    os.killpg(node.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 10
        while any(node.poll() is None for node in self.nodes) and time.monotonic() < deadline:
            time.sleep(0.1)
        for _ in range(3):
            left = processes_of(str(self.root), roots)
            if not left:
                break
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.5)
        for node in self.nodes:
            if node.poll() is None:
                node.kill()
            node.wait(5)
        shutil.rmtree(self.root, ignore_errors=True)
        shutil.rmtree(self.hidden, ignore_errors=True)


#: Namespaces of the GCS's key-value store that Ray itself fills (function table, jobs, sessions, dashboard, ...).
_KV_NAMESPACES: tuple[bytes, ...] = (
    b"", b"fun", b"session", b"cluster", b"job", b"jobs", b"dashboard", b"serve", b"workflow", b"runtime_env",
)


def gcs_records(address: str) -> bytes:
    """What a cluster's GCS holds and shows through the state API, the dashboard and ``ray list``, as bytes to search.

    The task events (``ray list tasks --detail``: every task and actor call,
    with its name, options and runtime env), the actors, the jobs (their
    runtime env and entrypoint) and every entry of the GCS's key-value store,
    read straight from the GCS over gRPC (the state API needs the dashboard).
    """
    import grpc
    from ray.core.generated import gcs_service_pb2 as pb, gcs_service_pb2_grpc as stubs

    chunks: list[bytes] = []
    with grpc.insecure_channel(address) as channel:
        tasks = stubs.TaskInfoGcsServiceStub(channel).GetTaskEvents(pb.GetTaskEventsRequest(), timeout=30)
        chunks.append(tasks.SerializeToString())
        chunks.append(str(tasks).encode())
        actors = stubs.ActorInfoGcsServiceStub(channel).GetAllActorInfo(pb.GetAllActorInfoRequest(), timeout=30)
        chunks.append(actors.SerializeToString())
        jobs = stubs.JobInfoGcsServiceStub(channel).GetAllJobInfo(pb.GetAllJobInfoRequest(), timeout=30)
        chunks.append(jobs.SerializeToString())
        kv = stubs.InternalKVGcsServiceStub(channel)
        for namespace in _KV_NAMESPACES:
            keys = list(kv.InternalKVKeys(pb.InternalKVKeysRequest(prefix=b"", namespace=namespace), timeout=30).results)
            if keys:
                values = kv.InternalKVMultiGet(pb.InternalKVMultiGetRequest(keys=keys, namespace=namespace), timeout=30)
                chunks.append(values.SerializeToString())
            chunks.extend(keys)
    return b"\n".join(chunks)
