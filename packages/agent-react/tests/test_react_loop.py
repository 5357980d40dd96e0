"""The loop against the fake OpenAI and Anthropic servers, through the real SDKs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentrig.agents import lifecycle
from agentrig.agents.session import Session
from agentrig.problem import Checkpoint
from agentrig.testing.fake_server import FakeModelServer, FakeToolCall, FakeUsage
from agentrig.trajectory import AgentTextStep, ErrorStep, LLMCall, ToolUseStep, parse_step


def tool_names(request_body: dict, provider: str) -> list[str]:
    tools = request_body.get("tools") or []
    return [t["function"]["name"] if provider == "openai" else t["name"] for t in tools]


def test_multi_step_task_solved(server: FakeModelServer, provider: str, make_agent, session: Session, tmp_path: Path) -> None:
    server.add_tool_call("list_dir", {})
    server.add_tool_call("write_file", {"path": "hello.py", "content": "print('hello world')\n"})
    server.add_tool_call("bash", {"command": "python3 hello.py"}, text="Let me check it runs.")
    server.add_tool_call("submit", {"answer": "hello.py prints hello world"})
    agent = make_agent()
    steps = []
    agent.add_step_listener(steps.append)
    checkpoint = Checkpoint(name="c1", prompt="c1.md", test="python3 hello.py | grep -q 'hello world'")
    result = lifecycle.run_checkpoint(agent, checkpoint, "Write hello.py that prints hello world.")

    assert result.stop_reason == "submitted" and not result.had_error
    assert agent.submission == "hello.py prints hello world"
    assert session.runtime.exec(checkpoint.test or "").exit_code == 0
    assert result.usage.steps == 4 and result.usage.cost > 0
    kinds = [s.kind for s in steps]
    assert kinds[0] == "user" and kinds.count("llm_call") == 4 and kinds.count("tool_use") == 4
    assert all(s.tag == "act" for s in steps if isinstance(s, LLMCall))
    run = [s for s in steps if isinstance(s, ToolUseStep)][2]
    assert run.tool == "bash" and run.exit_code == 0 and "hello world" in (run.result or "")
    assert any(isinstance(s, AgentTextStep) and s.content == "Let me check it runs." for s in steps)
    # The result of every call went back to the model.
    bodies = [r.body for r in server.model_requests]
    assert len(bodies) == 4
    assert "hello world" in json.dumps(bodies[3])
    # Artifacts: messages, trajectory, replay.
    out = tmp_path / "artifacts"
    agent.save_artifacts(out)
    trajectory = [parse_step(line) for line in (out / "trajectory.jsonl").read_text().splitlines()]
    assert [s.kind for s in trajectory] == kinds
    messages = [json.loads(line) for line in (out / "messages.jsonl").read_text().splitlines()]
    assert [m["role"] for m in messages[:3]] == ["system", "user", "assistant"]
    assert len((out / "replay.jsonl").read_text().splitlines()) == 4
    assert "sk-test-secret-123" not in "".join(p.read_text() for p in out.iterdir())


def test_tool_schemas_as_sent(server: FakeModelServer, provider: str, make_agent) -> None:
    server.add_reply("Nothing to do.")
    agent = make_agent(description_overrides={"bash": "Run a command in the sandbox."}, on_no_tool_calls="stop")
    agent.run("Say hi.")
    assert agent.stop_reason == "no_tool_calls"
    body = server.model_requests[0].body
    assert tool_names(body, provider) == ["bash", "read_file", "write_file", "edit_file", "list_dir", "submit"]
    if provider == "openai":
        bash = body["tools"][0]["function"]
        schema = bash["parameters"]
    else:
        bash = body["tools"][0]
        schema = bash["input_schema"]
    assert bash["description"] == "Run a command in the sandbox."
    assert schema["required"] == ["command"] and schema["properties"]["command"]["type"] == "string"
    assert schema["additionalProperties"] is False


def test_parallel_calls_run_concurrently_results_in_call_order(server: FakeModelServer, provider: str, make_agent) -> None:
    # A barrier: each command waits until all four have started, so they finish only if they run
    # at the same time (one after another, the first would wait for its timeout). No clock involved.
    barrier = "touch started{i}; until [ $(ls started* | wc -l) -ge 4 ]; do sleep 0.05; done; echo out{i}"
    calls = [FakeToolCall(name="bash", arguments={"command": barrier.format(i=i)}) for i in range(4)]
    server.add_reply("", tool_calls=calls)
    server.add_tool_call("submit", {})
    agent = make_agent(parallel_tool_calls=True, command_timeout=20)
    agent.run("Run four commands that wait for each other.")
    assert agent.stop_reason == "submitted"
    tool_messages = [m for m in agent.messages if m.role == "tool"][:4]
    assert [m.content.split("\n")[0] for m in tool_messages] == ["out0", "out1", "out2", "out3"]
    sent = server.model_requests[1].body
    if provider == "openai":
        ids = [m["tool_call_id"] for m in sent["messages"] if m["role"] == "tool"]
    else:
        ids = [
            b["tool_use_id"] for m in sent["messages"] if m["role"] == "user"
            for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
    assert len(ids) == 4 and ids == [c.id for c in agent.messages[2].tool_calls]


def test_sequential_when_parallel_is_off(server: FakeModelServer, provider: str, make_agent, session: Session) -> None:
    # each command logs its start and its end: one after another, they never overlap (no clock involved)
    command = "echo start{i} >> order.log; sleep 0.2; echo end{i} >> order.log"
    calls = [FakeToolCall(name="bash", arguments={"command": command.format(i=i)}) for i in range(3)]
    server.add_reply("", tool_calls=calls)
    server.add_tool_call("submit", {})
    agent = make_agent()
    agent.run("Run three commands.")
    order = (session.workspace.path / "order.log").read_text().split()
    assert order == ["start0", "end0", "start1", "end1", "start2", "end2"]


def test_calls_after_submit_are_not_run(server: FakeModelServer, provider: str, make_agent, session: Session) -> None:
    server.add_reply("", tool_calls=[
        FakeToolCall(name="submit", arguments={"answer": "x"}),
        FakeToolCall(name="write_file", arguments={"path": "late.txt", "content": "x"}),
    ])
    agent = make_agent()
    agent.run("Finish.")
    assert agent.stop_reason == "submitted"
    assert not (session.workspace.path / "late.txt").exists()
    assert agent.messages[-1].role == "tool" and "not run: the task was submitted" in agent.messages[-1].content


def test_tool_errors_go_back_to_the_model(server: FakeModelServer, provider: str, make_agent) -> None:
    server.add_tool_call("read_file", {"path": "missing.txt"})
    server.add_tool_call("bash", {"command": "sleep 5", "timeout": 0.2})
    server.add_tool_call("nonexistent_tool", {"x": 1})
    server.add_tool_call("edit_file", {"path": "a.txt"})
    server.add_tool_call("submit", {})
    agent = make_agent()
    result = agent.run_checkpoint("Try things.")
    assert result.stop_reason == "submitted" and not result.had_error
    errors = [m.content for m in agent.messages if m.role == "tool" and m.is_error]
    assert len(errors) == 4
    assert "no such file: missing.txt" in errors[0]
    assert "timed out after 0.2 s" in errors[1]
    assert "unknown tool 'nonexistent_tool'" in errors[2]
    assert "invalid arguments for edit_file" in errors[3]
    if provider == "anthropic":
        sent = server.model_requests[1].body["messages"][-1]["content"][0]
        assert sent["type"] == "tool_result" and sent["is_error"] is True


# Anthropic sends tool input as a parsed JSON object: there is no argument text to repair there.


def test_malformed_native_arguments_are_repaired(fake_openai_server: FakeModelServer, make_openai_agent, session: Session) -> None:
    server = fake_openai_server
    server.add_reply("", tool_calls=[FakeToolCall(name="write_file", raw_arguments="{'path': 'a.txt', 'content': 'x',}")])
    server.add_tool_call("submit", {})
    agent = make_openai_agent()
    agent.run("Write a.txt.")
    assert (session.workspace.path / "a.txt").read_text() == "x"
    resent = server.model_requests[1].body["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(resent) == {"path": "a.txt", "content": "x"}


def test_unreadable_native_arguments_count_as_format_errors(fake_openai_server: FakeModelServer, make_openai_agent) -> None:
    for _ in range(2):
        fake_openai_server.add_reply("", tool_calls=[FakeToolCall(name="bash", raw_arguments="{]]")])
    agent = make_openai_agent(max_format_errors=2)
    agent.run("Go.")
    assert agent.stop_reason == "format_errors"
    tool_results = [m for m in agent.messages if m.role == "tool"]
    assert len(tool_results) == 2 and "not valid JSON" in tool_results[0].content


def test_no_tool_calls_stops_under_the_stop_policy(server: FakeModelServer, provider: str, make_agent) -> None:
    server.add_reply("I am done: the answer is 4.")
    agent = make_agent(on_no_tool_calls="stop")
    result = agent.run_checkpoint("What is 2+2?")
    assert result.stop_reason == "no_tool_calls" and result.usage.steps == 1
    assert len(server.model_requests) == 1


def test_a_reply_without_tool_calls_is_nudged_by_default(server: FakeModelServer, provider: str, make_agent) -> None:
    server.add_reply("I would write hello.py.")
    server.add_reply("It prints hello.")
    server.add_tool_call("write_file", {"path": "hello.py", "content": "print('hello')\n"})
    server.add_reply("Done.")  # the count restarts after a tool call
    server.add_tool_call("submit", {"answer": "hello.py"})
    agent = make_agent(max_nudges=2)
    steps = []
    agent.add_step_listener(steps.append)
    result = agent.run_checkpoint("Write hello.py.")
    assert result.stop_reason == "submitted" and result.usage.steps == 5
    bodies = [json.dumps(r.body) for r in server.model_requests]
    assert len(bodies) == 5
    assert [b.count("Your reply called no tool") for b in bodies] == [0, 1, 2, 2, 3]
    reminders = [s for s in steps if s.kind == "user" and "called no tool" in s.content]
    assert len(reminders) == 3


def test_nudges_run_out_then_the_agent_stops(server: FakeModelServer, provider: str, make_agent) -> None:
    for i in range(3):
        server.add_reply(f"Thinking aloud, round {i}.")
    server.add_tool_call("submit", {})  # never reached
    agent = make_agent(max_nudges=2)
    result = agent.run_checkpoint("Do it.")
    assert result.stop_reason == "no_tool_calls" and not result.had_error
    assert len(server.model_requests) == 3 and result.usage.steps == 3
    assert server.pending == 1


def test_max_steps_stop(server: FakeModelServer, provider: str, make_agent) -> None:
    for i in range(3):
        server.add_tool_call("bash", {"command": f"echo {i}"})
    agent = make_agent(max_steps=3)
    result = agent.run_checkpoint("Loop.")
    assert result.stop_reason == "step_limit" and result.usage.steps == 3
    assert len(server.model_requests) == 3


def test_cost_limit_checked_before_every_call(server: FakeModelServer, provider: str, make_agent) -> None:
    # Each reply costs 1000 * $1/M + 1000 * $2/M = $0.003.
    for i in range(5):
        server.add_tool_call("bash", {"command": f"echo {i}"}, usage=FakeUsage(input=1000, output=1000))
    agent = make_agent(cost_limits={"cost_limit": 0.005})
    result = agent.run_checkpoint("Spend.")
    assert result.stop_reason == "cost_limit" and not result.had_error
    assert len(server.model_requests) == 2
    assert result.usage.cost == pytest.approx(0.006)


def test_wall_clock_limit(server: FakeModelServer, provider: str, make_agent, session: Session) -> None:
    server.add_tool_call("bash", {"command": "sleep 30; echo late > late.txt"})
    agent = make_agent(wall_clock_limit=0.5)
    result = agent.run_checkpoint("Wait.")
    assert result.stop_reason == "wall_clock_limit"
    assert not (session.workspace.path / "late.txt").exists()  # the limit ended the command, not its end
    assert len(server.model_requests) == 1


def test_a_429_then_success(server: FakeModelServer, provider: str, make_agent) -> None:
    server.add_fault(429, retry_after=0)
    server.add_tool_call("submit", {"answer": "ok"})
    agent = make_agent()
    result = agent.run_checkpoint("Go.")
    assert result.stop_reason == "submitted" and not result.had_error
    assert len(server.model_requests) == 2
    assert result.usage.steps == 1


def test_permanent_model_error_is_recorded(server: FakeModelServer, provider: str, make_agent) -> None:
    server.add_fault(401)
    agent = make_agent()
    steps = []
    agent.add_step_listener(steps.append)
    result = agent.run_checkpoint("Go.")
    assert result.had_error and result.stop_reason == "model_error"
    assert "model call failed" in (result.error_message or "")
    assert "sk-test-secret-123" not in (result.error_message or "")
    assert isinstance(steps[-1], ErrorStep) and steps[-1].error_type == "model_error"


def test_loop_detection_warns_then_stops(server: FakeModelServer, provider: str, make_agent) -> None:
    for _ in range(4):
        server.add_tool_call("bash", {"command": "ls"})
    agent = make_agent(max_consecutive_repeats=3)
    steps = []
    agent.add_step_listener(steps.append)
    result = agent.run_checkpoint("Loop.")
    assert result.stop_reason == "repeated_tool_call"
    results = [m.content for m in agent.messages if m.role == "tool"]
    assert len(results) == 4
    assert "[warning:" not in results[1] and "[warning: 3 identical bash calls" in results[2]
    assert "not run" in results[3]
    assert sum(isinstance(s, ToolUseStep) for s in steps) == 3  # the fourth never ran
    assert "[warning: 3 identical" in json.dumps(server.model_requests[3].body)


def test_reset_clears_the_conversation_not_usage(server: FakeModelServer, provider: str, make_agent) -> None:
    server.add_reply("one")
    server.add_reply("two")
    agent = make_agent(on_no_tool_calls="stop")
    agent.run("first task")
    usage = agent.usage.model_copy(deep=True)
    agent.reset()
    assert agent.messages == []
    assert agent.usage == usage
    agent.run("second task")
    assert "first task" not in json.dumps(server.model_requests[1].body)
    assert agent.usage.steps == 2


def test_continuing_context_keeps_the_conversation(server: FakeModelServer, provider: str, make_agent) -> None:
    server.add_reply("one")
    server.add_reply("two")
    agent = make_agent(on_no_tool_calls="stop")
    agent.run("first task")
    agent.run("second task")
    body = json.dumps(server.model_requests[1].body)
    assert "first task" in body and "second task" in body


def test_steps_reach_the_hook(server: FakeModelServer, provider: str, make_agent, plugin_registry) -> None:
    import agentrig
    from agentrig.plugins import register

    seen = []

    class Recorder:
        @agentrig.hookimpl
        def agentrig_step(self, agent, step):
            seen.append(step.kind)

    register(Recorder())
    server.add_tool_call("submit", {})
    make_agent().run("Go.")
    assert seen == ["user", "llm_call", "tool_use"]


def test_setup_errors_are_one_line(make_agent, session: Session) -> None:
    from agentrig import AgentSetupError

    agent = make_agent(setup=False, model_options={"no_such_option": 1})
    with pytest.raises(AgentSetupError, match="not set up"):
        agent.run("x")
    with pytest.raises(AgentSetupError, match=r"^model \S+: unknown model option 'no_such_option'"):
        agent.setup(session)
