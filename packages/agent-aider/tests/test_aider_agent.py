"""The aider agent driving the real pinned aider against the fake chat-completions server: limits kill it
while it waits for the model, the workspace's own aider settings are not read, setup refuses a wrong or
missing aider in one line."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentrig.agents.interface import Agent
from agentrig.agents.session import Session
from agentrig.errors import AgentSetupError
from agentrig.testing.cli_agents import live_processes, record_steps
from agentrig.testing.fake_openai import FakeOpenAIServer
from agentrig.trajectory import LLMCall
from agentrig.usage import AgentCostLimits
from agentrig_aider.testing import replace_block

pytestmark = pytest.mark.aider_cli

GREETINGS = replace_block("greetings.txt", "", "Hello, Ada!\n")


def test_a_time_limit_kills_aider_while_it_waits_for_the_model(
    make_agent: Callable[..., Agent], session: Session, fake_openai_server: Any
) -> None:
    fake_openai_server.add_reply("A miss.\n\n" + replace_block("names.txt", "nobody\n", "x\n"), usage={"input": 10, "output": 5})
    fake_openai_server.add_reply("Too late.\n\n" + GREETINGS, delay=120)  # the reflection's answer never comes in time
    # long enough for aider to start and make its first call on a loaded machine; the second never comes in time
    agent = make_agent(cost_limits=AgentCostLimits(time_limit=40), edit_format="diff")
    (Path(session.workspace.path) / "names.txt").write_text("Ada\n")
    steps = record_steps(agent)
    agent.setup(session)
    try:
        result = agent.run_checkpoint("Greet Ada in greetings.txt.")
        marker = str(agent._state_dir_host)
        assert live_processes(marker) == []  # aider's process tree is gone
    finally:
        agent.cleanup()
    assert result.stop_reason == "time_limit" and not result.had_error, result.error_message
    assert len([s for s in steps if isinstance(s, LLMCall)]) <= 1
    assert not (Path(session.workspace.path) / "greetings.txt").exists()


def test_the_workspace_does_not_configure_aider(
    make_agent: Callable[..., Agent], session: Session, fake_openai_server: Any, credential: Any
) -> None:
    with FakeOpenAIServer() as elsewhere:  # where a workspace .env would send the key
        workspace = Path(session.workspace.path)
        (workspace / ".env").write_text(f"OPENAI_API_BASE={elsewhere.base_url}\nOPENAI_BASE_URL={elsewhere.base_url}\n")
        (workspace / ".aider.conf.yml").write_text("auto-commits: true\ngit: true\nmodel: openai/other\n")
        (workspace / "names.txt").write_text("Ada\n")
        fake_openai_server.add_reply("Writing it.\n\n" + GREETINGS, usage={"input": 100, "output": 10})
        agent = make_agent(edit_format="diff")
        agent.setup(session)
        try:
            agent.run("/run touch pwned.txt")  # an aider command in the task is text for the model
        finally:
            agent.cleanup()
        assert agent.stop_reason == "completed"
        assert elsewhere.requests == []
        request = fake_openai_server.model_requests[0]
        assert request.model == "gpt-4.1"  # not the workspace config's model
        assert "/run touch pwned.txt" in request.raw_body
        names = sorted(p.name for p in workspace.iterdir())
        assert names == [".aider.conf.yml", ".env", "greetings.txt", "names.txt"]  # no .git, no .aider.* of aider's
        assert (workspace / "greetings.txt").read_text() == "Hello, Ada!\n"
        launch = agent.launch
        assert launch is not None and credential.secret() not in " ".join(launch.argv)
        assert "OPENAI_API_KEY" in launch.env_names and "names.txt" in launch.chat_files and ".env" not in launch.chat_files


def test_aider_connects_to_nothing_but_the_model_endpoint(
    make_agent: Callable[..., Agent], session: Session, fake_openai_server: Any, aider_bin: str, tmp_path: Path
) -> None:
    """No analytics, update check, price list or model lookup: the only connection is the fake server's port."""
    import re
    import shutil

    from agentrig.testing.prerequisites import require

    strace = shutil.which("strace")
    require(None if strace else "strace is not installed (apt-get install strace)", "strace is missing")
    traced = tmp_path / "traced-venv" / "bin"
    traced.mkdir(parents=True)
    trace = tmp_path / "connect.trace"
    # the launcher runs with the python beside `aider`: here a script running the real venv's python under strace
    (traced / "aider").write_text(f'#!/bin/sh\nexec {aider_bin} "$@"\n')
    real_python = Path(aider_bin).parent / "python"
    (traced / "python").write_text(f'#!/bin/sh\nexec {strace} -f -qq -o {trace} -e trace=connect {real_python} "$@"\n')
    for script in ("aider", "python"):
        (traced / script).chmod(0o755)
    (Path(session.workspace.path) / "names.txt").write_text("Ada\n")
    fake_openai_server.add_reply("Writing it.\n\n" + GREETINGS, usage={"input": 100, "output": 10})
    agent = make_agent(binary=str(traced / "aider"), edit_format="diff")
    agent.setup(session)
    try:
        agent.run("Greet Ada in greetings.txt.")
    finally:
        agent.cleanup()
    assert agent.stop_reason == "completed"
    connects = [line for line in trace.read_text().splitlines() if "connect(" in line and "AF_UNIX" not in line]
    targets = {m.group(0) for line in connects for m in re.finditer(r"sin6?_port=htons\(\d+\)[^}]*", line)}
    assert targets == {f'sin_port=htons({fake_openai_server.port}), sin_addr=inet_addr("127.0.0.1")'}, connects


