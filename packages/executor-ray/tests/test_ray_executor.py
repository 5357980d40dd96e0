"""``agentrig run --executor ray`` against a real Ray cluster on this machine (head + a second worker node).

The scripted agent (tests/fixtures) is 'installed' on the nodes through their
``PYTHONPATH``; the model is the fake OpenAI server in this process, which the
workers reach only through what the dispatcher sends them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "scripted-agent" / "src"))

from agentrig_scripted import testkit

from agentrig.run.layout import RunDirectory
from agentrig.run.records import RunRecord
from agentrig_ray.testing import require_ray

# one local cluster (a session fixture) serves every test here: all of them on one xdist worker
pytestmark = [pytest.mark.ray, pytest.mark.slow, pytest.mark.timeout(900), pytest.mark.xdist_group("ray_cluster")]

#: A run on a loaded 2-core machine: Ray starts a worker process per task slot.
RUN_TIMEOUT = 300

#: Seconds the workers of a dispatcher killed by SIGKILL get to notice and clean up (seconds when idle).
KILLED_DISPATCHER_CLEANUP = 60


def _env(agent_site: Path, base_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "AGENTRIG_", "RAY_"))}
    env.update({"PYTHONPATH": str(agent_site), "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "sk-test-not-a-secret", **extra})
    return env


def _run(args: list[str], env: dict[str, str], timeout: float = RUN_TIMEOUT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [testkit.agentrig_bin(), "run", *args], env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )


def _start(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [testkit.agentrig_bin(), "run", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        stdin=subprocess.DEVNULL,
    )


def _agent(problems: list[Path]) -> list[str]:
    return [*map(str, problems), "--agent", "scripted", "--model", "openai/gpt-4o-mini"]


def _ray(cluster: Any, *more: str) -> list[str]:
    return ["--executor", "ray", "-c", f"executor.address={cluster.address}", *more]


def _two_checkpoints(root: Path, name: str, tag: str) -> Path:
    return testkit.make_problem(
        root, name,
        [
            (f"Write a ({tag}).", [testkit.write_file("a.txt", f"{tag}\n")], f"grep -q {tag} a.txt\n"),
            (f"Append b ({tag}).", [testkit.bash("echo b >> a.txt")], "test $(wc -l < a.txt) -eq 2\n"),
        ],
    )


def _raw_lines(out: Path) -> list[tuple[str, str]]:
    """Every line of results.jsonl as (problem, checkpoint), duplicates included."""
    return [(d["problem"], d["checkpoint"]) for d in map(json.loads, (out / "results.jsonl").read_text().splitlines())]


def _wait_for(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _prompts(server: Any, needle: str) -> int:
    """How many model requests carried a task text containing ``needle`` as their last message."""
    count = 0
    for request in server.requests:
        messages = request.body.get("messages", [])
        if messages and messages[-1].get("role") == "user" and needle in str(messages[-1].get("content")):
            count += 1
    return count


class _Hang:
    """A fake-model handler that solves, but holds the first request of each task containing ``needle``
    for ``hold`` seconds (a minute; ``inf``: until the server stops)."""

    def __init__(self, needle: str, once: bool = True, hold: float = 60) -> None:
        self.solve = testkit.solver()
        self.needle = needle
        self.once = once
        self.hold = hold
        self.held: list[str] = []
        self.lock = threading.Lock()
        self.released = False

    def __call__(self, request: Any) -> Any:
        reply = self.solve(request)
        messages = request.body.get("messages", [])
        task = str(messages[-1].get("content")) if messages and messages[-1].get("role") == "user" else ""
        with self.lock:
            hold = self.needle in task and not self.released and (not self.once or task not in self.held)
            if hold:
                self.held.append(task)
        if hold:
            reply.delay = self.hold
        return reply


def _containers_of(engine: Any, out: Path) -> list[Any]:
    """The agentrig containers that mount something of run directory ``out``."""
    # ignore_removed: one removed between the listing and its inspection is simply not listed
    found = engine.containers.list(all=True, filters={"label": "agentrig"}, ignore_removed=True)
    return [c for c in found if any(str(out) in m.get("Source", "") for m in c.attrs.get("Mounts", []))]


@contextmanager
def _reaped(dispatcher: subprocess.Popen[str]) -> Iterator[subprocess.Popen[str]]:
    """Kill the dispatcher if it still runs when the block ends (a wait or an assertion failed inside)."""
    try:
        yield dispatcher
    finally:
        if dispatcher.poll() is None:
            dispatcher.kill()


def _kill9(dispatcher: subprocess.Popen[str]) -> None:
    """``kill -9`` the dispatcher and wait until it is gone."""
    dispatcher.send_signal(signal.SIGKILL)
    dispatcher.wait(10)


def _no_task_left(names: list[str], timeout: float = 60) -> None:
    """Wait until no Ray worker runs a task of the problems ``names`` (this test's own: the machine may run others)."""
    from agentrig_ray.testing import _cmdline, task_workers

    def running() -> list[int]:
        return [pid for name in names for pid in task_workers(name) if _cmdline(pid).split()[0] == f"ray::agentrig:{name}"]

    try:
        _wait_for(lambda: not running(), timeout, "the Ray tasks to end")
    except AssertionError as error:
        raise AssertionError(f"{error}: still running {[(pid, _cmdline(pid).strip()) for pid in running()]}") from None


# -- results ---------------------------------------------------------------------------------


def _client_server_logs(cluster: Any) -> str:
    """The end of the logs of the head's Ray Client servers (why one failed to start)."""
    logs = sorted(Path(cluster.root).glob("session_*/logs/ray_client_server*"))
    return "\n".join(f"{path.name}: {path.read_text(errors='replace')[-1500:]}" for path in logs)


# Ray Client: the head's proxier forks a server per client; LocalRayCluster starts its nodes with gRPC's fork
# support off, without which that child segfaulted before exec (ray-project/ray#63202; failed 2 runs of 2 here)
def test_ray_client_and_auto_addresses(ray_cluster, agent_site: Path, fake_openai_server, tmp_path: Path) -> None:
    fake_openai_server.respond_with(testkit.solver())
    problem = _two_checkpoints(tmp_path / "problems", "addr", "taga")
    for name, option, more in [
        ("client", f"executor.address={ray_cluster.client_address}", {}),  # Ray Client, through the head's client server
        ("auto", "executor.address=auto", {"RAY_ADDRESS": ray_cluster.address}),
    ]:
        out = tmp_path / name
        proc = _run([*_agent([problem]), "--executor", "ray", "-c", option, "-q", "--output", str(out)],
                    _env(agent_site, fake_openai_server.base_url, **more))
        assert proc.returncode == 0, (name, proc.stderr, _client_server_logs(ray_cluster))
        assert [line.status for line in RunDirectory(out).results()] == ["passed", "passed"], name
        assert RunRecord.model_validate_json((out / "run.json").read_bytes()).status == "completed"


def test_results_and_progress_match_the_local_executor(ray_cluster, agent_site: Path, fake_openai_server, tmp_path: Path) -> None:
    fake_openai_server.respond_with(testkit.solver())
    problems = [_two_checkpoints(tmp_path / "problems", f"p{i}", f"tag{i}") for i in range(3)]
    env = _env(agent_site, fake_openai_server.base_url)
    local = _run([*_agent(problems), "--jobs", "2", "-v", "--output", str(tmp_path / "local")], env)
    assert local.returncode == 0, local.stderr
    ray = _run([*_agent(problems), *_ray(ray_cluster), "-v", "--output", str(tmp_path / "ray")], env)
    assert ray.returncode == 0, ray.stderr

    def summary(out: Path) -> list[tuple[Any, ...]]:
        return sorted(
            (line.problem, line.checkpoint, line.index, line.status, line.passed, line.steps, line.tokens.total, line.cost)
            for line in RunDirectory(out).results()
        )

    assert summary(tmp_path / "ray") == summary(tmp_path / "local")
    assert [s[3] for s in summary(tmp_path / "ray")] == ["passed"] * 6
    assert sorted(_raw_lines(tmp_path / "ray")) == sorted(_raw_lines(tmp_path / "local"))
    for i in range(3):
        for checkpoint in ("checkpoint_1", "checkpoint_2"):
            files = Path("snapshot") / "files" / "a.txt"
            assert (tmp_path / "ray" / f"p{i}" / checkpoint / files).read_text() == (
                tmp_path / "local" / f"p{i}" / checkpoint / files
            ).read_text()
    record = RunRecord.model_validate_json((tmp_path / "ray" / "run.json").read_bytes())
    assert record.status == "completed" and record.executor == "ray" and record.totals.passed == 6

    def progress(text: str) -> list[str]:  # the verdict lines of the progress log, usage figures aside
        return sorted(line.split(" - ")[0] for line in text.splitlines() if ": passed" in line or ": started" in line)

    assert progress(ray.stderr) == progress(local.stderr) and len(progress(ray.stderr)) == 9
    assert local.stdout.splitlines()[-2] == ray.stdout.splitlines()[-2]  # the totals line of the summary

    quiet = _run([*_agent(problems[:1]), *_ray(ray_cluster), "-q", "--output", str(tmp_path / "quiet")], env)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr


# -- faults ----------------------------------------------------------------------------------


def _start_held_in_checkpoint_2(server: Any, problem: Path, out: Path, options: list[str],
                                env: dict[str, str]) -> tuple[subprocess.Popen[str], Any]:
    """Start a run of ``problem``; return once checkpoint 2 waits on its model call and checkpoint 1 is recorded.

    Returns the dispatcher and the hang holding checkpoint 2's request (``released`` lets later requests through).
    """
    hang = _Hang("Append b")
    server.respond_with(hang)
    dispatcher = _start([*_agent([problem]), *options, "--output", str(out)], env)
    try:
        _wait_for(lambda: hang.held, RUN_TIMEOUT, "checkpoint 2's model request")
        # checkpoint 1 is finished once the dispatcher has recorded it (its result travels with an event)
        _wait_for((out / "results.jsonl").exists, RUN_TIMEOUT, "checkpoint 1 recorded")
    except BaseException:
        dispatcher.kill()
        dispatcher.wait()
        raise
    return dispatcher, hang


def test_a_worker_killed_mid_checkpoint_is_retried_from_its_last_finished_checkpoint(
    ray_cluster, agent_site: Path, fake_openai_server, tmp_path: Path
) -> None:
    from agentrig_ray.testing import task_workers

    problem = _two_checkpoints(tmp_path / "problems", "kill", "tagk")
    out = tmp_path / "run"
    dispatcher, _ = _start_held_in_checkpoint_2(fake_openai_server, problem, out, [*_ray(ray_cluster), "-v"],
                                                _env(agent_site, fake_openai_server.base_url))
    with _reaped(dispatcher):
        workers = task_workers("kill")  # this problem's: a task of an earlier test may still be ending
        assert len(workers) == 1, workers
        os.kill(workers[0], signal.SIGKILL)  # the worker dies mid-checkpoint 2, its model request unanswered
        _, err = dispatcher.communicate(timeout=RUN_TIMEOUT)
    assert dispatcher.returncode == 0, err
    assert "kill: started (resuming at checkpoint 2)" in err
    assert _raw_lines(out) == [("kill", "checkpoint_1"), ("kill", "checkpoint_2")]  # each recorded exactly once
    assert [line.status for line in RunDirectory(out).results()] == ["passed", "passed"]
    assert _prompts(fake_openai_server, "Write a") == 1  # checkpoint 1 was not redone
    assert _prompts(fake_openai_server, "Append b") == 2  # checkpoint 2: the killed attempt and the retry
    assert RunRecord.model_validate_json((out / "run.json").read_bytes()).problems["kill"].status == "completed"


def test_retries_are_bounded(ray_cluster, agent_site: Path, fake_openai_server, tmp_path: Path) -> None:
    from agentrig_ray.testing import task_workers

    hang = _Hang("Write a", once=False)
    fake_openai_server.respond_with(hang)
    problem = _two_checkpoints(tmp_path / "problems", "doomed", "tagd")
    out = tmp_path / "run"
    dispatcher = _start(
        [*_agent([problem]), *_ray(ray_cluster, "-c", "executor.max_retries=1"), "-q", "--output", str(out)],
        _env(agent_site, fake_openai_server.base_url),
    )
    with _reaped(dispatcher):
        for attempt in (1, 2):  # the first run and its one retry, each killed mid-checkpoint
            _wait_for(lambda attempt=attempt: len(hang.held) >= attempt and task_workers("doomed"), RUN_TIMEOUT, f"attempt {attempt}")
            os.kill(task_workers("doomed")[0], signal.SIGKILL)
        stdout, err = dispatcher.communicate(timeout=RUN_TIMEOUT)
    assert dispatcher.returncode == 3, err  # a problem that did not complete: an error
    assert "(raylet)" not in stdout + err, "Ray's own messages tore through the output"
    record = RunRecord.model_validate_json((out / "run.json").read_bytes())
    doomed = record.problems["doomed"]
    assert doomed.status == "failed" and not (out / "results.jsonl").exists()
    assert doomed.error is not None and doomed.error.startswith("the Ray worker running it died 2 times"), doomed.error
    assert "-c executor.max_retries=1" in doomed.error


def test_dispatcher_killed_then_resume_finishes_on_the_cluster(ray_cluster, agent_site: Path, fake_openai_server, tmp_path: Path) -> None:
    hang = _Hang("Append b")
    fake_openai_server.respond_with(hang)
    problems = [_two_checkpoints(tmp_path / "problems", f"r{i}", f"tagr{i}") for i in range(2)]
    out = tmp_path / "run"
    env = _env(agent_site, fake_openai_server.base_url)
    dispatcher = _start([*_agent(problems), *_ray(ray_cluster), "-q", "--output", str(out)], env)
    with _reaped(dispatcher):
        _wait_for(lambda: len(hang.held) == 2, RUN_TIMEOUT, "both problems in checkpoint 2")
        # checkpoint 1 is finished once the dispatcher has recorded it (a result still on its way is
        # lost with the dispatcher, and redone: recorded once all the same)
        _wait_for(lambda: (out / "results.jsonl").exists() and len(_raw_lines(out)) == 2, RUN_TIMEOUT, "checkpoint 1 recorded")
        _kill9(dispatcher)
    # the workers notice that their dispatcher is gone and stop its problems as Ctrl-C does
    # (interrupted in their model call: the agent cleaned up); the records are the dispatcher's
    # alone, so problem.json says what it last wrote
    _no_task_left(["r0", "r1"], KILLED_DISPATCHER_CLEANUP)
    for i in range(2):
        assert json.loads((out / f"r{i}" / "problem.json").read_text())["status"] == "running"
    assert not list((out / ".workspaces").glob("*")), "a session outlived its dispatcher"
    hang.released = True
    resumed = _run([*_agent(problems), *_ray(ray_cluster), "-q", "--output", str(out), "--resume"], env)
    assert resumed.returncode == 0, resumed.stderr
    assert sorted(_raw_lines(out)) == [(f"r{i}", f"checkpoint_{c}") for i in range(2) for c in (1, 2)]
    assert _prompts(fake_openai_server, "Write a") == 2  # one per problem: checkpoint 1 was never redone
    record = RunRecord.model_validate_json((out / "run.json").read_bytes())
    assert record.status == "completed" and len(record.resumed) == 1 and record.totals.passed == 4


def test_a_killed_dispatcher_leaves_no_child_process_behind(ray_cluster, agent_site: Path, fake_openai_server, tmp_path: Path) -> None:
    from agentrig_ray.testing import processes_of

    fake_openai_server.respond_with(testkit.solver())
    marker = f"sleep {2000 + os.getpid() % 1000}"  # the long command the agent runs, found by its command line
    released = tmp_path / "released"
    problem = testkit.make_problem(
        tmp_path / "problems", "long",
        [
            ("Write a.", [testkit.write_file("a.txt", "a\n")], "test -f a.txt\n"),
            ("Wait, then b.", [testkit.bash(f"test -f {released} || {marker}; echo b > b.txt")], "test -f b.txt\n"),
        ],
    )
    out = tmp_path / "run"
    env = _env(agent_site, fake_openai_server.base_url)
    dispatcher = _start([*_agent([problem]), *_ray(ray_cluster), "-q", "--output", str(out)], env)
    with _reaped(dispatcher):
        _wait_for(lambda: processes_of(marker), RUN_TIMEOUT, "the agent's long command")
        _kill9(dispatcher)
    _wait_for(lambda: not processes_of(marker), KILLED_DISPATCHER_CLEANUP, "the agent's command to be ended")
    _no_task_left(["long"], KILLED_DISPATCHER_CLEANUP)
    # the records are the dispatcher's alone: they say what it last wrote, never "completed"
    assert RunRecord.model_validate_json((out / "run.json").read_bytes()).problems["long"].status in ("pending", "running")
    released.touch()
    resumed = _run([*_agent([problem]), *_ray(ray_cluster), "-q", "--output", str(out), "--resume"], env)
    assert resumed.returncode == 0, resumed.stderr
    assert _raw_lines(out) == [("long", "checkpoint_1"), ("long", "checkpoint_2")]
    assert RunRecord.model_validate_json((out / "run.json").read_bytes()).status == "completed"


@pytest.mark.docker
def test_a_killed_dispatcher_leaves_no_container_behind(
    ray_cluster, agent_site: Path, fake_openai_server, tmp_path: Path, docker_engine, docker_test_image: str
) -> None:
    hang = _Hang("Append b")
    fake_openai_server.respond_with(hang)
    problems = [_two_checkpoints(tmp_path / "problems", f"k{i}", f"tagk{i}") for i in range(2)]
    out = tmp_path / "run"
    docker = ["--runtime", "docker", "--image", docker_test_image]
    env = _env(agent_site, fake_openai_server.base_url)

    def containers() -> list[Any]:
        return _containers_of(docker_engine, out)

    dispatcher = _start([*_agent(problems), *_ray(ray_cluster), *docker, "-q", "--output", str(out)], env)
    with _reaped(dispatcher):
        _wait_for(lambda: len(hang.held) == 2, RUN_TIMEOUT, "both problems in checkpoint 2")
        assert len(containers()) == 2
        _kill9(dispatcher)
    _wait_for(lambda: not containers(), KILLED_DISPATCHER_CLEANUP, "the problems' containers to be removed")
    _no_task_left(["k0", "k1"], KILLED_DISPATCHER_CLEANUP)
    hang.released = True
    resumed = _run([*_agent(problems), *_ray(ray_cluster), *docker, "-q", "--output", str(out), "--resume"], env)
    assert resumed.returncode == 0, resumed.stderr
    assert sorted(_raw_lines(out)) == [(f"k{i}", f"checkpoint_{c}") for i in range(2) for c in (1, 2)]
    assert containers() == []


def test_ctrl_c_cancels_every_task_and_leaves_a_resumable_run(ray_cluster, agent_site: Path, fake_openai_server, tmp_path: Path) -> None:
    hang = _Hang("Write a", hold=float("inf"))  # the held calls never end: only interrupting the tasks ends the run
    fake_openai_server.respond_with(hang)
    problems = [_two_checkpoints(tmp_path / "problems", f"c{i}", f"tagc{i}") for i in range(3)]
    out = tmp_path / "run"
    env = _env(agent_site, fake_openai_server.base_url)
    dispatcher = _start([*_agent(problems), *_ray(ray_cluster), "-q", "--output", str(out)], env)
    with _reaped(dispatcher):
        _wait_for(lambda: len(hang.held) == 2, RUN_TIMEOUT, "two problems in their model call")  # 2 CPUs: the third waits
        dispatcher.send_signal(signal.SIGINT)
        _, err = dispatcher.communicate(timeout=120)  # a deadline for a hang: tasks left in their calls never end
    assert dispatcher.returncode == 130, err
    assert "Continue with:" in err and "--executor ray" in err
    _no_task_left(["c0", "c1", "c2"], 10)
    record = RunRecord.model_validate_json((out / "run.json").read_bytes())
    assert record.status == "interrupted"
    statuses = {name: p.status for name, p in record.problems.items()}
    assert sorted(statuses.values()) == ["interrupted"] * 3, statuses
    started = [name for name in statuses if (out / name / "problem.json").exists()]
    assert len(started) == 2  # the queued one never started
    for name in started:
        assert json.loads((out / name / "problem.json").read_text())["status"] == "interrupted"
    assert not list((out / ".workspaces").glob("*")), "a session outlived its cancelled task"
    hang.released = True
    resumed = _run([*_agent(problems), *_ray(ray_cluster), "-q", "--output", str(out), "--resume"], env)
    assert resumed.returncode == 0, resumed.stderr
    assert len(_raw_lines(out)) == 6


def test_an_event_being_recorded_when_ctrl_c_arrives_is_recorded_whole(ray_cluster, tmp_path: Path) -> None:
    """Ctrl-C while the dispatcher records an event it took from the run's channel: the event is recorded, none is lost.

    (Seen in a full CI run: the second problem's ``problem_start`` was taken from
    the channel, then Ctrl-C came, and its ``problem.json`` was never written.)
    """
    from agentrig.testing.jobs import CtrlCOnFirstEvent, starter_jobs
    from agentrig_ray.executor import RayExecutor

    out = tmp_path / "run"
    jobs = starter_jobs(out, ["fizzbuzz", "roman"])
    (out / "run.json").write_text("{}")  # what a worker looks for to know it sees the run directory
    receiver = CtrlCOnFirstEvent()
    executor = RayExecutor({"address": ray_cluster.address, "keep_warm": 0}, jobs=2)
    executor.open()
    try:
        with pytest.raises(KeyboardInterrupt):
            executor.run(jobs, receiver.emit, receiver.finished, lambda: None)
    finally:
        executor.close()
    receiver.check()
    _no_task_left(["fizzbuzz", "roman"], 30)


# -- inputs and secrets ----------------------------------------------------------------------


def test_an_unreachable_cluster_is_one_line_before_any_run_directory(agent_site: Path, tmp_path: Path) -> None:
    require_ray()
    from agentrig_ray.testing import free_port

    problem = _two_checkpoints(tmp_path / "problems", "p", "tag")
    # (auto without RAY_ADDRESS is not tried: Ray then finds any cluster running on this machine, other tests' too)
    env = _env(agent_site, "http://127.0.0.1:9")
    address = f"127.0.0.1:{free_port()}"
    unreachable = "agentrig: error: --executor ray: cannot reach the Ray cluster at"
    for extra, more, status, message in [
        (["-c", f"executor.address={address}"], {}, 3, f"{unreachable} {address} ("),
        (["-c", f"executor.address=ray://{address}"], {}, 3, f"{unreachable} ray://{address} ("),
        (["-c", "executor.address=auto"], {"RAY_ADDRESS": address}, 3, f"{unreachable} auto (RAY_ADDRESS={address}) ("),
        (["-c", "executor.address=auto"], {"RAY_ADDRESS": "nohost"}, 2, "agentrig: error: RAY_ADDRESS=nohost: expected HOST:PORT"),
        (["-c", "executor.address=nohost"], {}, 2, "agentrig: error: -c executor.address=nohost: expected HOST:PORT"),
        (["-c", "executor.num_cpus=-1"], {}, 2, "agentrig: error: -c executor.num_cpus: Input should be greater than or equal to 0"),
        (["-c", "executor.colour=red"], {}, 2, "agentrig: error: -c executor.colour: Extra inputs are not permitted"),
    ]:
        out = tmp_path / "never"
        proc = _run([*_agent([problem]), "--executor", "ray", *extra, "--output", str(out)], {**env, **more}, timeout=120)
        lines = [line for line in proc.stderr.splitlines() if "warning" not in line]
        assert proc.returncode == status and len(lines) == 1 and lines[0].startswith(message), (extra, more, proc.stderr)
        assert "Traceback" not in proc.stderr and not out.exists()


def test_secrets_reach_the_workers_but_nothing_ray_records(ray_cluster, agent_site: Path, fake_openai_server, tmp_path: Path) -> None:
    fake_openai_server.respond_with(testkit.solver())
    secret = "sk-h17-" + os.urandom(8).hex()
    problem = _two_checkpoints(tmp_path / "problems", "s", "tags")
    out = tmp_path / "run"
    env = _env(agent_site, fake_openai_server.base_url, OPENAI_API_KEY=secret)
    proc = _run([*_agent([problem]), *_ray(ray_cluster), "-q", "--output", str(out)], env)
    assert proc.returncode == 0, proc.stderr
    # the key reached the model client on the worker ...
    assert fake_openai_server.requests and all(r.headers.get("authorization") == f"Bearer {secret}" for r in fake_openai_server.requests)
    # ... but not what the GCS holds and shows (task events behind `ray list tasks --detail` and the
    # dashboard, actors, jobs, the key-value store) ...
    from agentrig_ray.testing import gcs_records

    records = gcs_records(ray_cluster.address)
    assert b"agentrig:s" in records, "the problem's call is not among the task events read"
    assert secret.encode() not in records, "the GCS holds the secret"
    # ... nor a file Ray wrote (its logs, the runtime-env agent's log, the GCS's), nor the run directory
    for root in (ray_cluster.root, out):
        for path in Path(root).rglob("*"):
            if path.is_file() and not path.is_socket():
                try:
                    data = path.read_bytes()
                except OSError:
                    continue
                assert secret.encode() not in data, f"the secret was written to {path}"


@pytest.mark.docker
def test_ctrl_c_leaves_no_container_behind(
    ray_cluster, agent_site: Path, fake_openai_server, tmp_path: Path, docker_engine, docker_test_image: str
) -> None:
    hang = _Hang("Write a")
    fake_openai_server.respond_with(hang)
    problems = [_two_checkpoints(tmp_path / "problems", f"d{i}", f"tagd{i}") for i in range(2)]
    out = tmp_path / "run"

    def containers() -> list[Any]:
        return _containers_of(docker_engine, out)

    dispatcher = _start(
        [*_agent(problems), *_ray(ray_cluster), "--runtime", "docker", "--image", docker_test_image, "-q", "--output", str(out)],
        _env(agent_site, fake_openai_server.base_url),
    )
    with _reaped(dispatcher):
        _wait_for(lambda: len(hang.held) == 2, RUN_TIMEOUT, "both problems in their model call")
        assert len(containers()) == 2
        dispatcher.send_signal(signal.SIGINT)
        _, err = dispatcher.communicate(timeout=120)
    assert dispatcher.returncode == 130, err
    _no_task_left(["d0", "d1"], 10)
    assert containers() == [], "a container outlived its cancelled task"


def test_a_run_that_finds_the_cluster_full_gets_the_workers_another_run_gives_back(
    ray_cluster, agent_site: Path, fake_openai_server, tmp_path: Path
) -> None:
    solve = testkit.solver()
    slow = testkit.solver(delay=3)

    def handler(request: Any) -> Any:
        return (slow if "tagbusy" in json.dumps(request.body.get("messages", [])) else solve)(request)

    fake_openai_server.respond_with(handler)
    busy = [_two_checkpoints(tmp_path / "problems", f"busy{i}", f"tagbusy{i}") for i in range(2)]
    late = _two_checkpoints(tmp_path / "problems", "late", "taglate")
    env = _env(agent_site, fake_openai_server.base_url)
    # the first run takes both CPUs of the cluster and keeps its workers warm for longer than the test may take
    first = _start([*_agent(busy), *_ray(ray_cluster, "-c", "executor.keep_warm=600"), "-q", "--output", str(tmp_path / "first")], env)
    try:
        _wait_for(lambda: _prompts(fake_openai_server, "tagbusy") >= 2, RUN_TIMEOUT, "the first run's problems to start")
        second = _run([*_agent([late]), *_ray(ray_cluster), "-q", "--output", str(tmp_path / "second")], env)
        assert first.wait(RUN_TIMEOUT) == 0
    finally:
        if first.poll() is None:
            first.kill()
    # its own new worker found no free CPU: it took one the first run gave back, not waiting 600 s for it to expire
    assert second.returncode == 0, second.stderr
    assert [line.status for line in RunDirectory(tmp_path / "second").results()] == ["passed", "passed"]


def test_workers_stay_warm_between_runs_until_their_code_changes(ray_cluster, agent_site: Path, fake_openai_server, tmp_path: Path) -> None:
    fake_openai_server.respond_with(testkit.solver())
    # the agent's command records the process that runs it: the worker (the local runtime's parent of bash)
    problem = testkit.make_problem(
        tmp_path / "problems", "warm", [("Who runs me?", [testkit.bash("echo $PPID > pid.txt")], "test -s pid.txt\n")]
    )
    env = _env(agent_site, fake_openai_server.base_url)

    def run(name: str) -> tuple[int, set[int]]:
        proc = _run([*_agent([problem]), *_ray(ray_cluster), "-q", "--output", str(tmp_path / name)], env)
        assert proc.returncode == 0, proc.stderr
        pid = int((tmp_path / name / "warm" / "checkpoint_1" / "snapshot" / "files" / "pid.txt").read_text())
        return pid, ray_cluster.worker_processes()

    first, workers = run("first")
    assert first in workers
    second, _ = run("second")
    assert second in workers  # a worker that was up before the run: nothing started anew
    module = agent_site / "agentrig_scripted" / "plugin.py"  # the agent's code on the nodes changes
    later = module.stat().st_mtime + 5
    os.utime(module, (later, later))
    third, after = run("third")
    assert third not in workers, "a worker that imported the old code ran the problem"
    assert second not in after, "the worker that imported the old code was not ended"


def test_attempts_are_tasks_of_their_own(ray_cluster, agent_site: Path, fake_openai_server, tmp_path: Path) -> None:
    fake_openai_server.respond_with(testkit.solver())
    problem = _two_checkpoints(tmp_path / "problems", "twice", "tagt")
    out = tmp_path / "run"
    proc = _run([*_agent([problem]), *_ray(ray_cluster), "--attempts", "2", "-q", "--output", str(out)],
                _env(agent_site, fake_openai_server.base_url))
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(text) for text in (out / "results.jsonl").read_text().splitlines()]
    assert sorted((d["attempt"], d["checkpoint"]) for d in lines) == [
        (1, "checkpoint_1"), (1, "checkpoint_2"), (2, "checkpoint_1"), (2, "checkpoint_2")
    ]
    assert RunRecord.model_validate_json((out / "run.json").read_bytes()).status == "completed"


