"""Test kit: a CLI agent's checkpoints end to end, its limits and a session continued, with the real CLI.

Codex, the Gemini CLI and OpenCode are checked the same way here; what differs is their CLI: the shell tool
the model calls, the attribute holding the CLI session the agent continues (``thread_id``, ``session_id``),
the field of the launch record naming the session a checkpoint continued, and where a request carries the
conversation. An agent's ``test_*_agent_e2e.py`` passes these with its fixtures (``make_agent``, ``session``,
its fake server) to :func:`check_step_limit`, :func:`check_cost_limit`, :func:`check_time_limit` and
:func:`check_session_continued` (and :func:`check_api_error`, :func:`check_pinned_version_refused`), then
checks what is its own on what they return.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentrig.testing.cli_agents import live_processes, sleeper_command

if TYPE_CHECKING:
    from pathlib import Path

    from agentrig.agents.interface import Agent
    from agentrig.agents.result import CheckpointInferenceResult
    from agentrig.agents.session import Session
    from agentrig.testing.fake_server import FakeModelServer, RecordedRequest
    from agentrig.trajectory import TrajectoryStep

#: A reply calling the CLI's own shell tool with a command (as ``FakeModelServer.add_reply`` takes it).
ShellCall = Callable[[str], dict[str, Any]]

#: The first checkpoint's task holds it: found in the second checkpoint's request, the conversation went on.
FIRST_MARKER = "FIRST-MARKER"


def check_step_limit(
    make_agent: Callable[..., Agent], session: Session, server: FakeModelServer, *, shell: ShellCall
) -> CheckpointInferenceResult:
    """``step_limit=2``: the CLI is killed at its second model call's usage while the tool that call asked for
    runs (a minute long): a limit, not an error; two steps; no third call asked; the tool's process gone and
    the file it writes at its end never written. Returns the checkpoint's result."""
    from agentrig.usage import AgentCostLimits

    agent = make_agent(cost_limits=AgentCostLimits(step_limit=2))
    tag = f"{agent.agent_name.upper()}-STEPPER-{time.monotonic_ns()}"  # names this test's tool among the machine's processes
    server.add_reply("One.", tool_calls=[shell("echo one")])
    server.add_reply("Two.", tool_calls=[shell(sleeper_command(tag))])
    server.add_reply("Never.")
    try:
        agent.setup(session)
        result = agent.run_checkpoint("keep going")
        assert result.stop_reason == "step_limit" and not result.had_error, result.error_message
        assert result.usage.steps == 2 and len(server.model_requests) == 2
        time.sleep(0.3)
        assert live_processes(tag) == [], "processes of the killed CLI survive"
        assert not (session.workspace.path / "late.txt").exists(), "the limit struck after the tool ended"
    finally:
        agent.cleanup()
    return result


def check_cost_limit(
    make_agent: Callable[..., Agent], session: Session, server: FakeModelServer, *, shell: ShellCall
) -> tuple[CheckpointInferenceResult, list[TrajectoryStep]]:
    """``cost_limit=1.0``: one call costing USD 1.25 of input (at USD 1.25 per million) asks for a tool that
    would run a minute; the CLI is killed while it runs: a limit, not an error; one step; no second call
    asked; the tool's process gone and the file it writes at its end never written. Returns the result and
    the steps the agent emitted (the agent's own test checks how it records the interrupted tool)."""
    from agentrig.testing.cli_agents import record_steps
    from agentrig.usage import AgentCostLimits

    agent = make_agent(cost_limits=AgentCostLimits(cost_limit=1.0))
    tag = f"{agent.agent_name.upper()}-SLEEPER-{time.monotonic_ns()}"
    server.add_reply("Working.", tool_calls=[shell(sleeper_command(tag))], usage={"input": 1_000_000, "output": 10})
    server.add_reply("Never.")
    steps = record_steps(agent)
    try:
        agent.setup(session)
        result = agent.run_checkpoint("spend money")
        assert not result.had_error, result.error_message
        assert result.stop_reason == "cost_limit"
        assert result.usage.cost >= 1.0 and result.usage.steps == 1
        assert len(server.model_requests) == 1
        time.sleep(0.3)
        assert live_processes(tag) == [], "processes of the killed CLI survive"
        assert not (session.workspace.path / "late.txt").exists(), "the limit struck after the tool ended"
    finally:
        agent.cleanup()
    return result, steps


def check_time_limit(
    make_agent: Callable[..., Agent], session: Session, server: FakeModelServer, *, shell: ShellCall,
    time_limit: float = 5.0,
) -> CheckpointInferenceResult:
    """``time_limit`` (seconds): the checkpoint's clock runs out while a tool of a minute runs (through the run's
    own lifecycle, which enforces it): the CLI's process tree is killed, stop reason ``time_limit``, not an error;
    the tool had started and never reached its end. A CLI slow to start (Qwen Code: seconds on a busy machine)
    passes a ``time_limit`` that leaves it the time to reach its tool. Returns the checkpoint's result."""
    from agentrig.agents import lifecycle
    from agentrig.problem import Checkpoint
    from agentrig.usage import AgentCostLimits

    agent = make_agent(cost_limits=AgentCostLimits(time_limit=time_limit))
    tag = f"{agent.agent_name.upper()}-TIMED-{time.monotonic_ns()}"
    # the tool outlasts the limit several times over: it is killed while it runs, not after it ended
    server.add_reply("Waiting.", tool_calls=[shell("touch started && " + sleeper_command(tag, max(60, int(4 * time_limit))))])
    server.add_reply("Never.")
    lifecycle.setup_agent(agent, session)
    try:
        result = lifecycle.run_checkpoint(agent, Checkpoint(name="c1", prompt="c1.md"), "Wait.", session.runtime)
        assert result.stop_reason == "time_limit" and not result.had_error, result.error_message
        time.sleep(0.3)
        assert live_processes(tag) == [], "processes of the killed CLI survive"
        workspace = session.workspace.path
        assert (workspace / "started").exists() and not (workspace / "late.txt").exists()  # killed while its tool ran
    finally:
        lifecycle.cleanup_agent(agent)
    return result


