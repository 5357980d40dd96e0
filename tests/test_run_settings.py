"""Run settings of ``agentrig run``: ``--reset-context/--keep-context``, ``--thinking``, and the
catalog's ``agent_specific`` settings, end to end through the CLI against the fake model servers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "scripted-agent" / "src"))

from agentrig_scripted import testkit

from agentrig.run.records import RunRecord


def two_checkpoints(root: Path) -> Path:
    return testkit.make_problem(
        root,
        "notes",
        [
            ("Write a.txt.", [testkit.write_file("a.txt", "a\n")], "test -f a.txt\n"),
            ("Write b.txt.", [testkit.write_file("b.txt", "b\n")], "test -f b.txt\n"),
        ],
    )


def agentrig(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [testkit.agentrig_bin(), *args], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path
    )


def first_request_of_checkpoint_2(server: Any) -> dict[str, Any]:
    for request in server.model_requests:
        messages = request.body["messages"]
        if messages[-1].get("role") == "user" and "Write b.txt." in str(messages[-1].get("content")):
            return request.body
    raise AssertionError("checkpoint 2 never called the model")


@pytest.mark.parametrize(
    ("flags", "expected_reset", "messages_in_cp2"),
    [
        ([], False, 4),  # default: keep (user, tool call, tool result, answer of checkpoint 1, then the new task)
        (["--keep-context"], False, 4),
        (["--reset-context"], True, 0),
        (["--reset-context", "-c", "reset_context=false"], True, 4),  # the agent config's field overrides the run
        (["-c", "reset_context=true"], False, 0),
    ],
)
def test_reset_or_keep_context_is_a_run_setting(
    tmp_path: Path, fake_openai_server: Any, flags: list[str], expected_reset: bool, messages_in_cp2: int
) -> None:
    fake_openai_server.respond_with(testkit.solver())
    problem = two_checkpoints(tmp_path / "problems")
    out = tmp_path / "run"
    env = testkit.cli_env(tmp_path, fake_openai_server.base_url)
    proc = agentrig(tmp_path, env, "run", str(problem), "--agent", "scripted", "--model", "openai/gpt-4o-mini",
                    "--output", str(out), *flags)
    assert proc.returncode == 0, proc.stderr
    run = RunRecord.model_validate_json((out / "run.json").read_bytes())
    assert run.identity.settings.reset_context is expected_reset
    body = first_request_of_checkpoint_2(fake_openai_server)
    # everything before checkpoint 2's task: checkpoint 1's conversation when kept
    assert len(body["messages"]) - 1 == messages_in_cp2
    if messages_in_cp2:
        assert body["messages"][0]["content"].startswith("Write a.txt.")


def test_resume_refuses_other_run_settings(tmp_path: Path, fake_openai_server: Any) -> None:
    fake_openai_server.respond_with(testkit.solver())
    problem = two_checkpoints(tmp_path / "problems")
    out = tmp_path / "run"
    env = testkit.cli_env(tmp_path, fake_openai_server.base_url)
    base = ["run", str(problem), "--agent", "scripted", "--model", "openai/gpt-4o-mini", "--output", str(out)]
    assert agentrig(tmp_path, env, *base).returncode == 0
    again = agentrig(tmp_path, env, *base, "--reset-context", "--resume")
    assert again.returncode == 2
    assert "run settings (reset_context)" in again.stderr and "Traceback" not in again.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--thinking", "extreme"], "--thinking: invalid choice"),
        (["--thinking", "high", "--thinking-max-tokens", "100"], "--thinking-max-tokens 100: must be at least 1024"),
        (["--thinking", "none", "--thinking-max-tokens", "2048"], "--thinking-max-tokens needs thinking on"),
        (["--reset-context", "--keep-context"], "not allowed with argument"),
    ],
)
def test_bad_run_settings_exit_2(tmp_path: Path, fake_openai_server: Any, args: list[str], message: str) -> None:
    problem = two_checkpoints(tmp_path / "problems")
    env = testkit.cli_env(tmp_path, fake_openai_server.base_url)
    proc = agentrig(tmp_path, env, "run", str(problem), "--agent", "scripted", "--model", "openai/gpt-4o-mini",
                    "--output", str(tmp_path / "run"), *args)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "run").exists()


def one_checkpoint(root: Path) -> Path:
    return testkit.make_problem(root, "answer", [("Say hi.", [], None)])


def test_thinking_reaches_react_as_openai_reasoning_effort(tmp_path: Path, fake_openai_server: Any) -> None:
    fake_openai_server.add_reply("hi")
    out = tmp_path / "run"
    env = testkit.cli_env(tmp_path, fake_openai_server.base_url)
    proc = agentrig(tmp_path, env, "run", str(one_checkpoint(tmp_path / "p")), "--agent", "react", "-c", "on_no_tool_calls=stop",
                    "--model", "openai/gpt-5-mini", "--thinking", "high", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    (request,) = fake_openai_server.model_requests
    assert request.body["reasoning_effort"] == "high"
    run = RunRecord.model_validate_json((out / "run.json").read_bytes())
    assert run.identity.settings.thinking == "high" and run.identity.settings.thinking_max_tokens is None


def test_without_thinking_flag_react_sends_the_models_default(tmp_path: Path, fake_openai_server: Any) -> None:
    fake_openai_server.add_reply("hi")
    env = testkit.cli_env(tmp_path, fake_openai_server.base_url)
    proc = agentrig(tmp_path, env, "run", str(one_checkpoint(tmp_path / "p")), "--agent", "react", "-c", "on_no_tool_calls=stop",
                    "--model", "openai/gpt-5-mini", "--output", str(tmp_path / "run"))
    assert proc.returncode == 0, proc.stderr
    (request,) = fake_openai_server.model_requests
    assert request.body["reasoning_effort"] == "medium"  # the catalog's default_thinking for gpt-5-mini


def test_thinking_budget_reaches_react_as_anthropic_thinking(tmp_path: Path, fake_anthropic_server: Any) -> None:
    fake_anthropic_server.add_reply("hi")
    env = testkit.cli_env(tmp_path, "http://127.0.0.1:9", ANTHROPIC_BASE_URL=fake_anthropic_server.base_url,
                          ANTHROPIC_API_KEY="sk-ant-test")
    proc = agentrig(tmp_path, env, "run", str(one_checkpoint(tmp_path / "p")), "--agent", "react", "-c", "on_no_tool_calls=stop",
                    "--model", "anthropic/claude-sonnet-4-5", "--thinking", "low", "--thinking-max-tokens", "4096",
                    "-c", "max_tokens=8192", "--output", str(tmp_path / "run"))
    assert proc.returncode == 0, proc.stderr
    (request,) = fake_anthropic_server.model_requests
    assert request.body["thinking"] == {"type": "enabled", "budget_tokens": 4096}


def catalog(tmp_path: Path, settings: dict[str, Any]) -> Path:
    models = tmp_path / "models"
    models.mkdir()
    entry = {"provider": "openai", "name": "house-model", "pricing": {"input": 1.0, "output": 2.0},
             "agent_specific": settings}
    (models / "house.yaml").write_text(json.dumps({"models": [entry]}))  # JSON is YAML
    return models


def test_catalog_agent_specific_settings_reach_the_agent_they_name(tmp_path: Path, fake_openai_server: Any) -> None:
    models = catalog(tmp_path, {"react": {"max_tokens": 321, "cost_limits": {"step_limit": 9}},
                                "scripted": {"max_steps": 2}})
    env = testkit.cli_env(tmp_path, fake_openai_server.base_url)
    problem = one_checkpoint(tmp_path / "p")
    fake_openai_server.add_reply("hi")
    out = tmp_path / "run"
    proc = agentrig(tmp_path, env, "run", str(problem), "--agent", "react", "-c", "on_no_tool_calls=stop", "--model", "openai/house-model",
                    "--models-dir", str(models), "-c", "cost_limits.cost_limit=5", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    (request,) = fake_openai_server.model_requests
    assert request.body["max_completion_tokens"] == 321
    config = RunRecord.model_validate_json((out / "run.json").read_bytes()).identity.agent.config
    assert config["max_tokens"] == 321
    assert config["cost_limits"]["step_limit"] == 9 and config["cost_limits"]["cost_limit"] == 5
    assert "max_steps" not in config or config["max_steps"] != 2  # the scripted agent's settings stay its own

    # an explicit -c beats the catalog
    fake_openai_server.add_reply("hi")
    proc = agentrig(tmp_path, env, "run", str(problem), "--agent", "react", "-c", "on_no_tool_calls=stop", "--model", "openai/house-model",
                    "--models-dir", str(models), "-c", "max_tokens=55", "--output", str(tmp_path / "run2"))
    assert proc.returncode == 0, proc.stderr
    assert fake_openai_server.model_requests[-1].body["max_completion_tokens"] == 55


def test_catalog_agent_specific_unknown_field_is_one_line(tmp_path: Path, fake_openai_server: Any) -> None:
    models = catalog(tmp_path, {"react": {"max_tokenz": 321}})
    env = testkit.cli_env(tmp_path, fake_openai_server.base_url)
    proc = agentrig(tmp_path, env, "run", str(one_checkpoint(tmp_path / "p")), "--agent", "react", "-c", "on_no_tool_calls=stop",
                    "--model", "openai/house-model", "--models-dir", str(models), "--output", str(tmp_path / "run"))
    assert proc.returncode == 2
    assert "model catalog entry openai/house-model: agent_specific.react: unknown field 'max_tokenz'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_runner_time_limit_through_agentrig_run(tmp_path: Path, fake_openai_server: Any) -> None:
    from agentrig.run.records import CheckpointResultLine
    from agentrig.trajectory import ErrorStep, parse_step

    fake_openai_server.respond_with(testkit.solver())
    problem = testkit.make_problem(tmp_path / "p", "slow", [("Wait.", [testkit.bash("sleep 60")], "true\n")])
    out = tmp_path / "run"
    env = testkit.cli_env(tmp_path, fake_openai_server.base_url)
    proc = agentrig(tmp_path, env, "run", str(problem), "--agent", "scripted", "--model", "openai/gpt-4o-mini",
                    "-c", "cost_limits.time_limit=4", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    (line,) = [CheckpointResultLine.model_validate_json(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert line.stop_reason == "time_limit" and not line.had_error
    steps = [parse_step(x) for x in (out / "slow/checkpoint_1/trajectory.jsonl").read_text().splitlines()]
    assert isinstance(steps[-1], ErrorStep) and steps[-1].error_type == "time_limit"
    assert "time_limit of 4 s reached" in steps[-1].message  # the -c limit, not the command's own 60 s
    # the sleep, when it started before the limit (a loaded machine may take longer to get there), was ended
    assert all(s.exit_code != 0 for s in steps if s.kind == "tool_use")


def test_thinking_on_a_model_that_does_not_think_warns(tmp_path: Path, fake_openai_server: Any) -> None:
    fake_openai_server.add_reply("hi")
    env = testkit.cli_env(tmp_path, fake_openai_server.base_url)
    proc = agentrig(tmp_path, env, "run", str(one_checkpoint(tmp_path / "p")), "--agent", "react", "-c",
                    "on_no_tool_calls=stop", "--model", "openai/gpt-4.1-mini", "--thinking", "high",
                    "--output", str(tmp_path / "run"))
    assert proc.returncode == 0, proc.stderr
    assert "agentrig: warning: --thinking high: the catalog says openai/gpt-4.1-mini does not think" in proc.stderr
    (request,) = fake_openai_server.model_requests
    assert "reasoning_effort" not in request.body