# -- shipped artifacts (-c executor.storage=ship) ---------------------------------------------


def _hidden_output(cluster: Any, name: str) -> Path:
    """A run directory under the directory the worker node cannot see."""
    if not cluster.hide_from_worker:
        if os.environ.get("CI"):
            pytest.fail("CI is set but the worker node could not get a mount namespace (unshare --mount)", pytrace=False)
        pytest.skip("no mount namespaces here (unshare --mount): cannot hide the run directory from a node")
    return Path(cluster.hidden) / name


def _ship(cluster: Any, *more: str) -> list[str]:
    # every task on the worker node, the one that does not see the run directory
    return _ray(cluster, "-c", "executor.storage=ship", "-c", "executor.resources={second_node: 1}", *more)


def _tree(out: Path) -> list[str]:
    """The run directory's files, relative, without what names time or a random session."""
    return sorted(
        str(path.relative_to(out)) for path in out.rglob("*")
        if path.is_file() and not path.name.startswith(".") and ".workspaces" not in path.parts
    )


def test_shipped_artifacts_make_the_same_run_directory_as_the_local_executor(
    ray_cluster, agent_site: Path, fake_openai_server, tmp_path: Path
) -> None:
    fake_openai_server.respond_with(testkit.solver())
    out = _hidden_output(ray_cluster, "ship-same")
    problems = [_two_checkpoints(tmp_path / "problems", f"s{i}", f"tags{i}") for i in range(2)]
    env = _env(agent_site, fake_openai_server.base_url)
    # the worker node really does not see it: a node-local write there would fail
    probe = subprocess.run(["nsenter", "-t", str(ray_cluster.nodes[1].pid), "-m", "ls", "-A", str(out.parent)],
                           capture_output=True, text=True)
    assert probe.returncode == 0 and probe.stdout == "", probe
    local = _run([*_agent(problems), "--output", str(tmp_path / "local"), "-q"], env)
    assert local.returncode == 0, local.stderr
    ray = _run([*_agent(problems), *_ship(ray_cluster), "-q", "--output", str(out)], env)
    assert ray.returncode == 0, ray.stderr

    assert _tree(out) == _tree(tmp_path / "local")
    assert sorted(_raw_lines(out)) == sorted(_raw_lines(tmp_path / "local"))
    for i in range(2):
        for checkpoint in ("checkpoint_1", "checkpoint_2"):
            for rel in (Path("snapshot") / "files" / "a.txt", Path("prompt.txt"), Path("diff.json")):
                assert (out / f"s{i}" / checkpoint / rel).read_bytes() == (tmp_path / "local" / f"s{i}" / checkpoint / rel).read_bytes()
            # paths recorded in the artifacts name the run directory, not the worker's own
            inference = json.loads((out / f"s{i}" / checkpoint / "inference_result.json").read_text())
            assert inference["checkpoint_path"] == str(out / f"s{i}" / checkpoint)
    record = RunRecord.model_validate_json((out / "run.json").read_bytes())
    assert record.status == "completed" and record.totals.passed == 4
    assert not list(out.glob("*/.checkpoint_*")), "a half-unpacked checkpoint was left behind"


