"""Symbolic links the sandboxed agent plants in its workspace are never followed by agentrig itself.

Under ``-c runtime.sandbox=bwrap`` the agent cannot write outside its workspace, but it can leave a
link there (``ln -s /tmp/victim tests``). Every copy and write agentrig then makes into that
directory (the problem's tests and generated files put into the workspace copy at evaluation, a
subagent's directory and its ``shared/`` handoff, an upload into the workspace) must land in the
directory, never where the link points. Real runs: the scripted agent or the react agent driven by
the fake model server, real bubblewrap (skips without it, fails under ``CI``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "fixtures" / "scripted-agent" / "src"))

from agentrig_scripted import testkit

from agentrig.agents.session import Session
from agentrig.boundary import BoundaryError
from agentrig.evaluation.engine import TestCommand, run_test_command
from agentrig.run.records import CheckpointResultLine
from agentrig.testing.fake_server import FakeModelServer, FakeReply, FakeToolCall, RecordedRequest
from agentrig.testing.sandbox import require_bwrap


def _run(
    problem: Path, out: Path, env: dict[str, str], *options: str, agent: str = "scripted", sandbox: bool = True
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [testkit.agentrig_bin(), "run", str(problem), "--agent", agent, "--model", "openai/gpt-4o-mini",
         "--output", str(out), "--quiet", *(["-c", "runtime.sandbox=bwrap"] if sandbox else []), *options],
        env=env, capture_output=True, text=True, timeout=180, cwd=out.parent,
    )


def _results(out: Path) -> list[CheckpointResultLine]:
    return [CheckpointResultLine.model_validate_json(line) for line in (out / "results.jsonl").read_text().splitlines()]


@pytest.mark.bwrap
def test_a_tests_link_planted_in_the_workspace_does_not_carry_the_tests_outside(
    tmp_path: Path, fake_openai_server: FakeModelServer
) -> None:
    """The agent links ``tests`` to a host directory it cannot write: the evaluation copied the
    problem's tests through that link and overwrote the host's ``check_1.sh``."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "check_1.sh").write_text("the host's own file\n")
    fake_openai_server.respond_with(testkit.solver())
    plant = testkit.bash(f"ln -s {victim} tests && ln -s {victim}/generated.ini pytest.ini && ls -l")
    # the tests ran where the problem put them: in the copy, as a directory of its own
    check = "test ! -L tests && test -d tests && grep -q ok tests/data.txt\n"
    problem = testkit.make_problem(tmp_path / "p", "links", [("Plant links.", [plant], check)])
    (problem / "tests" / "data.txt").write_text("ok\n")
    out = tmp_path / "run"
    done = _run(problem, out, testkit.cli_env(tmp_path, fake_openai_server.base_url))
    assert done.returncode == 0, done.stderr
    assert (victim / "check_1.sh").read_text() == "the host's own file\n"
    assert sorted(p.name for p in victim.iterdir()) == ["check_1.sh"]
    (line,) = _results(out)
    assert line.passed is True


@pytest.mark.docker
def test_a_tests_link_planted_in_a_containers_workspace_neither_redirects_nor_breaks_the_tests(
    tmp_path: Path, fake_openai_server: FakeModelServer, docker_test_image: str
) -> None:
    """In a container the copy is made and filled inside it: the agent's ``tests -> /nowhere`` made the
    upload of the tests fail (an infrastructure failure, no verdict on its work)."""
    fake_openai_server.respond_with(testkit.solver())
    plant = testkit.bash("ln -s /nowhere tests && ln -s /nowhere/pytest.ini pytest.ini")
    problem = testkit.make_problem(tmp_path / "p", "links", [("Plant links.", [plant], "test ! -L tests && test -d tests\n")])
    out = tmp_path / "run"
    done = _run(problem, out, testkit.cli_env(tmp_path, fake_openai_server.base_url), "--runtime", "docker",
                "--image", docker_test_image, sandbox=False)
    assert done.returncode == 0, done.stderr + done.stdout
    (line,) = _results(out)
    assert line.passed is True and not line.infrastructure_failure


@pytest.mark.bwrap
def test_a_generated_file_is_not_written_through_a_planted_link(tmp_path: Path) -> None:
    """A format's generated file (SlopCodeBench's ``pytest.ini``) was written through a link the agent
    left on its way (``conf -> /outside``) and through a link in its place."""
    require_bwrap()
    outside = tmp_path / "outside"
    outside.mkdir()
    with Session.create(base_dir=tmp_path / "sessions", runtime_options={"sandbox": "bwrap"}) as session:
        planted = session.runtime.exec(f"ln -s {outside} conf && ln -s {outside}/target.ini pytest.ini")
        assert planted.exit_code == 0, planted.stderr
        test = TestCommand(
            command="test ! -L conf && test ! -L pytest.ini && cat conf/pytest.ini pytest.ini",
            generated={"conf/pytest.ini": "[pytest]\n", "pytest.ini": "[pytest]\n"},
        )
        record = run_test_command(session.runtime, test, report_dir=tmp_path / "report")
    assert list(outside.iterdir()) == []
    assert record.passed is True and record.error is None, record