def check_session_continued(
    make_agent: Callable[..., Agent],
    session: Session,
    server: FakeModelServer,
    *,
    session_attr: str,
    launch_field: str,
    conversation: Callable[[RecordedRequest], str],
) -> str:
    """``reset_context`` false: checkpoint 2 continues checkpoint 1's CLI session (the agent's ``session_attr``,
    named by its launch record's ``launch_field``), the model is sent checkpoint 1's task and answer (in
    ``conversation(request)``), and checkpoint 2 records its own usage only (one call, its tokens), whatever
    the CLI's own totals count. Returns the session's id."""
    server.add_reply("First.", usage={"input": 100, "output": 5})
    server.add_reply("Second.", usage={"input": 300, "output": 7})
    agent = make_agent(reset_context=False)
    try:
        agent.setup(session)
        first = agent.run_checkpoint(f"one {FIRST_MARKER}")
        opened = getattr(agent, session_attr)
        assert not first.had_error, first.error_message
        assert opened and first.usage.net_tokens.input == 100
        agent.finish_checkpoint(reset_context=False)
        second = agent.run_checkpoint("two")
        assert not second.had_error, second.error_message
        launch = getattr(agent, "launch", None)
        assert launch is not None and getattr(launch, launch_field) == opened
        assert getattr(agent, session_attr) == opened
        assert second.usage.steps == 1 and second.usage.net_tokens.input == 300 and second.usage.net_tokens.output == 7
        requests = server.model_requests
        assert len(requests) == 2 and "First." not in conversation(requests[0])
        asked = conversation(requests[1])
        assert FIRST_MARKER in asked and "First." in asked, asked
    finally:
        agent.cleanup()
    return str(opened)


def check_connects_only_to_the_model(
    make_agent: Callable[..., Agent], session: Session, server: FakeModelServer, *, binary: str, shell: ShellCall,
    trace_dir: Path,
) -> None:
    """Every socket the CLI ``binary`` (and what it starts) connects while it runs a checkpoint with a shell tool
    is the fake model's, on 127.0.0.1: no DNS lookup, no usage statistics, no update check. The CLI runs under
    ``strace -f -e trace=connect`` (a wrapper in ``trace_dir``); a missing strace skips (fails under CI)."""
    import re
    import shutil
    import stat

    from agentrig.testing.prerequisites import require

    strace = shutil.which("strace")
    require(None if strace else "strace is not installed (apt-get install strace)", "strace is missing")
    trace = trace_dir / "connect.trace"
    wrapper = trace_dir / "cli-traced"
    wrapper.write_text(f'#!/bin/sh\nexec {strace} -f -qq -A -o {trace} -e trace=connect {binary} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    server.add_reply("Looking.", tool_calls=[shell("echo ok")])
    server.add_reply("Done.")
    agent = make_agent(binary=str(wrapper))
    try:
        agent.setup(session)
        result = agent.run_checkpoint("look around")
        assert not result.had_error, result.error_message
    finally:
        agent.cleanup()
    connects = [line for line in trace.read_text().splitlines() if "AF_INET" in line]
    pattern = r"sin6?_port=htons\((\d+)\).*?addr(?:=inet_addr|\(AF_INET6)?\(?\"?([0-9a-f.:]+)"
    matches = [re.search(pattern, line) for line in connects]
    assert all(matches), connects
    targets = {match.groups() for match in matches if match}
    assert targets == {(str(server.port), "127.0.0.1")}, connects



def check_api_error(
    make_agent: Callable[..., Agent], session: Session, server: FakeModelServer, *, status: int, message: str,
    api_key: str, **options: Any,
) -> CheckpointInferenceResult:
    """The model endpoint refuses the first call with ``status`` and ``message`` (a bad key): one clear error,
    stop reason ``api_error``, the provider's ``message`` in it and never ``api_key``; one call asked (the CLI
    does not retry it). ``options`` go to ``make_agent`` (e.g. no retries of the CLI's own). Returns the result."""
    server.add_fault(status, message=message)
    agent = make_agent(**options)
    try:
        agent.setup(session)
        result = agent.run_checkpoint("hi")
        assert result.had_error and result.stop_reason == "api_error"
        assert result.error_message is not None and message in result.error_message, result.error_message
        assert api_key not in result.error_message
        assert len(server.model_requests) == 1
    finally:
        agent.cleanup()
    return result


def check_pinned_version_refused(make_agent: Callable[..., Agent], session: Session, *, installed: str, pinned: str) -> None:
    """A config pinning ``pinned`` while the CLI reports ``installed`` is refused at setup, in the one line that
    names both."""
    import re

    import pytest

    from agentrig.errors import AgentSetupError

    agent = make_agent(version=pinned)
    try:
        with pytest.raises(AgentSetupError, match=re.escape(f"version {installed}, the agent config pins {pinned}")):
            agent.setup(session)
    finally:
        agent.cleanup()