def test_a_shipping_worker_killed_mid_checkpoint_resumes_from_the_shipped_snapshot(
    ray_cluster, agent_site: Path, fake_openai_server, tmp_path: Path
) -> None:
    from agentrig_ray.testing import task_workers

    problem = _two_checkpoints(tmp_path / "problems", "shipkill", "tagsk")
    out = _hidden_output(ray_cluster, "ship-kill")
    dispatcher, _ = _start_held_in_checkpoint_2(fake_openai_server, problem, out, [*_ship(ray_cluster), "-v"],
                                                _env(agent_site, fake_openai_server.base_url))
    with _reaped(dispatcher):
        assert _raw_lines(out) == [("shipkill", "checkpoint_1")]  # recorded by the dispatcher, artifacts with it
        assert (out / "shipkill" / "checkpoint_1" / "snapshot" / "files" / "a.txt").read_text() == "tagsk\n"
        workers = task_workers("shipkill")
        assert len(workers) == 1, workers
        os.kill(workers[0], signal.SIGKILL)
        _, err = dispatcher.communicate(timeout=RUN_TIMEOUT)
    assert dispatcher.returncode == 0, err
    assert "shipkill: started (resuming at checkpoint 2)" in err
    assert _raw_lines(out) == [("shipkill", "checkpoint_1"), ("shipkill", "checkpoint_2")]
    # checkpoint 2's test (two lines in a.txt) passes only on checkpoint 1's workspace: the retried
    # worker got it from the dispatcher's run directory, which it cannot see
    assert [line.status for line in RunDirectory(out).results()] == ["passed", "passed"]
    assert _prompts(fake_openai_server, "Write a") == 1
    assert (out / "shipkill" / "checkpoint_2" / "snapshot" / "files" / "a.txt").read_text() == "tagsk\nb\n"