@pytest.mark.bwrap
def test_an_upload_into_the_workspace_refuses_a_planted_link(tmp_path: Path) -> None:
    """A format's upload into the live workspace (a reference solution, a step's workdir, a static
    asset) is refused at a link the agent left, in one line naming it, and writes nothing outside."""
    require_bwrap()
    outside = tmp_path / "outside"
    outside.mkdir()
    source = tmp_path / "solution"
    (source / "data").mkdir(parents=True)
    (source / "data" / "x.txt").write_text("x\n")
    with Session.create(base_dir=tmp_path / "sessions", runtime_options={"sandbox": "bwrap"}) as session:
        assert session.runtime.exec(f"ln -s {outside} data").exit_code == 0
        with pytest.raises(BoundaryError) as refused:
            session.runtime.upload(source, session.runtime.workdir)
        session.runtime.upload(source / "data" / "x.txt", "elsewhere/x.txt")
        assert (session.workspace.path / "elsewhere" / "x.txt").read_text() == "x\n"
    assert "'data' is a symbolic link; not followed" in str(refused.value) and "\n" not in str(refused.value)
    assert list(outside.iterdir()) == []


def _react_agent(path: Path, server: FakeModelServer) -> Path:
    config = {
        "type": "react",
        "base_url": server.base_url,
        "subagents": [{
            "name": "helper",
            "description": "Hand a task to a helper.",
            "agent": {"type": "react", "base_url": server.base_url},
        }],
    }
    path.write_text(json.dumps(config))  # JSON is YAML
    return path


def _parent_then_helper(parent: list[dict[str, Any]], helper_task: str) -> Any:
    """The parent plays ``parent`` (tool calls, in order), then submits; a subagent (its task starts with
    ``helper_task``) submits at once."""

    def handle(request: RecordedRequest) -> FakeReply:
        messages = request.body.get("messages", [])
        users = [m for m in messages if m.get("role") == "user"]
        first = users[0]["content"] if users else ""
        first = first if isinstance(first, str) else " ".join(b.get("text", "") for b in first)
        if first.startswith(helper_task):
            return FakeReply(tool_calls=[FakeToolCall(name="submit", arguments={"answer": "seen"})])
        turns = sum(1 for m in messages if m.get("role") == "assistant")
        if turns < len(parent):
            call = parent[turns]
            return FakeReply(tool_calls=[FakeToolCall(name=call["name"], arguments=call["arguments"])])
        return FakeReply(tool_calls=[FakeToolCall(name="submit", arguments={"answer": "done"})])

    return handle


def _subagent_run(tmp_path: Path, server: FakeModelServer, plant: str) -> tuple[Path, str]:
    """The react agent under bwrap: it runs ``plant``, then delegates with ``a.txt`` shared; the run
    directory and its trajectory's text."""
    require_bwrap()
    server.respond_with(_parent_then_helper([
        {"name": "bash", "arguments": {"command": f"echo secret-of-the-parent > a.txt; {plant}"}},
        {"name": "helper", "arguments": {"task": "Read shared/a.txt.", "paths": ["a.txt"]}},
    ], "Read shared/a.txt."))
    problem = testkit.make_problem(tmp_path / "p", "delegate", [("Delegate.", [], None)])
    out = tmp_path / "run"
    done = _run(problem, out, testkit.cli_env(tmp_path, server.base_url), agent=str(_react_agent(tmp_path / "react.yaml", server)))
    assert done.returncode in (0, 1), done.stderr
    trajectory = (out / "delegate" / "checkpoint_1" / "trajectory.jsonl").read_text()
    return out, trajectory


@pytest.mark.bwrap
def test_a_shared_link_planted_in_the_subagents_directory_is_not_followed(
    tmp_path: Path, fake_openai_server: FakeModelServer
) -> None:
    """``subagents/helper/001/shared -> /outside`` made agentrig copy the shared files to ``/outside/a.txt``."""
    outside = tmp_path / "outside"
    outside.mkdir()
    _, trajectory = _subagent_run(
        tmp_path, fake_openai_server, f"mkdir -p subagents/helper/001 && ln -s {outside} subagents/helper/001/shared"
    )
    assert list(outside.iterdir()) == []
    assert "cannot share files" in trajectory and "'shared' is a symbolic link; not followed" in trajectory

