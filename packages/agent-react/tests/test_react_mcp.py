"""MCP servers for the react agent: the test kit's real MCP server (official SDK) over stdio and HTTP,
its tools offered next to react's own as ``mcp__SERVER__TOOL``, results and errors as tool results,
the server started with the agent and stopped with it (cleanup, a limit, the run's teardown)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agentrig import AgentSetupError
from agentrig.agents.session import Session
from agentrig.runtime import teardown
from agentrig.testing.fake_server import FakeModelServer
from agentrig.testing.mcp_server import McpHttpServerProcess, stdio_server
from agentrig.trajectory import ToolUseStep
from agentrig_react.config import ReactConfig
from agentrig_react.mcp_tools import tool_name

SECRET = "react-mcp-env-secret-91d2"


def gone(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    return not status.exists() or "zombie" in status.read_text().lower()


def wait_gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while not gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return gone(pid)


def tool_names(body: dict[str, Any], provider: str) -> list[str]:
    return [t["function"]["name"] if provider == "openai" else t["name"] for t in body.get("tools") or []]


def probe(tmp_path: Path, **env: str) -> tuple[dict[str, Any], Path]:
    pid_file = tmp_path / f"mcp-{len(list(tmp_path.glob('mcp-*.pid')))}.pid"
    return stdio_server("--pid-file", str(pid_file), env=env or None), pid_file


def test_the_model_calls_mcp_tools_next_to_its_own_and_the_server_stops_with_the_agent(
    server: FakeModelServer, provider: str, make_agent: Any, session: Session, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGENTRIG_TEST_REACT_SECRET", SECRET)
    entry, pid_file = probe(tmp_path, PROBE_SECRET="${AGENTRIG_TEST_REACT_SECRET}")
    server.add_tool_call("mcp__probe__write_file", {"path": "notes/mcp.txt", "content": "written by mcp\n"})
    server.add_tool_call("mcp__probe__fail", {"message": "on purpose"})
    server.add_tool_call("mcp__probe__env_digest", {"name": "PROBE_SECRET"})
    server.add_tool_call("submit", {"answer": "done"})
    agent = make_agent(mcp_servers={"probe": entry})
    steps: list[Any] = []
    agent.add_step_listener(steps.append)
    pid = int(pid_file.read_text())
    assert not gone(pid)  # started with the agent's setup
    result = agent.run_checkpoint("Write notes/mcp.txt through the MCP server.")

    assert result.stop_reason == "submitted" and not result.had_error, result.error_message
    assert (session.workspace.path / "notes" / "mcp.txt").read_text() == "written by mcp\n"
    names = tool_names(server.model_requests[0].body, provider)
    assert names[:6] == ["bash", "read_file", "write_file", "edit_file", "list_dir", "submit"]
    assert names[6:] == ["mcp__probe__write_file", "mcp__probe__fail", "mcp__probe__add", "mcp__probe__env_digest"]
    calls = {s.tool: s for s in steps if isinstance(s, ToolUseStep)}
    assert calls["mcp__probe__write_file"].result == "wrote 15 bytes to notes/mcp.txt"
    assert not calls["mcp__probe__write_file"].is_error
    assert calls["mcp__probe__fail"].is_error and "fail: on purpose" in (calls["mcp__probe__fail"].result or "")
    # the secret reached the server through its environment, and no request or argument carried it
    assert calls["mcp__probe__env_digest"].result == hashlib.sha256(SECRET.encode()).hexdigest()
    assert all(SECRET not in r.raw_body for r in server.model_requests)
    agent.cleanup()
    assert wait_gone(pid)


def test_the_server_schema_is_what_the_model_sees(fake_openai_server: FakeModelServer, make_openai_agent: Any, tmp_path: Path) -> None:
    fake_openai_server.add_tool_call("submit", {"answer": "x"})
    entry, _ = probe(tmp_path)
    agent = make_openai_agent(mcp_servers={"p": entry})
    agent.run("Nothing.")
    tools = {t["function"]["name"]: t["function"] for t in fake_openai_server.model_requests[0].body["tools"]}
    add = tools["mcp__p__add"]
    assert add["description"] == "The sum of a and b."
    assert add["parameters"]["required"] == ["a", "b"] and add["parameters"]["properties"]["a"]["type"] == "integer"


def test_an_http_server_with_headers_from_the_environment(
    fake_openai_server: FakeModelServer, make_openai_agent: Any, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTRIG_TEST_REACT_TOKEN", "tok-react-77")
    fake_openai_server.add_tool_call("mcp__web__write_file", {"path": "web.txt", "content": "over http"})
    fake_openai_server.add_tool_call("submit", {"answer": "x"})
    with McpHttpServerProcess(session.workspace.path, env={"AGENTRIG_MCP_TOKEN": "tok-react-77"}) as mcp:
        agent = make_openai_agent(
            mcp_servers={"web": {"url": mcp.url, "headers": {"Authorization": "Bearer ${AGENTRIG_TEST_REACT_TOKEN}"}}}
        )
        agent.run("Write web.txt.")
        agent.cleanup()
    assert agent.stop_reason == "submitted"
    assert (session.workspace.path / "web.txt").read_text() == "over http"


def test_a_wrong_token_is_one_setup_line_and_nothing_is_left_running(
    fake_openai_server: FakeModelServer, make_openai_agent: Any, session: Session, tmp_path: Path
) -> None:
    entry, pid_file = probe(tmp_path)
    with McpHttpServerProcess(session.workspace.path, env={"AGENTRIG_MCP_TOKEN": "right"}) as mcp:
        servers = {"local": entry, "web": {"url": mcp.url, "headers": {"Authorization": "Bearer wrong"}}}
        with pytest.raises(AgentSetupError) as caught:
            make_openai_agent(mcp_servers=servers)
    message = str(caught.value)
    assert message.startswith("react config: mcp_servers.web: could not start or list its tools:") and "\n" not in message
    assert wait_gone(int(pid_file.read_text()))  # the stdio server started first was stopped again


def test_allow_list_names_a_server_or_one_tool(fake_openai_server: FakeModelServer, make_openai_agent: Any, tmp_path: Path) -> None:
    fake_openai_server.add_tool_call("submit", {"answer": "x"})
    one, _ = probe(tmp_path)
    two, _ = probe(tmp_path)
    agent = make_openai_agent(mcp_servers={"a": one, "b": two}, tools=["bash", "submit", "mcp__a", "mcp__b__add"])
    agent.run("Nothing.")
    names = [t["function"]["name"] for t in fake_openai_server.model_requests[0].body["tools"]]
    assert names == ["bash", "submit", "mcp__a__write_file", "mcp__a__fail", "mcp__a__add", "mcp__a__env_digest", "mcp__b__add"]
    with pytest.raises(ValueError, match=r"tools: unknown tool\(s\) mcp__c"):
        ReactConfig(mcp_servers={"a": one}, tools=["mcp__c"])


def test_a_limit_and_the_run_teardown_stop_the_server(
    fake_openai_server: FakeModelServer, make_openai_agent: Any, tmp_path: Path
) -> None:
    from agentrig import AgentCostLimits

    fake_openai_server.add_tool_call("mcp__probe__add", {"a": 1, "b": 2})
    fake_openai_server.add_tool_call("mcp__probe__add", {"a": 2, "b": 3})
    entry, pid_file = probe(tmp_path)
    agent = make_openai_agent(mcp_servers={"probe": entry}, cost_limits=AgentCostLimits(step_limit=1))
    result = agent.run_checkpoint("Add.")
    assert result.stop_reason == "step_limit"
    pid = int(pid_file.read_text())
    assert not gone(pid)  # a limit ends the checkpoint, not the agent: the next checkpoint may call it again
    # SIGINT/SIGTERM: the run's teardown closes whatever is open, the MCP connections among them
    assert any(type(c).__name__ == "McpConnections" for c in teardown.open_sessions())
    teardown.close_all()
    assert wait_gone(pid)
    agent.cleanup()  # still safe afterwards


def test_a_killed_agent_process_leaves_no_server(tmp_path: Path, fake_openai_server: FakeModelServer) -> None:
    """kill -9 of the process holding the client: the server sees its standard input close and exits."""
    entry, pid_file = probe(tmp_path)
    script = tmp_path / "hold.py"
    script.write_text(
        "import json, sys, time\n"
        "from pathlib import Path\n"
        "from agentrig_react.mcp_tools import McpConnections\n"
        "from agentrig.agents.mcp import McpStdioServer\n"
        f"server = McpStdioServer.model_validate(json.loads({json.dumps(json.dumps(entry))}))\n"
        f"McpConnections({{'probe': server}}, Path({str(tmp_path)!r}), Path({str(tmp_path / 'logs')!r})).open()\n"
        "print('open', flush=True)\n"
        "time.sleep(600)\n"
    )
    holder = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        pid = int(pid_file.read_text())
        assert not gone(pid)
        holder.kill()
        holder.wait(timeout=10)
        assert wait_gone(pid)
    finally:
        if holder.poll() is None:
            holder.kill()
        if holder.stdout is not None:
            holder.stdout.close()


def test_subagents_get_a_server_only_when_their_allow_list_names_it(
    fake_openai_server: FakeModelServer, make_openai_agent: Any, tmp_path: Path
) -> None:
    from agentrig_react.agent import ReactAgent

    entry, _ = probe(tmp_path)
    base = {"type": "react", "base_url": fake_openai_server.base_url}
    subagents = [
        {"name": "with_mcp", "description": "d", "agent": base, "tools": ["write_file", "mcp__probe"]},
        {"name": "without", "description": "d", "agent": base, "tools": ["write_file"]},
        {"name": "everything", "description": "d", "agent": base},
    ]
    parent = make_openai_agent(setup=False, mcp_servers={"probe": entry}, subagents=subagents)
    assert isinstance(parent, ReactAgent)
    configs = {sub.name: parent._subagent_from_config(sub) for sub in parent.config.subagents}
    built = {name: tool.build_agent() for name, tool in configs.items()}
    servers = {name: agent.config.mcp_servers for name, agent in built.items() if isinstance(agent, ReactAgent)}
    assert servers == {"with_mcp": {"probe": parent.config.mcp_servers["probe"]}, "without": {}, "everything": {}}


def test_long_or_odd_tool_names_become_valid_model_names() -> None:
    assert tool_name("s", "read.file") == "mcp__s__read_file"
    long = tool_name("server", "x" * 80)
    assert len(long) == 64 and long.startswith("mcp__server__xxx")
    assert tool_name("server", "x" * 80) != tool_name("server", "x" * 79 + "y")


def test_an_unset_variable_is_refused_before_anything_starts(
    fake_openai_server: FakeModelServer, make_openai_agent: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENTRIG_TEST_NOT_SET", raising=False)
    entry, pid_file = probe(tmp_path, TOKEN="${AGENTRIG_TEST_NOT_SET}")
    agent = make_openai_agent(setup=False, mcp_servers={"probe": entry})
    with pytest.raises(AgentSetupError, match=r"^react config: mcp_servers.probe.env.TOKEN: environment variable "
                                              r"AGENTRIG_TEST_NOT_SET is not set"):
        agent.preflight()
    assert not pid_file.exists()


@pytest.mark.docker
def test_under_docker_the_client_and_its_stdio_server_run_on_the_host_and_write_the_container_workspace(
    docker_test_image: str, fake_openai_server: FakeModelServer, tmp_path: Path
) -> None:
    from pydantic import SecretStr

    from agentrig import APIPricing, ModelDefinition, ProviderCredential
    from agentrig_react.agent import ReactAgent

    server = fake_openai_server
    server.add_tool_call("mcp__probe__write_file", {"path": "from_mcp.txt", "content": "host server\n"})
    server.add_tool_call("bash", {"command": "cat from_mcp.txt; test -f /.dockerenv && echo in-container"})
    server.add_tool_call("submit", {"answer": "done"})
    entry, pid_file = probe(tmp_path)
    model = ModelDefinition(provider="openai", name="gpt-fake", pricing=APIPricing(input=1.0, output=2.0))
    credential = ProviderCredential(provider="openai", value=SecretStr("sk-test"), source="test", env_var="OPENAI_API_KEY")
    config = ReactConfig(base_url=server.base_url, mcp_servers={"probe": entry})
    agent = ReactAgent(config, model, credential, "docker-mcp")
    with Session.create(runtime="docker", base_dir=tmp_path / "s", runtime_options={"image": docker_test_image}) as session:
        agent.setup(session)
        try:
            result = agent.run_checkpoint("Write it through MCP, then read it in the container.")
        finally:
            agent.cleanup()
        assert result.stop_reason == "submitted", result.error_message
        bash_step = [m for m in agent.messages if m.role == "tool"][1]
        assert "host server" in str(bash_step.content) and "in-container" in str(bash_step.content)
    assert wait_gone(int(pid_file.read_text()))


def _sandboxed_processes(marker: str) -> dict[int, tuple[str, list[int]]]:
    """Host pid -> (program, its pids in every PID namespace: ``NSpid``) of each live process whose argv holds
    ``marker``."""
    found: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            status = (entry / "status").read_text()
        except OSError:
            continue
        if marker in argv and "mcp_server" in argv and "zombie" not in status:
            nspid = next(line for line in status.splitlines() if line.startswith("NSpid:"))
            found[int(entry.name)] = (Path(argv.split()[0]).name, [int(x) for x in nspid.split()[1:]])
    return found


def test_under_a_bwrap_runtime_the_stdio_server_runs_in_its_sandbox_and_its_stderr_is_saved_scrubbed(
    fake_openai_server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uuid

    from agentrig.testing.sandbox import require_bwrap

    from .conftest import build_agent

    require_bwrap()
    monkeypatch.setenv("AGENTRIG_TEST_REACT_BWRAP_SECRET", SECRET)
    server = fake_openai_server
    server.add_tool_call("mcp__probe__write_file", {"path": "sandboxed.txt", "content": "from the sandbox\n"})
    server.add_tool_call("submit", {"answer": "done"})
    marker = uuid.uuid4().hex
    options = {"sandbox": "bwrap"}
    with Session.create(runtime="local", base_dir=tmp_path / "s", runtime_options=options) as session:
        pid_file = session.workspace.path / f".mcp-{marker}.pid"
        # the server says its secret on stderr: the saved log must not
        server_argv = f"{sys.executable} -m agentrig.testing.mcp_server --pid-file {pid_file}"
        script = f'echo "probe starting, token $PROBE_SECRET" >&2; exec {server_argv}'
        entry = {"command": "sh", "args": ["-c", script], "env": {"PROBE_SECRET": "${AGENTRIG_TEST_REACT_BWRAP_SECRET}"}}
        agent = build_agent(server, "openai", mcp_servers={"probe": entry})
        agent.setup(session)
        try:
            running = list(_sandboxed_processes(marker).values())
            # bwrap on the host, and under it, in a PID namespace of its own, the server (its pid file holds
            # its pid in there): the same kind of sandbox as the agent's commands
            assert [program for program, levels in running if len(levels) == 1] == ["bwrap"], running
            inner = [levels[1] for program, levels in running if program != "bwrap" and len(levels) == 2]
            assert int(pid_file.read_text()) in inner, running
            result = agent.run_checkpoint("Write sandboxed.txt through MCP.")
            assert result.stop_reason == "submitted", result.error_message
            assert (session.workspace.path / "sandboxed.txt").read_text() == "from the sandbox\n"
            artifacts = tmp_path / "artifacts"
            agent.save_artifacts(artifacts)
        finally:
            agent.cleanup()
    log = (artifacts / "mcp" / "mcp-probe.stderr.log").read_text()
    assert "probe starting, token [REDACTED]" in log and SECRET not in log
    assert all(SECRET not in f.read_text() for f in artifacts.rglob("*") if f.is_file())
    deadline = time.monotonic() + 10
    while _sandboxed_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _sandboxed_processes(marker) == {}


@pytest.fixture
def python_in_tmp() -> Any:
    """A virtual environment's python whose environment and base interpreter live right under ``/tmp``."""
    import shutil
    import tempfile

    from agentrig.testing.sandbox import python_under_tmp, require_bwrap

    require_bwrap()
    root = Path(tempfile.mkdtemp(prefix="agentrig-test-env-", dir="/tmp"))
    try:
        yield python_under_tmp(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.bwrap
def test_under_a_bwrap_runtime_stdio_servers_whose_python_lives_under_tmp_start_in_their_sandbox(
    fake_openai_server: FakeModelServer, tmp_path: Path, python_in_tmp: Path
) -> None:
    """The sandbox's /tmp is private: a server's environment is shown there read-only, nothing else of /tmp;
    the server named directly, and one a shell finds on the PATH its ``env`` sets."""
    from .conftest import build_agent

    venv = python_in_tmp.parents[1]
    planted = venv.parent / "planted.txt"
    planted.write_text("not for the sandbox\n")
    look = f"if [ -e {planted} ]; then echo 'planted: visible' >&2; else echo 'planted: hidden' >&2; fi"
    servers = {
        "direct": stdio_server(python=str(python_in_tmp)),
        "shell": {"command": "sh", "args": ["-c", f"{look}; exec python -m agentrig.testing.mcp_server"],
                  "env": {"PATH": f"{venv}/bin:/usr/bin:/bin"}},
    }
    server = fake_openai_server
    server.add_tool_call("mcp__direct__write_file", {"path": "direct.txt", "content": "direct\n"})
    server.add_tool_call("mcp__shell__write_file", {"path": "shell.txt", "content": "shell\n"})
    server.add_tool_call("submit", {"answer": "done"})
    with Session.create(runtime="local", base_dir=tmp_path / "s", runtime_options={"sandbox": "bwrap"}) as session:
        agent = build_agent(server, "openai", mcp_servers=servers)
        agent.setup(session)
        try:
            result = agent.run_checkpoint("Write both files through MCP.")
            agent.save_artifacts(tmp_path / "artifacts")
        finally:
            agent.cleanup()
        assert result.stop_reason == "submitted", result.error_message
        assert [(session.workspace.path / f"{name}.txt").read_text() for name in servers] == ["direct\n", "shell\n"]
    assert (tmp_path / "artifacts" / "mcp" / "mcp-shell.stderr.log").read_text().splitlines()[0] == "planted: hidden"


@pytest.mark.bwrap
def test_under_a_bwrap_runtime_a_stdio_server_whose_environment_holds_the_workspace_is_refused_in_one_line(
    fake_openai_server: FakeModelServer, python_in_tmp: Path
) -> None:
    from .conftest import build_agent

    venv = python_in_tmp.parents[1]
    with Session.create(runtime="local", base_dir=venv, runtime_options={"sandbox": "bwrap"}) as session:
        agent = build_agent(fake_openai_server, "openai", mcp_servers={"probe": {"command": str(python_in_tmp)}})
        with pytest.raises(AgentSetupError) as refused:
            agent.setup(session)
        agent.cleanup()
        workspace = session.workspace.path
    message = str(refused.value)
    assert "\n" not in message and message.startswith(
        f"react config: mcp_servers.probe: {python_in_tmp} cannot start in the bubblewrap sandbox: it needs {venv}, "
        f"which holds {workspace}"
    ), message
    assert fake_openai_server.model_requests == []


def test_a_subagent_calls_the_server_its_allow_list_names_and_one_without_it_cannot(
    fake_openai_server: FakeModelServer, session: Session, tmp_path: Path
) -> None:
    from .conftest import FAST_RETRY, build_agent

    server = fake_openai_server
    server.add_tool_call("with_mcp", {"task": "Write a.txt through the probe server."})
    server.add_tool_call("mcp__probe__write_file", {"path": "a.txt", "content": "from the subagent\n"})
    server.add_tool_call("submit", {"answer": "written"})
    server.add_tool_call("without", {"task": "Write b.txt through the probe server."})
    server.add_tool_call("mcp__probe__write_file", {"path": "b.txt", "content": "must not happen\n"})
    server.add_tool_call("submit", {"answer": "could not"})
    server.add_tool_call("submit", {"answer": "done"})
    entry, _ = probe(tmp_path)
    base = {"type": "react", "base_url": server.base_url, "model_options": FAST_RETRY}
    subagents = [
        {"name": "with_mcp", "description": "Has the probe server.", "agent": base, "tools": ["write_file", "mcp__probe"]},
        {"name": "without", "description": "Has no MCP server.", "agent": base, "tools": ["write_file"]},
    ]
    agent = build_agent(server, "openai", mcp_servers={"probe": entry}, subagents=subagents)
    agent.setup(session)
    try:
        result = agent.run_checkpoint("Delegate the writing.")
    finally:
        agent.cleanup()
    assert result.stop_reason == "submitted", result.error_message
    requests = server.model_requests
    offered = [[t["function"]["name"] for t in r.body.get("tools") or []] for r in requests]
    assert offered[1] == ["write_file", "mcp__probe__write_file", "mcp__probe__fail", "mcp__probe__add",
                          "mcp__probe__env_digest"]
    assert not any(name.startswith("mcp__") for name in offered[4])
    with_run, without_run = agent.subagent_runs
    written = [s for s in with_run.steps if isinstance(s, ToolUseStep) and s.tool == "mcp__probe__write_file"]
    assert len(written) == 1 and not written[0].is_error and written[0].result == "wrote 18 bytes to a.txt"
    refused = [s for s in without_run.steps if isinstance(s, ToolUseStep) and s.tool == "mcp__probe__write_file"]
    assert len(refused) == 1 and refused[0].is_error and "unknown tool" in (refused[0].result or "")
    made = [p for p in tmp_path.rglob("*.txt") if p.name in ("a.txt", "b.txt")]
    assert [p.name for p in made] == ["a.txt"], made
