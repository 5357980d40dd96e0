"""The environment adapter runs commands in the session's runtime exactly as mini's LocalEnvironment would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentrig_miniswe.environment import CommandRecord, RuntimeEnvironment
from agentrig_miniswe.upstream import load_upstream

UP = load_upstream()


def _both(session: Any, tmp_path: Path, **config: Any) -> tuple[Any, Any]:
    """Ours on the session's workspace, upstream's LocalEnvironment on an identical copy."""
    twin = tmp_path / "twin"
    twin.mkdir()
    (twin / "hello.txt").write_text("hello\n")
    return RuntimeEnvironment(session.runtime, **config), UP.LocalEnvironment(cwd=str(twin), **config)


def _comparable(output: dict) -> dict:
    return {k: v for k, v in output.items() if k != "extra"} | {"extra": output.get("extra")}


@pytest.mark.parametrize(
    "command",
    [
        "cat hello.txt",
        "echo out; echo err >&2; echo out2",
        "exit 3",
        "ls /definitely/not/here",
        "if then",  # a shell syntax error reads the same
        "printf 'no newline'",
    ],
)
def test_observations_equal_upstreams(session: Any, tmp_path: Path, command: str) -> None:
    ours, theirs = _both(session, tmp_path)
    assert _comparable(ours.execute({"command": command})) == _comparable(theirs.execute({"command": command}))


def test_a_timeout_reads_as_upstreams(session: Any, tmp_path: Path) -> None:
    ours, theirs = _both(session, tmp_path, timeout=1)
    command = "echo started; sleep 5"
    got, want = ours.execute({"command": command}), theirs.execute({"command": command})
    assert got == want
    assert got["returncode"] == -1 and "timed out after 1 seconds" in got["exception_info"]
    assert got["output"] == "started\n"
    assert got["extra"]["exception_type"] == "TimeoutExpired"


def test_a_per_call_timeout_wins(session: Any) -> None:
    env = RuntimeEnvironment(session.runtime, timeout=30)
    assert env.execute({"command": "sleep 3"}, timeout=1)["returncode"] == -1


def test_submission_raises_upstreams_submitted(session: Any, tmp_path: Path) -> None:
    ours, theirs = _both(session, tmp_path)
    command = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat hello.txt"
    with pytest.raises(UP.Submitted) as got:
        ours.execute({"command": command})
    with pytest.raises(UP.Submitted) as want:
        theirs.execute({"command": command})
    assert got.value.messages == want.value.messages
    assert got.value.messages[0]["extra"] == {"exit_status": "Submitted", "submission": "hello\n"}


def test_failed_submission_does_not_submit(session: Any) -> None:
    env = RuntimeEnvironment(session.runtime)
    output = env.execute({"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT; false"})
    assert output["returncode"] == 1


def test_commands_run_in_the_workspace_with_the_configs_env(session: Any) -> None:
    env = RuntimeEnvironment(session.runtime, env={"PAGER": "cat"})
    output = env.execute({"command": 'pwd; echo "$PAGER"; echo "$HOME"'})
    lines = output["output"].splitlines()
    assert Path(lines[0]).resolve() == session.workspace.path.resolve()
    assert lines[1] == "cat"
    assert Path(lines[2]).resolve() == Path(session.home).resolve()  # the session's private HOME


def test_every_command_is_reported(session: Any) -> None:
    records: list[CommandRecord] = []
    env = RuntimeEnvironment(session.runtime, on_command=records.append, timeout=1)
    env.execute({"command": "echo a", "tool_call_id": "call_1"})
    env.execute({"command": "sleep 3"})
    assert [(r.command, r.tool_call_id, r.output, r.returncode) for r in records[:1]] == [("echo a", "call_1", "a\n", 0)]
    assert records[1].timed_out and records[1].returncode == -1


def test_unknown_settings_are_refused(session: Any) -> None:
    with pytest.raises(ValueError, match="image"):
        RuntimeEnvironment(session.runtime, image="python:3.11")


def test_interpreter_is_configurable(session: Any) -> None:
    env = RuntimeEnvironment(session.runtime, interpreter=["python3", "-c"])
    assert env.execute({"command": "print(6 * 7)"})["output"] == "42\n"


def test_serialize_names_the_runtime(session: Any) -> None:
    info = RuntimeEnvironment(session.runtime).serialize()["info"]["config"]
    assert info["environment_type"] == "agentrig_miniswe.environment.RuntimeEnvironment"
    assert info["runtime"] == session.runtime.name
