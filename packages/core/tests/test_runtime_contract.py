"""One suite for every runtime: the behaviour agents rely on, checked on the real thing.

Each test runs on the ``local`` runtime, on the ``local`` runtime in its
bubblewrap sandbox (``sandbox: bwrap``), on the ``docker`` runtime (a real
engine, the busybox test image) and on a third party's runtime written against
the keyword signature that came before :class:`Invocation` (``keywords``, found
through the ``agentrig_runtimes`` hook); commands stick to what both a host and
a busybox image offer.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import agentrig
from agentrig.agents.session import Session
from agentrig.runtime.interface import Invocation, Runtime, RuntimeEvent, RuntimeProcess, RuntimeResult
from agentrig.runtime.local import MARKER_ENV, LocalRuntime
from agentrig.runtime.proctree import is_running, marked_processes

# A process counts as alive unless /proc says it is gone or a zombie.
ALIVE = 'for p in $(cat {file}); do if [ -e /proc/$p ] && ! grep -q ") Z " /proc/$p/stat; then echo alive; else echo dead; fi; done'


with pytest.warns(DeprecationWarning, match=r"overrides start, exec\(\) with keyword options: implement launch"):

    class KeywordRuntime(Runtime):
        """A third party's runtime as written before :class:`Invocation`: ``start`` and ``exec`` take keywords."""

        name = "keywords"

        def __init__(self, workspace: Path, *, home: Path | None = None, env: dict[str, str], config: dict[str, Any]) -> None:
            self.inner = LocalRuntime(workspace, home=home, env=env, config=config)

        @property
        def workdir(self) -> str:
            return self.inner.workdir

        @property
        def home(self) -> str | None:
            return self.inner.home

        @property
        def environment(self) -> dict[str, str]:
            return self.inner.environment

        def start(  # type: ignore[override]  # the old signature, on purpose
            self,
            command: str | list[str],
            *,
            env: dict[str, str] | None = None,
            timeout: float | None = None,
            idle_timeout: float | None = None,
            stdin: str | bytes | None = None,
            cwd: str | None = None,
        ) -> RuntimeProcess:
            return self.inner.start(command, env=env, timeout=timeout, idle_timeout=idle_timeout, stdin=stdin, cwd=cwd)

        def exec(
            self,
            command: str | list[str],
            *,
            env: dict[str, str] | None = None,
            timeout: float | None = None,
            idle_timeout: float | None = None,
            stdin: str | bytes | None = None,
            cwd: str | None = None,
        ) -> RuntimeResult:
            return self.inner.exec(command, env=env, timeout=timeout, idle_timeout=idle_timeout, stdin=stdin, cwd=cwd)

        def kill(self) -> None:
            self.inner.kill()

        def cleanup(self) -> None:
            self.inner.cleanup()


class KeywordRuntimePlugin:
    @agentrig.hookimpl
    def agentrig_runtimes(self) -> list[agentrig.RuntimeSpec]:
        return [agentrig.RuntimeSpec(name="keywords", runtime=f"{__name__}:KeywordRuntime")]


@pytest.fixture(
    params=[
        "local",
        pytest.param("local-bwrap", marks=pytest.mark.bwrap),
        pytest.param("docker", marks=pytest.mark.docker),
        # it calls the local runtime the old way too: its own deprecation warnings are expected
        pytest.param("keywords", marks=pytest.mark.filterwarnings("ignore:runtime options as keywords:DeprecationWarning")),
    ]
)
def session(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Session]:
    options: dict[str, object] = {}
    runtime = request.param
    if runtime == "keywords":
        request.getfixturevalue("plugin_registry")
        agentrig.plugins.register(KeywordRuntimePlugin())
    if runtime == "docker":
        options["image"] = request.getfixturevalue("docker_test_image")
    if runtime == "local-bwrap":  # the local runtime with its bubblewrap sandbox
        runtime, options["sandbox"] = "local", "bwrap"
    with Session.create(runtime=runtime, base_dir=tmp_path, runtime_options=options, env={"SESSION_VAR": "s"}) as s:
        yield s


@pytest.fixture
def runtime(session: Session) -> Runtime:
    return session.runtime


def assert_none_left_on_the_host(runtime: Runtime) -> None:
    """The local runtime (sandboxed or not): no process carrying its marker runs, as the host sees it.

    Inside a sandbox a command sees only its own PID namespace, where a pid
    written by an earlier command means nothing: the host's view is the proof.
    """
    if runtime.name in ("local", "keywords"):
        marker = runtime.environment[MARKER_ENV]
        assert [pid for pid in marked_processes(MARKER_ENV, marker) if is_running(pid)] == []