def test_a_shipping_run_whose_dispatcher_was_killed_resumes_from_the_head_s_snapshot(
    ray_cluster, agent_site: Path, fake_openai_server, tmp_path: Path
) -> None:
    problem = _two_checkpoints(tmp_path / "problems", "shipresume", "tagsr")
    out = _hidden_output(ray_cluster, "ship-resume")
    env = _env(agent_site, fake_openai_server.base_url)
    dispatcher, hang = _start_held_in_checkpoint_2(fake_openai_server, problem, out, [*_ship(ray_cluster), "-q"], env)
    with _reaped(dispatcher):
        _kill9(dispatcher)
    _no_task_left(["shipresume"], KILLED_DISPATCHER_CLEANUP)
    hang.released = True
    resumed = _run([*_agent([problem]), *_ship(ray_cluster), "-q", "--output", str(out), "--resume"], env)
    assert resumed.returncode == 0, resumed.stderr
    assert _raw_lines(out) == [("shipresume", "checkpoint_1"), ("shipresume", "checkpoint_2")]
    # checkpoint 2 passes only on checkpoint 1's workspace, which --resume sent from the head's run directory
    assert [line.status for line in RunDirectory(out).results()] == ["passed", "passed"]
    assert _prompts(fake_openai_server, "Write a") == 1
    assert (out / "shipresume" / "checkpoint_2" / "snapshot" / "files" / "a.txt").read_text() == "tagsr\nb\n"
