"""Subagents' commands are confined to their directory: escapes by '..', absolute paths and symlinks fail.

Real files, real commands: the local runtime in a bubblewrap sandbox and
under Landlock (each test that can runs under both), the Docker runtime with
a container holding only the subagent's directory.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import agentrig_react.confinement as confinement
from agentrig import AgentSetupError
from agentrig.agents.session import Session
from agentrig.runtime.interface import Invocation, Runtime, RuntimeProcess
from agentrig.testing.fake_server import FakeModelServer
from agentrig.testing.sandbox import require_bwrap
from agentrig.trajectory import ToolUseStep
from agentrig_react.confinement import ConfinementError, confine, landlock_abi

from .conftest import FAST_RETRY, build_agent

SECRET = "parent only: do not read"


@pytest.fixture
def landlock() -> None:
    """Landlock must be there; without it the test skips locally and fails under CI."""
    if landlock_abi() < 1:
        message = "this kernel offers no Landlock (Linux >= 5.13 with the landlock LSM)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(params=["bwrap", "landlock"])
def mechanism(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The local runtime's confinement under test; returns the ``confine`` mode that selects it.

    ``bwrap``: the real bubblewrap (skips locally, fails under CI, without it).
    ``landlock``: the real Landlock, as on a machine without bubblewrap, where
    only ``best_effort`` accepts it.
    """
    if request.param == "bwrap":
        require_bwrap()
        return "strict"
    request.getfixturevalue("landlock")
    monkeypatch.setattr(confinement, "bwrap_problem", lambda: "bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    return "best_effort"


def helper(server: FakeModelServer, **extra: object) -> dict:
    return {
        "name": "helper",
        "description": "Hand a self-contained task to a helper agent.",
        "agent": {"type": "react", "base_url": server.base_url, "model_options": FAST_RETRY},
        **extra,
    }


def _script_escapes(server: FakeModelServer, workspace: str) -> None:
    """The subagent (in subagents/helper/001) tries every way out, then writes inside."""
    server.add_tool_call("helper", {"task": "Probe your confinement."})  # parent
    server.add_tool_call("bash", {"command": "cat ../../../secret.txt"})
    server.add_tool_call("bash", {"command": f"cat {workspace}/secret.txt"})
    server.add_tool_call("bash", {"command": "ln -s ../../../secret.txt link; cat link"})
    server.add_tool_call("bash", {"command": f"ln -s {workspace}/secret.txt abs_link; cat abs_link"})
    server.add_tool_call(
        "bash",
        {"command": (
            f"echo x > ../../../escaped.txt; echo y > {workspace}/escaped_abs.txt; mkdir -p ../../../evil; "
            "echo ok > mine.txt; cat mine.txt"
        )},
    )
    server.add_tool_call("read_file", {"path": "link"})
    server.add_tool_call("bash", {"command": "ls ../../.. ; ls /"})
    server.add_tool_call("bash", {"command": f"kill -0 {os.getpid()} && echo SIGNALLED"})  # the agentrig process
    server.add_tool_call("submit", {"answer": "probed"})
    server.add_tool_call("submit", {"answer": "done"})  # parent


def _check_escapes_failed(agent, session: Session, *, root_listing_refused: bool, signals_scoped: bool) -> None:
    workspace = session.workspace.path
    (run,) = agent.subagent_runs
    results = [s for s in run.steps if isinstance(s, ToolUseStep)]
    assert [s.tool for s in results] == ["bash"] * 5 + ["read_file", "bash", "bash", "submit"]
    for step in results[:4]:
        assert SECRET not in (step.result or ""), step
        assert step.exit_code != 0, step
    assert "ok" in (results[4].result or "")
    assert results[5].is_error and "outside the workspace" in (results[5].result or "")
    assert "secret.txt" not in (results[6].result or "")  # the parent's workspace cannot even be listed
    if root_listing_refused:
        assert "Permission denied" in (results[6].result or "")
    if signals_scoped:  # Landlock ABI >= 6, or another pid namespace: the agentrig process cannot be signalled
        assert "SIGNALLED" not in (results[7].result or "") and results[7].exit_code != 0
    for name in ("escaped.txt", "escaped_abs.txt", "evil"):
        assert not (workspace / name).exists(), name
    assert (workspace / "subagents/helper/001/mine.txt").read_text() == "ok\n"
    assert (workspace / "secret.txt").read_text() == SECRET


def test_local_subagent_commands_cannot_escape(
    mechanism: str, request: pytest.FixtureRequest, fake_openai_server: FakeModelServer, session: Session
) -> None:
    kind = request.node.callspec.params["mechanism"]
    (session.workspace.path / "secret.txt").write_text(SECRET)
    _script_escapes(fake_openai_server, str(session.workspace.path))
    agent = build_agent(fake_openai_server, "openai", subagents=[helper(fake_openai_server, confine=mechanism)])
    agent.setup(session)
    try:
        result = agent.run_checkpoint("Delegate the probe.")
    finally:
        agent.cleanup()
    assert result.stop_reason == "submitted" and not result.had_error
    landlock = kind == "landlock"
    _check_escapes_failed(
        agent, session, root_listing_refused=landlock, signals_scoped=not landlock or landlock_abi() >= 6
    )
    (run,) = agent.subagent_runs
    assert run.confinement == kind
    # Landlock refuses the parent's files; in the sandbox they do not exist
    refusal = "Permission denied" if landlock else "No such file or directory"
    assert refusal in next(s.result for s in run.steps if isinstance(s, ToolUseStep))
    delegated = next(s for s in agent._trajectory if isinstance(s, ToolUseStep) and s.tool == "helper")
    assert delegated.metadata is not None and delegated.metadata["confinement"] == kind
    assert delegated.metadata["status"] == "ok" and delegated.metadata["directory"] == "subagents/helper/001"


@pytest.mark.docker
def test_docker_subagent_runs_in_a_container_holding_only_its_directory(
    fake_openai_server: FakeModelServer, docker_test_image: str, tmp_path: Path
) -> None:
    with Session.create(runtime="docker", runtime_options={"image": docker_test_image}, base_dir=tmp_path) as session:
        (session.workspace.path / "secret.txt").write_text(SECRET)
        _script_escapes(fake_openai_server, "/workspace")
        agent = build_agent(fake_openai_server, "openai", subagents=[helper(fake_openai_server)])
        agent.setup(session)
        mine = {"label": f"agentrig.owner.pid={os.getpid()}"}  # other tests' containers may come and go
        containers_before = {c.id for c in session.runtime.client.containers.list(filters=mine, ignore_removed=True)}
        try:
            result = agent.run_checkpoint("Delegate the probe.")
        finally:
            agent.cleanup()
        assert result.stop_reason == "submitted" and not result.had_error
        _check_escapes_failed(agent, session, root_listing_refused=False, signals_scoped=True)
        (run,) = agent.subagent_runs
        assert run.confinement == "container"
        # the subagent's container is gone once its call returned
        assert {c.id for c in session.runtime.client.containers.list(filters=mine, ignore_removed=True)} == containers_before


class _PluginRuntime(Runtime):
    """A third party's runtime that knows nothing of confinement."""

    name = "elsewhere"

    def __init__(self, workdir: str) -> None:
        self._workdir = workdir

    @property
    def workdir(self) -> str:
        return self._workdir

    def launch(self, invocation: Invocation) -> RuntimeProcess:
        raise AssertionError("never started")

    def kill(self) -> None:
        pass

    def cleanup(self) -> None:
        pass


class _Session:
    def __init__(self, path: Path) -> None:
        from agentrig.workspace import Workspace

        self.workspace = Workspace(path)
        self.runtime = _PluginRuntime(str(path))


def test_strict_confinement_is_refused_where_it_cannot_hold(
    fake_openai_server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A runtime without a way to confine: refused when the agent is set up, before any model call.
    agent = build_agent(fake_openai_server, "openai", subagents=[helper(fake_openai_server)])
    with pytest.raises(AgentSetupError) as caught:
        agent.setup(_Session(tmp_path))
    message = str(caught.value)
    assert message.startswith("react config: subagents 'helper': confine: strict cannot be honoured: the 'elsewhere' runtime")
    assert "confine: best_effort" in message and "\n" not in message
    agent.cleanup()
    # Without bubblewrap, Landlock cannot hold the Docker socket: the local runtime refuses strict, naming
    # what to install, in one line.
    monkeypatch.setattr(confinement, "bwrap_problem", lambda: "bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    with Session.create(base_dir=tmp_path / "s") as session:
        with pytest.raises(ConfinementError) as refused:
            confine(session.runtime, session.workspace.path / "sub", "strict")
        assert "apt-get install bubblewrap" in str(refused.value) and "\n" not in str(refused.value)
        if landlock_abi() >= 1:
            assert "cannot keep commands from the Docker socket" in str(refused.value)
    # A kernel without Landlock either: refused too, and the kernel's lack is named.
    monkeypatch.setattr(confinement, "landlock_abi", lambda: 0)
    with Session.create(base_dir=tmp_path / "s") as session:
        with pytest.raises(ConfinementError, match="this kernel offers no Landlock either"):
            confine(session.runtime, session.workspace.path / "sub", "strict")
        # best_effort falls back to starting commands in the directory, and says so in the flags
        runtime, kind = confine(session.runtime, session.workspace.path / "sub", "best_effort")
        assert kind == "cwd" and runtime.workdir == str(session.workspace.path / "sub")
    assert fake_openai_server.model_requests == []


def test_best_effort_runs_with_a_plugin_runtime(fake_openai_server: FakeModelServer, tmp_path: Path) -> None:
    agent = build_agent(fake_openai_server, "openai", subagents=[helper(fake_openai_server, confine="best_effort")])
    agent.setup(_Session(tmp_path))
    agent.cleanup()


@pytest.fixture
def nested_session(tmp_path: Path) -> Iterator[Session]:
    with Session.create(base_dir=tmp_path / "sessions", name="nested") as made:
        yield made


def test_a_view_over_a_view_confines_to_the_inner_directory(
    mechanism: str, request: pytest.FixtureRequest, nested_session: Session
) -> None:
    workspace = nested_session.workspace.path
    (workspace / "outer").mkdir()
    (workspace / "outer/outer.txt").write_text("outer")
    outer, _ = confine(nested_session.runtime, workspace / "outer", mechanism)
    inner, kind = confine(outer, workspace / "outer/inner", mechanism)
    (workspace / "outer/inner").mkdir()
    try:
        assert kind == request.node.callspec.params["mechanism"]
        result = inner.exec("cat ../outer.txt; echo mine > mine.txt; cat mine.txt")
        refusal = "Permission denied" if kind == "landlock" else "No such file or directory"
        assert refusal in result.stderr and result.stdout == "mine\n"
        assert outer.exec("cat outer.txt").stdout == "outer"
    finally:
        inner.cleanup()
        outer.cleanup()


def test_a_symlink_planted_as_the_call_directory_is_refused(
    landlock: None, fake_openai_server: FakeModelServer, session: Session, tmp_path: Path
) -> None:
    """The parent (or a confined subagent running its own subagents) cannot point a call's directory elsewhere."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (session.workspace.path / "subagents/helper").mkdir(parents=True)
    (session.workspace.path / "subagents/helper/001").symlink_to(outside)
    server = fake_openai_server
    server.add_tool_call("helper", {"task": "Write here."})
    server.add_tool_call("submit", {})
    agent = build_agent(server, "openai", subagents=[helper(server)])
    agent.setup(session)
    try:
        result = agent.run_checkpoint("Delegate.")
    finally:
        agent.cleanup()
    assert result.stop_reason == "submitted"
    step = next(s for s in agent._trajectory if isinstance(s, ToolUseStep))
    assert step.is_error and step.metadata["status"] == "unavailable"
    assert "leads outside the workspace" in step.result
    assert list(outside.iterdir()) == [] and len(server.model_requests) == 2


def test_confined_commands_report_like_a_shell(mechanism: str, nested_session: Session) -> None:
    sub = nested_session.workspace.path / "sub"
    sub.mkdir()
    runtime, _ = confine(nested_session.runtime, sub, mechanism)
    try:
        missing = runtime.exec(["no-such-program-xyz", "arg"])
        assert missing.exit_code == 127 and "agentrig: command not found: no-such-program-xyz" in missing.stderr
        argv = runtime.exec(["sh", "-c", 'printf "%s|" "$@"; echo "$HOME" "$TMPDIR"', "sh", "a b", "--rw"])
        assert argv.exit_code == 0
        words, _, dirs = argv.stdout.partition("|--rw|")
        assert words == "a b" and dirs.split() == [str(runtime.private)] * 2  # a private HOME and TMPDIR
        assert runtime.exec("echo $HOME > out.txt; ls $HOME").exit_code == 0  # readable and writable
    finally:
        runtime.cleanup()
    assert not runtime.private.exists()


@pytest.mark.bwrap
def test_a_bwrap_subagent_starts_a_python_living_under_tmp_and_nothing_else_of_tmp_or_the_workspace_shows(
    nested_session: Session,
) -> None:
    """``confine: strict``'s sandbox shows what a command needs to start (here a venv and its base interpreter
    under /tmp) and only that: not what lies beside it, never a program of the parent's workspace."""
    import shutil
    import tempfile

    from agentrig.testing.sandbox import python_under_tmp

    workspace = nested_session.workspace.path
    (workspace / "sub").mkdir()
    (workspace / "tools").mkdir()
    tool = workspace / "tools" / "run.sh"
    tool.write_text(f"#!/bin/sh\necho '{SECRET}'\n")
    tool.chmod(0o755)
    root = Path(tempfile.mkdtemp(prefix="agentrig-test-env-", dir="/tmp"))
    runtime, kind = confine(nested_session.runtime, workspace / "sub", "strict")
    try:
        python = python_under_tmp(root)
        (root / "planted.txt").write_text(SECRET)
        report = "import os, sys; print(sys.prefix, sys.base_prefix, os.path.exists(sys.argv[1]), os.path.exists(sys.argv[2]))"
        result = runtime.exec(Invocation([str(python), "-c", report, str(root / "planted.txt"), str(tool)], timeout=60))
        refused = runtime.exec(["../tools/run.sh"])
    finally:
        runtime.cleanup()
        shutil.rmtree(root, ignore_errors=True)
    assert kind == "bwrap"
    assert result.exit_code == 0 and result.stdout.split() == [str(root / "venv"), str(root / "python"), "False", "False"]
    assert refused.exit_code == 126 and SECRET not in refused.stdout, refused.stdout
    assert refused.stderr.startswith(f"agentrig: {tool} cannot start in the bubblewrap sandbox: it needs {tool}, which "
                                     f"lies in {workspace}"), refused.stderr