def collect(events: Iterator[RuntimeEvent]) -> list[RuntimeEvent]:
    return list(events)


def test_exit_codes_and_output(runtime: Runtime) -> None:
    result = runtime.exec("echo out; echo err >&2; exit 3")
    assert (result.exit_code, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert not result.timed_out and not result.killed
    assert runtime.exec(["sh", "-c", "exit 255"]).exit_code == 255
    assert runtime.exec("true").exit_code == 0


def test_streaming_keeps_order_and_arrives_as_it_happens(runtime: Runtime, session: Session) -> None:
    # The command goes on only once this test has seen o1 and written `go` into the workspace: o1 must
    # arrive while the command runs (it gives up after a minute, saying so, rather than hang).
    wait = "n=0; while [ ! -e go ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n+1)); done; [ -e go ] || echo not-streamed"
    command = f"echo o1; sleep 0.05; echo e1 >&2; {wait}; for i in 2 3; do sleep 0.1; echo o$i; sleep 0.05; echo e$i >&2; done"
    seen: list[tuple[str, str]] = []
    for event in runtime.stream(command):
        seen.append((event.kind, event.text))
        if event.text == "o1\n":
            (session.workspace.path / "go").touch()
    texts = [(kind, text) for kind, text in seen if kind != "finished"]
    assert [t for k, t in texts if k == "stdout"] == ["o1\n", "o2\n", "o3\n"], "o1 was not streamed before the command ended"
    assert [t for k, t in texts if k == "stderr"] == ["e1\n", "e2\n", "e3\n"]
    assert seen[-1][0] == "finished" and seen[-1][1] == ""
    interleaved = [text for kind, text in seen if kind in ("stdout", "stderr")]
    assert interleaved == ["o1\n", "e1\n", "o2\n", "e2\n", "o3\n", "e3\n"]


def test_list_commands_reach_no_shell(runtime: Runtime) -> None:
    evil = "$(touch pwned); `touch pwned2`; touch pwned3"
    result = runtime.exec(["echo", evil])
    assert result.stdout == evil + "\n"
    assert runtime.exec("ls pwned pwned2 pwned3").exit_code != 0


def test_missing_executable_is_127(runtime: Runtime) -> None:
    result = runtime.exec(["no-such-program-xyz"])
    assert result.exit_code == 127
    assert runtime.exec("no-such-program-xyz").exit_code == 127


def test_cwd_and_workdir(runtime: Runtime, session: Session) -> None:
    (session.workspace.path / "sub").mkdir()
    assert runtime.exec("pwd").stdout.strip() == runtime.workdir
    assert runtime.exec(Invocation("pwd", cwd="sub")).stdout.strip() == runtime.workdir + "/sub"


def test_wall_timeout_kills_the_whole_tree(runtime: Runtime) -> None:
    command = "sleep 60 & echo $! > pids; setsid sleep 60 & echo $! >> pids; sleep 60"
    result = runtime.exec(Invocation(command, timeout=1.0))
    assert result.timed_out and result.timeout_kind == "wall" and result.killed
    assert result.exit_code is None
    assert runtime.exec(ALIVE.format(file="pids")).stdout.split() == ["dead", "dead"]
    assert_none_left_on_the_host(runtime)


def test_idle_timeout_kills_a_silent_process(runtime: Runtime) -> None:
    result = runtime.exec(Invocation("echo start; sleep 60 & echo $! > pids; sleep 60", idle_timeout=0.8))
    assert result.timed_out and result.timeout_kind == "idle"
    assert result.stdout == "start\n"
    assert runtime.exec(ALIVE.format(file="pids")).stdout.split() == ["dead"]
    assert_none_left_on_the_host(runtime)


def test_idle_timeout_spares_a_chatty_process(runtime: Runtime) -> None:
    result = runtime.exec(Invocation("for i in 1 2 3 4 5 6; do echo $i; sleep 0.2; done", idle_timeout=0.8))
    assert not result.timed_out and result.exit_code == 0
    assert result.stdout.split() == ["1", "2", "3", "4", "5", "6"]


def test_huge_output_on_both_streams(runtime: Runtime) -> None:
    size = 3_000_000
    command = f"(yes o | head -c {size}) & (yes e | head -c {size} >&2); wait"
    events = collect(runtime.stream(command))
    out = "".join(e.text for e in events if e.kind == "stdout")
    err = "".join(e.text for e in events if e.kind == "stderr")
    assert len(out) == size and len(err) == size
    assert set(out) == {"o", "\n"} and set(err) == {"e", "\n"}
    result = events[-1].result
    assert result is not None and result.stdout == out and not result.output_truncated


def test_split_utf8_is_decoded_whole(runtime: Runtime) -> None:
    # the euro sign's three bytes arrive in two writes, 0.3 s apart
    events = collect(runtime.stream("printf '\\342\\202'; sleep 0.3; printf '\\254 ok\\n'"))
    text = "".join(e.text for e in events if e.kind == "stdout")
    assert text == "€ ok\n"
    assert "\ufffd" not in text


def test_invalid_utf8_is_replaced_not_fatal(runtime: Runtime) -> None:
    result = runtime.exec("printf 'a\\377b\\n'")
    assert result.stdout == "a\ufffdb\n"


def test_environment_is_isolated(runtime: Runtime, session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTRIG_HOST_SECRET", "leaked")
    env_text = runtime.exec("env").stdout
    assert "AGENTRIG_HOST_SECRET" not in env_text
    assert "SESSION_VAR=s" in env_text
    assert runtime.exec(Invocation('echo "$CALL_VAR"', env={"CALL_VAR": "c"})).stdout == "c\n"
    assert runtime.exec('echo "[$CALL_VAR]"').stdout == "[]\n", "a call's env does not persist"
    home = runtime.exec('echo "$HOME"').stdout.strip()
    assert home == runtime.home
    assert runtime.exec("touch ~/.config-file && ls -a ~").stdout.split().count(".config-file") == 1
    assert (session.home / ".config-file").exists()


def test_stdin_is_closed_unless_given(runtime: Runtime) -> None:
    result = runtime.exec(Invocation("cat; echo end", timeout=10))
    assert (result.stdout, result.timed_out) == ("end\n", False)
    assert runtime.exec(Invocation(["cat"], stdin="line1\nline2\n")).stdout == "line1\nline2\n"


def test_kill_from_another_thread(runtime: Runtime) -> None:
    process = runtime.start("echo started; sleep 60")
    seen = ""
    for event in process.events():  # events carry chunks, not lines
        assert event.kind != "finished", event
        seen += event.text
        if seen == "started\n":
            break
    threading.Timer(0.2, process.kill).start()
    result = process.wait()
    assert result.killed and not result.timed_out and result.exit_code is None
    assert process.poll() == result


def test_closing_a_stream_early_kills_the_process(runtime: Runtime) -> None:
    stream = runtime.stream("echo one; sleep 0.1; echo pid-$$; sleep 60")
    for event in stream:
        if event.text.startswith("one"):
            break
    stream.close()
    assert runtime.poll() is not None and runtime.poll().killed


def test_concurrent_commands(runtime: Runtime) -> None:
    results: dict[int, str] = {}

    def work(i: int) -> None:
        results[i] = runtime.exec(f"sleep 0.3; echo {i}").stdout

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {i: f"{i}\n" for i in range(4)}


def test_cleanup_kills_background_processes(session: Session) -> None:
    runtime = session.runtime
    result = runtime.exec("setsid sleep 60 > /dev/null 2>&1 & echo $! > pids")
    assert result.exit_code == 0
    pids = (session.workspace.path / "pids").read_text().split()
    runtime.kill()
    assert runtime.exec(ALIVE.format(file="pids")).stdout.split() == ["dead"] * len(pids)
    assert_none_left_on_the_host(runtime)


def test_one_invocation_serves_start_stream_and_exec(runtime: Runtime, session: Session) -> None:
    (session.workspace.path / "sub").mkdir()
    invocation = Invocation(["sh", "-c", 'cat; echo "$CALL_VAR"; pwd'], env={"CALL_VAR": "c"}, stdin="in\n", cwd="sub", timeout=30)
    expected = f"in\nc\n{runtime.workdir}/sub\n"
    assert runtime.exec(invocation).stdout == expected
    assert "".join(e.text for e in runtime.stream(invocation) if e.kind == "stdout") == expected
    assert runtime.start(invocation).wait().stdout == expected


def test_keyword_options_still_work_and_say_they_are_deprecated(runtime: Runtime) -> None:
    with pytest.warns(DeprecationWarning, match=r"pass an Invocation \(runtime.exec\(Invocation\(command") as caught:
        result = runtime.exec("cat; echo end", timeout=10, stdin="in\n")
    assert (result.stdout, result.timed_out) == ("in\nend\n", False)
    assert caught[0].filename == __file__, "the warning points at the caller's line"
    with pytest.warns(DeprecationWarning):
        events = list(runtime.stream("sleep 5", timeout=0.5))
    assert events[-1].result is not None and events[-1].result.timeout_kind == "wall"
    with pytest.raises(TypeError, match="timout"):
        runtime.exec("true", timout=1)
    with pytest.raises(TypeError, match="options go inside the Invocation, not beside it: timeout"):
        runtime.exec(Invocation("true"), timeout=1)