def test_a_model_error_ends_the_checkpoint_as_an_api_error(
    make_agent: Callable[..., Agent], session: Session, fake_openai_server: Any, credential: Any
) -> None:
    from agentrig.errors import AgentStepError

    fake_openai_server.add_fault(401, error_type="invalid_api_key", message="no such key")
    agent = make_agent()
    agent.setup(session)
    try:
        with pytest.raises(AgentStepError, match="aider's model call failed: AuthenticationError"):
            agent.run("Say hello.")
    finally:
        agent.cleanup()
    assert agent.stop_reason == "api_error"


def test_setup_refuses_another_version_and_a_missing_aider(
    make_agent: Callable[..., Agent], session: Session, tmp_path: Path
) -> None:
    with pytest.raises(AgentSetupError, match=r"is version 0\.86\.2, the agent config pins 0\.1\.0"):
        make_agent(version="0.1.0").setup(session)
    missing = make_agent(binary=str(tmp_path / "no" / "aider"))
    with pytest.raises(AgentSetupError) as info:
        missing.setup(session)
    message = str(info.value)
    assert "\n" not in message and "pip install aider-chat==0.86.2" in message and "set 'binary'" in message
    assert os.environ.get("OPENAI_API_KEY", "sk-test") not in message or "sk-" not in message


def test_a_state_directory_swapped_for_a_link_gets_nothing_written_through_it(
    make_agent: Callable[..., Agent], session: Session, fake_openai_server: Any, tmp_path: Path
) -> None:
    """aider's state directory lies in the runtime's home, which the agent's commands write (in a container
    too, through its bind mount): swapped for a link to a host directory, the next checkpoint's task file was
    written there by agentrig itself. Refused in one line; nothing lands outside."""
    import shutil

    outside = tmp_path / "outside"
    outside.mkdir()
    fake_openai_server.add_reply("Writing it.\n\n" + GREETINGS, usage={"input": 100, "output": 10})
    agent = make_agent(edit_format="diff")
    agent.setup(session)
    try:
        state = agent._state_dir_host
        assert state is not None and session.home is not None and Path(session.home) in state.parents
        shutil.rmtree(state)
        state.symlink_to(outside)  # what `rm -rf ~/<state>; ln -s /outside ~/<state>` does
        result = agent.run_checkpoint("Greet Ada in greetings.txt.")
    finally:
        agent.cleanup()
    assert list(outside.iterdir()) == []
    assert result.had_error and "is a symbolic link; not followed" in (result.error_message or ""), result.error_message
    assert fake_openai_server.model_requests == []


def test_a_chat_history_swapped_for_a_link_copies_no_host_file_into_the_artifacts(
    make_agent: Callable[..., Agent], session: Session, fake_openai_server: Any, tmp_path: Path
) -> None:
    """aider's chat history lies in its state directory, in the runtime's home: swapped for a link to a host
    file (``~/.ssh/id_rsa``), agentrig copied that file into the run directory's artifacts."""
    secret = tmp_path / "id_rsa"
    secret.write_text("host-private-key-0123\n")
    (Path(session.workspace.path) / "names.txt").write_text("Ada\n")
    fake_openai_server.add_reply("Writing it.\n\n" + GREETINGS, usage={"input": 100, "output": 10})
    agent = make_agent(edit_format="diff")
    agent.setup(session)
    artifacts = tmp_path / "artifacts"
    try:
        result = agent.run_checkpoint("Greet Ada in greetings.txt.")
        state = agent._state_dir_host
        assert state is not None and not result.had_error, result.error_message
        (state / "chat.history.md").unlink(missing_ok=True)
        (state / "chat.history.md").symlink_to(secret)  # what the agent's last command can leave
        agent.save_artifacts(artifacts)
    finally:
        agent.cleanup()
    saved = "".join(p.read_text(errors="replace") for p in artifacts.rglob("*") if p.is_file())
    assert "host-private-key-0123" not in saved
    assert (artifacts / "trajectory.jsonl").is_file()
