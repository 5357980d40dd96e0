"""A ``kill -9`` of agentrig leaves nothing running and nothing in the temporary directory once the
next agentrig starts: the agent's background processes (re-parented to PID 1) and the scratch
directories of agents, evaluations and sessions are swept.

Each test points ``TMPDIR`` at a directory of its own, so it sees only the files of its processes.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "fixtures" / "scripted-agent" / "src"))

from agentrig_scripted import testkit

from agentrig.run.records import CheckpointResultLine, RunRecord
from agentrig.testing.fake_server import FakeReply, FakeToolCall


def _sleeps(duration: str) -> list[int]:
    """Live (not zombie) processes of this user running ``sleep <duration>``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            stat = Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue
        if argv[:2] == [b"sleep", duration.encode()] and stat[stat.rfind(b")") + 2 :][:1] != b"Z":
            found.append(int(entry))
    return found


def _leftovers(tmpdir: Path) -> list[str]:
    return sorted(p.name for p in tmpdir.iterdir() if p.name.startswith("agentrig"))


def _wait_for(condition, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout  # a deadline for a hang, not a speed limit: the suite runs in parallel
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def _problem(root: Path) -> Path:
    problem = root / "hang"
    problem.mkdir(parents=True)
    (problem / "problem.yaml").write_text(
        "name: hang\ncheckpoints:\n  - name: checkpoint_1\n    prompt: checkpoint_1.md\n    test: \"true\"\n"
    )
    (problem / "checkpoint_1.md").write_text("Start a server in the background, then wait.\n")
    return problem


def test_kill_9_then_resume_leaves_no_background_process_and_nothing_in_tmp(
    tmp_path: Path, fake_openai_server
) -> None:
    duration = f"300.{random.randrange(10**6):06d}"  # names this test's sleeps among every process of the machine
    # both ways out of the command's process group: a plain background job and a new session
    start = f"sleep {duration} >/dev/null 2>&1 & setsid sleep {duration} >/dev/null 2>&1 & echo started"
    phase = {"resumed": False, "stalled": False}

    def handler(request):
        if phase["resumed"]:
            return FakeReply(text="Done.")
        if "started" not in str(request.body.get("messages", [])):
            return FakeReply(tool_calls=[FakeToolCall(name="bash", arguments={"command": start})])
        phase["stalled"] = True
        return FakeReply(text="Done.", delay=60)  # the next call hangs until agentrig is killed

    fake_openai_server.respond_with(handler)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    out = tmp_path / "run"
    args = [testkit.agentrig_bin(), "run", str(_problem(tmp_path / "problems")), "--agent", "react",
            "--model", "openai/gpt-4o-mini", "--output", str(out), "-q"]
    env = testkit.cli_env(tmp_path, fake_openai_server.base_url, TMPDIR=str(tmpdir))
    runner = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        _wait_for(lambda: phase["stalled"], "the agent never started its background processes")
        assert len(_sleeps(duration)) == 2
        runner.send_signal(signal.SIGKILL)
        runner.wait(10)
        # Killed with SIGKILL, agentrig could clean up nothing: the sleeps outlive it (before the fix, for
        # good). Not asserted: any other agentrig starting on this machine now (a parallel test) sweeps them.

        phase["resumed"] = True
        resumed = subprocess.run([*args, "--resume"], env=env, capture_output=True, text=True, timeout=180, cwd=tmp_path)
        assert resumed.returncode == 0, resumed.stderr
        # what is left: processes still running, entries in the temporary directory (both measured, then compared)
        assert (_sleeps(duration), _leftovers(tmpdir)) == ([], []), "--resume left the killed run's leftovers"
    finally:
        if runner.poll() is None:
            runner.kill()
        for pid in _sleeps(duration):
            os.kill(pid, signal.SIGKILL)
    run = RunRecord.model_validate_json((out / "run.json").read_bytes())
    assert run.status == "completed" and len(run.resumed) == 1
    lines = [CheckpointResultLine.model_validate_json(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert [(x.checkpoint, x.status) for x in lines] == [("checkpoint_1", "passed")]
    assert not (out / ".workspaces").exists()


KILLED_API_USER = """
import sys
import agentrig

agentrig.run_task(sys.argv[1], agent="react", model="openai/gpt-4o-mini")
"""


def test_a_killed_python_api_run_leaves_nothing_once_the_next_one_starts(
    tmp_path: Path, fake_openai_server
) -> None:
    duration = f"300.{random.randrange(10**6):06d}"
    start = f"setsid sleep {duration} >/dev/null 2>&1 & echo started"
    phase = {"second": False, "stalled": False}

    def handler(request):
        if phase["second"]:
            return FakeReply(text="Done.")
        if "started" not in str(request.body.get("messages", [])):
            return FakeReply(tool_calls=[FakeToolCall(name="bash", arguments={"command": start})])
        phase["stalled"] = True
        return FakeReply(text="Done.", delay=60)

    fake_openai_server.respond_with(handler)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = testkit.cli_env(tmp_path, fake_openai_server.base_url, TMPDIR=str(tmpdir))
    script = tmp_path / "user.py"
    script.write_text(textwrap.dedent(KILLED_API_USER))
    user = subprocess.Popen([sys.executable, str(script), "Start a server."], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        _wait_for(lambda: phase["stalled"], "the agent never started its background process")
        assert len(_sleeps(duration)) == 1, "the agent's background process is not running"
        user.send_signal(signal.SIGKILL)
        user.wait(10)
        # The sleep outlives the killed program; not asserted: any other agentrig starting on this machine now
        # (a parallel test) sweeps it, as the next run_task below must. Its TMPDIR is this test's own.
        assert _leftovers(tmpdir), "the killed program left nothing in the temporary directory"

        phase["second"] = True
        again = subprocess.run([sys.executable, str(script), "Say done."], env=env, capture_output=True, text=True,
                               timeout=180, cwd=tmp_path)
        assert again.returncode == 0, again.stderr
        assert (_sleeps(duration), _leftovers(tmpdir)) == ([], []), "the next run_task left the killed program's leftovers"
    finally:
        if user.poll() is None:
            user.kill()
        for pid in _sleeps(duration):
            os.kill(pid, signal.SIGKILL)


def _dead_tag() -> str:
    """The tag of a process of this host that has ended."""
    from agentrig.scratch import owner_tag

    child = subprocess.Popen(["sleep", "30"])
    tag = owner_tag(child.pid)
    child.kill()
    child.wait()
    return tag


def test_the_sweep_removes_only_what_an_ended_agentrig_of_this_host_left(tmp_path: Path) -> None:
    from agentrig.scratch import OWNER_ENV, kill_orphaned_processes, owner_tag, sweep_temp_dirs

    dead, alive = _dead_tag(), owner_tag()
    host, pid, start = alive.split(".")
    elsewhere = f"{'0' if host[0] != '0' else '1'}{host[1:]}.{pid}.{start}"  # another host's: never judged here
    reused = f"{host}.{pid}.{int(start) + 1}"  # this pid, but not this process: its owner is gone
    names = {
        f"agentrig-react-{dead}-abcd1234": False,
        f"agentrig-task-{reused}-abcd1234": False,
        f"agentrig-react-{alive}-abcd1234": True,
        f"agentrig-react-{_dead_tag().replace(host, elsewhere[:8])}-abcd1234": True,
        "agentrig-react-abcd1234": True,  # no owner in the name: not ours to judge
        f"precious-{dead}-abcd1234": True,  # not agentrig's
    }
    for name in names:
        (tmp_path / name).mkdir()
        (tmp_path / name / "file").write_text("x")
    link_target = tmp_path / "outside"
    link_target.mkdir()
    (link_target / "keep").write_text("keep")
    os.symlink(link_target, tmp_path / f"agentrig-link-{dead}-abcd1234")  # removed as a link, never followed

    removed = sweep_temp_dirs(tmp_path)

    assert sorted(p.name for p in removed) == sorted(
        [*(n for n, kept in names.items() if not kept), f"agentrig-link-{dead}-abcd1234"]
    )
    assert {n for n in names if (tmp_path / n).exists()} == {n for n, kept in names.items() if kept}
    assert (link_target / "keep").read_text() == "keep"

    orphan = subprocess.Popen(["sleep", "60"], env={**os.environ, OWNER_ENV: dead})
    owned = subprocess.Popen(["sleep", "60"], env={**os.environ, OWNER_ENV: alive})
    try:
        time.sleep(0.2)
        kill_orphaned_processes()
        # killed by this sweep, or by a concurrent agentrig's (every agentrig sweeps what ended ones left)
        assert orphan.wait(5) == -signal.SIGKILL
        assert owned.poll() is None, "the sweep killed a process whose agentrig still runs"
    finally:
        for proc in (orphan, owned):
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_an_agentrig_killed_but_not_yet_reaped_counts_as_gone(tmp_path: Path) -> None:
    from agentrig.scratch import owner_gone, owner_tag, sweep_temp_dirs

    child = subprocess.Popen(["sleep", "30"])
    try:
        tag = owner_tag(child.pid)
        (tmp_path / f"agentrig-react-{tag}-abcd1234").mkdir()
        assert not owner_gone(tag) and sweep_temp_dirs(tmp_path) == []
        child.kill()
        _wait_for(lambda: Path(f"/proc/{child.pid}/stat").read_bytes().rsplit(b") ", 1)[1][:1] == b"Z", "no zombie")
        assert owner_gone(tag)  # its parent (this test) has not reaped it: a zombie, not an owner
        assert [p.name for p in sweep_temp_dirs(tmp_path)] == [f"agentrig-react-{tag}-abcd1234"]
    finally:
        child.kill()
        child.wait()


def test_a_killed_evaluate_leaves_no_workspace_copy_once_the_next_one_starts(
    tmp_path: Path, fake_openai_server
) -> None:
    fake_openai_server.respond_with(testkit.solver())
    duration = f"300.{random.randrange(10**6):06d}"
    flag = tmp_path / "hang-in-tests"
    # the test hangs (and leaves a background process) only while the flag exists: the run passes, evaluate hangs
    check = f"test -f {flag} || exit 0\nsleep {duration} >/dev/null 2>&1 &\nsleep {duration}\n"
    problem = testkit.make_problem(tmp_path / "problems", "calc", [("Write a.txt.", [testkit.write_file("a.txt", "a\n")], check)])
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    out = tmp_path / "run"
    env = testkit.cli_env(tmp_path, fake_openai_server.base_url, TMPDIR=str(tmpdir))
    ran = subprocess.run([testkit.agentrig_bin(), "run", str(problem), "--agent", "scripted", "--model", "openai/gpt-4o-mini",
                          "--output", str(out), "-q"], env=env, capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    flag.write_text("")
    evaluate = subprocess.Popen([testkit.agentrig_bin(), "evaluate", str(out), "--runtime", "local"], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, cwd=tmp_path)
    try:
        _wait_for(lambda: len(_sleeps(duration)) == 2, "the evaluation never ran the test")
        evaluate.send_signal(signal.SIGKILL)
        evaluate.wait(10)
        assert _leftovers(tmpdir), "the killed evaluation left nothing in the temporary directory"
        flag.unlink()
        again = subprocess.run([testkit.agentrig_bin(), "evaluate", str(out), "--runtime", "local"], env=env, capture_output=True,
                               text=True, timeout=180, cwd=tmp_path)
        assert again.returncode == 0, again.stderr
        assert (_sleeps(duration), _leftovers(tmpdir)) == ([], []), "the next evaluate left the killed one's leftovers"
    finally:
        if evaluate.poll() is None:
            evaluate.kill()
        for pid in _sleeps(duration):
            os.kill(pid, signal.SIGKILL)
