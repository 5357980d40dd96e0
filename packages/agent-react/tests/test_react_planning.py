"""Planning mode: plan -> execute -> replan through scripted plans, on both fake providers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentrig.agents.session import Session
from agentrig.testing.fake_server import FakeModelServer
from agentrig.trajectory import ErrorStep, LLMCall, PlanStep, ToolUseStep
from agentrig_react.planning import PlanError, PlanRecord, parse_plan


def _states(agent) -> list[tuple[str, int, int | None]]:
    return [(s.state, s.iteration, s.step) for s in agent._trajectory if isinstance(s, PlanStep)]


def test_a_failing_step_is_recovered_by_a_replan(
    server: FakeModelServer, provider: str, make_agent, session: Session, tmp_path: Path
) -> None:
    server.add_reply(
        "Here is my plan:\n```json\n"
        '[{"tool": "write_file", "arguments": {"path": "hello.txt", "content": "hi\\n"}, "description": "create it"},\n'
        ' {"tool": "bash", "arguments": {"command": "grep -q bye hello.txt"}, "description": "check it"},\n'
        ' {"tool": "submit", "arguments": {"answer": "never reached"}}]\n```'
    )
    # the replan needs syntax fixes: single quotes, a trailing comma
    server.add_reply(
        "[{'tool': 'bash', 'arguments': {'command': 'grep -c hi hello.txt'}},"
        " {'tool': 'submit', 'arguments': {'answer': 'hello.txt says hi'}},]"
    )
    agent = make_agent(planning=True)
    result = agent.run_checkpoint("Create hello.txt saying hi and check it.")

    assert result.stop_reason == "submitted" and not result.had_error
    assert agent.submission == "hello.txt says hi"
    assert (session.workspace.path / "hello.txt").read_text() == "hi\n"
    assert _states(agent) == [
        ("PLANNING", 1, None),
        ("EXECUTING_PLAN", 1, None),
        ("ERROR_RECOVERY", 1, 2),
        ("PLANNING", 2, None),
        ("EXECUTING_PLAN", 2, None),
        ("COMPLETION", 2, None),
    ]
    plans = [s for s in agent._trajectory if isinstance(s, PlanStep) and s.plan]
    assert [len(p.plan) for p in plans] == [3, 2]
    tools = [s for s in agent._trajectory if isinstance(s, ToolUseStep)]
    assert [(s.tool, s.metadata["plan_iteration"], s.metadata["plan_step"], s.metadata["plan_state"]) for s in tools] == [
        ("write_file", 1, 1, "done"),
        ("bash", 1, 2, "failed"),
        ("bash", 2, 1, "done"),
        ("submit", 2, 2, "done"),
    ]
    assert tools[1].exit_code == 1
    assert [s.tag for s in agent._trajectory if isinstance(s, LLMCall)] == ["plan", "replan"]
    assert result.usage.steps == 2
    # the plan is asked for without tool schemas; the replan request reports what ran and what failed
    first, second = server.model_requests
    assert not first.tools and "Before acting, make a plan" in json.dumps(first.body)
    replan_request = json.dumps(second.body)
    assert "Step 2 of the plan failed" in replan_request and "grep -q bye hello.txt" in replan_request
    assert "exit 1" in replan_request
    # the plan artifact
    agent.save_artifacts(tmp_path / "artifacts")
    record = PlanRecord.model_validate_json((tmp_path / "artifacts/plan.json").read_text())
    assert record.task == "Create hello.txt saying hi and check it."
    assert [len(i.steps) for i in record.iterations] == [3, 2]
    assert [o.status for o in record.iterations[0].outcomes] == ["done", "failed"]
    assert [o.status for o in record.iterations[1].outcomes] == ["done", "done"]
    assert record.states[-1] == "COMPLETION" and record.stop_reason == "submitted"
    assert record.answer == "hello.txt says hi"


def test_a_simple_task_goes_straight_to_direct_execution(server: FakeModelServer, provider: str, make_agent) -> None:
    server.add_reply("This is simple: []")
    server.add_tool_call("submit", {"answer": "4"})
    agent = make_agent(planning=True)
    result = agent.run_checkpoint("What is 2 + 2?")
    assert result.stop_reason == "submitted" and agent.submission == "4"
    assert _states(agent) == [("PLANNING", 1, None), ("DIRECT_EXECUTION", 1, None)]
    assert [s.tag for s in agent._trajectory if isinstance(s, LLMCall)] == ["plan", "act"]
    assert server.model_requests[1].tools  # the ReAct loop offers the tools natively again


def test_completion_writes_the_answer(server: FakeModelServer, provider: str, make_agent) -> None:
    server.add_reply('[{"tool": "bash", "arguments": {"command": "echo 42"}}]')
    server.add_reply("The command printed 42.")
    agent = make_agent(planning=True)
    result = agent.run_checkpoint("What does echo 42 print?")
    assert result.stop_reason == "completed" and not result.had_error
    assert agent.submission == "The command printed 42."
    assert _states(agent)[-1] == ("COMPLETION", 1, None)
    assert [s.tag for s in agent._trajectory if isinstance(s, LLMCall)] == ["plan", "answer"]
    assert "42" in json.dumps(server.model_requests[1].body)


def test_replans_stop_at_max_plan_iterations(server: FakeModelServer, provider: str, make_agent) -> None:
    server.add_reply('[{"tool": "bash", "arguments": {"command": "exit 3"}}]')
    server.add_reply('[{"tool": "bash", "arguments": {"command": "exit 4"}}]')
    agent = make_agent(planning=True, max_plan_iterations=2)
    result = agent.run_checkpoint("Do the impossible.")
    assert result.stop_reason == "max_plan_iterations" and not result.had_error
    assert [s for s, _, _ in _states(agent)] == [
        "PLANNING", "EXECUTING_PLAN", "ERROR_RECOVERY", "PLANNING", "EXECUTING_PLAN", "ERROR_RECOVERY"
    ]
    error = [s for s in agent._trajectory if isinstance(s, ErrorStep)][-1]
    assert error.error_type == "max_plan_iterations" and "step 1 (bash) of plan 2 failed" in error.message
    assert len(server.model_requests) == 2


def test_max_plan_iterations_zero_replans_until_the_run_limit(
    server: FakeModelServer, provider: str, make_agent
) -> None:
    # GAIA's 0: no count of its own; more plans than the default 3, until the step limit ends the run
    for code in range(5, 12):
        server.add_reply(f'[{{"tool": "bash", "arguments": {{"command": "exit {code}"}}}}]')
    agent = make_agent(planning=True, max_plan_iterations=0, cost_limits={"step_limit": 5})
    result = agent.run_checkpoint("Do the impossible.")
    assert result.stop_reason == "step_limit" and not result.had_error
    assert [s for s, _, _ in _states(agent)].count("EXECUTING_PLAN") == 5
    assert len(server.model_requests) == 5
    assert not any(isinstance(s, ErrorStep) and s.error_type == "max_plan_iterations" for s in agent._trajectory)


def test_max_plan_iterations_must_not_be_negative() -> None:
    from pydantic import ValidationError

    from agentrig_react.config import ReactConfig

    assert ReactConfig(max_plan_iterations=0).max_plan_iterations == 0
    with pytest.raises(ValidationError, match="max_plan_iterations"):
        ReactConfig(max_plan_iterations=-1)


def test_an_unreadable_plan_is_a_format_error(server: FakeModelServer, provider: str, make_agent) -> None:
    server.add_reply("I will first look around, then decide.")
    server.add_reply('[{"tool": "grep", "arguments": {}}]')
    server.add_reply('[{"tool": "submit", "arguments": {"answer": "ok"}}]')
    agent = make_agent(planning=True)
    result = agent.run_checkpoint("Do it.")
    assert result.stop_reason == "submitted"
    errors = [s.message for s in agent._trajectory if isinstance(s, ErrorStep)]
    assert errors[0].startswith("format error: no JSON array in the reply (tried as-is, fenced block, bracket matching")
    assert errors[1].startswith("format error: plan step 1: unknown tool 'grep' (tools: ")
    assert "unknown tool 'grep'" in json.dumps(server.model_requests[2].body)


def test_parse_plan_shapes_and_errors() -> None:
    tools = {"bash", "submit"}
    assert parse_plan('{"steps": [{"name": "bash", "args": {"command": "ls"}}]}', tools)[0].arguments == {"command": "ls"}
    assert parse_plan("[]", tools) == []
    with pytest.raises(PlanError, match="plan step 1 names no tool"):
        parse_plan('[{"arguments": {}}]', tools)
    with pytest.raises(PlanError, match="plan step 2: arguments of bash must be a JSON object"):
        parse_plan('[{"tool": "submit"}, {"tool": "bash", "arguments": "ls"}]', tools)
    with pytest.raises(PlanError, match="plan step 1 is a str"):
        parse_plan('["bash ls"]', tools)


def test_verbose_progress_shows_the_plan_states(fake_openai_server: FakeModelServer, tmp_path: Path) -> None:
    """Through `agentrig run --verbose`: the planning states appear in the progress lines."""
    problem = tmp_path / "plan-demo"
    problem.mkdir()
    (problem / "problem.yaml").write_text(
        "name: plan-demo\ncheckpoints:\n  - name: only\n    prompt: task.md\n    test: test -f done.txt\n"
    )
    (problem / "task.md").write_text("Create done.txt.\n")
    server = fake_openai_server
    server.add_reply('[{"tool": "bash", "arguments": {"command": "cat missing.txt"}}]')
    server.add_reply(
        '[{"tool": "write_file", "arguments": {"path": "done.txt", "content": "done"}},'
        ' {"tool": "submit", "arguments": {"answer": "created"}}]'
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "AGENTRIG_"))}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test-secret-123")
    agentrig = str(Path(sys.executable).with_name("agentrig"))
    out = tmp_path / "run"
    proc = subprocess.run(
        [agentrig, "run", str(problem), "--agent", "react", "--model", "openai/gpt-4.1-mini", "--output", str(out),
         "--verbose", "-c", "planning=true", "-c", "model_options.retry.initial_delay=0"],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr
    for line in ("plan PLANNING", "plan EXECUTING_PLAN", "plan ERROR_RECOVERY step 1 bash", "plan COMPLETION"):
        assert "plan-demo/only: step " in err and line in err, (line, err)
    assert err.index("plan ERROR_RECOVERY") < err.index("plan COMPLETION")
    assert "1 checkpoint: 1 passed" in proc.stdout, proc.stdout
    plan = PlanRecord.model_validate_json((out / "plan-demo/only/agent/plan.json").read_text())
    assert len(plan.iterations) == 2 and plan.stop_reason == "submitted"
    trajectory = [json.loads(line) for line in (out / "plan-demo/only/trajectory.jsonl").read_text().splitlines()]
    assert [s["state"] for s in trajectory if s["kind"] == "plan"] == [
        "PLANNING", "EXECUTING_PLAN", "ERROR_RECOVERY", "PLANNING", "EXECUTING_PLAN", "COMPLETION"
    ]
    # the states read back: `agentrig show` and both exports (the report page draws plan steps: test_view_trajectory_js.py)
    show = subprocess.run([agentrig, "show", str(out), "plan-demo/only"], env=env, capture_output=True, text=True, timeout=60)
    assert show.returncode == 0, show.stderr
    assert "plan ERROR_RECOVERY (plan 1 step 1 bash)" in show.stdout and "1. write_file" in show.stdout
    flat = subprocess.run([agentrig, "export", str(out), "--format", "jsonl", "-o", "-"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert flat.returncode == 0, flat.stderr
    plan_rows = [json.loads(line) for line in flat.stdout.splitlines() if json.loads(line)["kind"] == "plan"]
    assert plan_rows[2]["text"].startswith("ERROR_RECOVERY") and plan_rows[2]["tool"] == "bash"
    atif = subprocess.run([agentrig, "export", str(out), "--format", "atif"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert atif.returncode == 0, atif.stderr
    atif_steps = json.loads((out / "exports/atif/plan-demo/only.json").read_text())["steps"]
    states = [s["extra"]["state"] for s in atif_steps if (s.get("extra") or {}).get("agentrig_kind") == "plan"]
    assert states == ["PLANNING", "EXECUTING_PLAN", "ERROR_RECOVERY", "PLANNING", "EXECUTING_PLAN", "COMPLETION"]
