"""``agentrig.run_task`` and ``list_tools``: the documented example executed against the fake OpenAI
server, results, records, bad arguments."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import agentrig
from agentrig.api import TaskError
from agentrig.testing.fake_server import FakeReply, FakeToolCall, FakeUsage

DOC = Path(__file__).resolve().parents[1] / "docs" / "python-api.md"


@pytest.fixture
def openai_env(fake_openai_server: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    return fake_openai_server


def script_hello(server: Any) -> None:
    usage = FakeUsage(input=100, output=20)
    server.enqueue(
        FakeReply(tool_calls=[FakeToolCall(name="write_file",
                                           arguments={"path": "hello.txt", "content": "Hello, agentrig!\n"})],
                  usage=usage),
        FakeReply(text="Written.", tool_calls=[FakeToolCall(name="submit", arguments={"answer": "hello.txt written"})],
                  usage=usage),
    )


def test_the_documented_example_runs(tmp_path: Path, openai_env: Any) -> None:
    (code,) = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    script_hello(openai_env)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "True submitted hello.txt written"
    assert lines[1].startswith("['write_file', 'submit'] 2 $")
    assert any(line.startswith("bash - ") for line in lines[2:])
    assert "submit" in proc.stdout


def test_run_task_result_and_records(tmp_path: Path, openai_env: Any) -> None:
    script_hello(openai_env)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "README.md").write_text("mine\n")
    result = agentrig.run_task("Write hello.txt.", agent="react", model="openai/gpt-4.1-mini", workspace=workspace,
                               output=tmp_path / "out", max_steps=5)
    assert result.success and result.error is None and result.stop_reason == "submitted"
    assert result.answer == "hello.txt written" and result.tools_used == ["write_file", "submit"]
    assert result.steps == 2 and result.usage.net_tokens.input == 200 and result.cost > 0
    assert result.workspace == workspace.resolve() and (workspace / "hello.txt").exists()
    assert (workspace / "README.md").read_text() == "mine\n"
    kinds = [s.kind for s in result.trajectory]
    assert kinds[0] == "user" and "llm_call" in kinds and "tool_use" in kinds
    out = tmp_path / "out"
    assert {p.name for p in out.iterdir()} >= {"prompt.txt", "trajectory.jsonl", "inference_result.json", "agent",
                                                "result.json"}
    assert json.loads((out / "result.json").read_text())["answer"] == "hello.txt written"
    assert len((out / "trajectory.jsonl").read_text().splitlines()) == len(result.trajectory)
    assert b"sk-test-not-a-secret" not in b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())


def test_run_task_in_a_temporary_workspace_and_hooks_fire(openai_env: Any, plugin_registry: Any) -> None:
    seen: list[str] = []

    class Observer:
        @agentrig.hookimpl
        def agentrig_step(self, agent: Any, step: Any) -> None:
            seen.append(step.kind)

        @agentrig.hookimpl
        def agentrig_checkpoint_end(self, agent: Any, checkpoint: Any, result: Any) -> None:
            seen.append("end")

    agentrig.plugins.register(Observer(), name="observer")
    script_hello(openai_env)
    result = agentrig.run_task("Write hello.txt.", model="openai/gpt-4.1-mini")
    assert result.success and result.workspace is None
    assert seen[0] == "user" and seen[-1] == "end" and "tool_use" in seen


def test_failures_are_results_not_exceptions(openai_env: Any) -> None:
    openai_env.add_fault(status=401)
    result = agentrig.run_task("Do it.", model="openai/gpt-4.1-mini")
    assert not result.success and result.stop_reason == "model_error"
    assert result.error and "\n" not in result.error
    limited = agentrig.run_task("Do it.", model="openai/gpt-4.1-mini", cost_limits={"step_limit": 1},
                                on_no_tool_calls="nudge")
    assert not limited.success


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"agent": "nope"}, "agent='nope'"),
        ({"max_stepz": 3}, "unknown field 'max_stepz'"),
        ({"runtime": "moon"}, "runtime='moon'"),
        ({"workspace": "/does/not/exist"}, "not a directory"),
        ({"thinking": "extreme"}, "thinking='extreme'"),
        ({"model": "replay/nonexistent.jsonl"}, "replay file not found"),
        ({"cache": 3}, "cache=3: True, a directory, or an agentrig.llm.cache.ModelCallCache"),
        ({"cache": __file__}, "not a directory"),
    ],
)
def test_bad_arguments_raise_one_line(openai_env: Any, kwargs: dict[str, Any], message: str) -> None:
    kwargs.setdefault("model", "openai/gpt-4.1-mini")
    with pytest.raises(TaskError) as info:
        agentrig.run_task("Do it.", **kwargs)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_run_task_with_a_cache_answers_a_repeated_task_from_it(tmp_path: Path, openai_env: Any) -> None:
    from agentrig.llm.cache import ModelCallCache

    cache = tmp_path / "model-calls"
    results = []
    workspace = tmp_path / "ws"  # the same task in the same place: the same requests
    workspace.mkdir()
    for index, given in enumerate((cache, ModelCallCache(directory=cache, policy="read"))):
        if index == 0:
            script_hello(openai_env)
        (workspace / "hello.txt").unlink(missing_ok=True)
        results.append(agentrig.run_task("Write hello.txt.", agent="react", model="openai/gpt-4.1-mini",
                                         workspace=workspace, max_steps=5, cache=given))
        assert (workspace / "hello.txt").read_text() == "Hello, agentrig!\n"
    first, second = results
    assert len(openai_env.model_requests) == 2  # the second task's calls were all answered from the cache
    assert first.success and second.success and second.answer == first.answer == "hello.txt written"
    calls = [[s for s in r.trajectory if s.kind == "llm_call"] for r in results]
    assert [c.cache_hit for c in calls[0]] == [False, False] and [c.cache_hit for c in calls[1]] == [True, True]
    assert first.cost > 0 and second.cost == 0.0 and second.usage.net_tokens == first.usage.net_tokens
    assert len(list(cache.glob("??/*.json"))) == 2


def test_list_tools_follows_the_config() -> None:
    names = [t.name for t in agentrig.list_tools("react")]
    assert names == ["bash", "read_file", "write_file", "edit_file", "list_dir", "submit"]
    bash = next(t for t in agentrig.list_tools("react", description_overrides={"bash": "Run it."}) if t.name == "bash")
    assert bash.description == "Run it." and bash.parameters["properties"]["command"]
    assert agentrig.list_tools("claude_code") == []


def test_the_documented_step_agent_runs_through_run_task(
    tmp_path: Path, plugin_registry: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = DOC.with_name("agents.md").read_text()
    (code,) = re.findall(r"```python\n(.*?)```", doc, flags=re.DOTALL)
    source = tmp_path / "src"
    source.mkdir()
    (source / "agentrig_doc_echo.py").write_text(code)
    monkeypatch.syspath_prepend(str(source))
    work = tmp_path / "work"
    work.mkdir()

    class Plugin:
        @agentrig.hookimpl
        def agentrig_agents(self) -> list[Any]:
            return [agentrig.AgentSpec(name="echo", description="the docs' example",
                                       config="agentrig_doc_echo:EchoConfig",
                                       agent="agentrig.agents.step:StepAgentAdapter")]

    agentrig.plugins.register(Plugin(), name="doc-echo")
    result = agentrig.run_task("Note this down.", agent="echo", workspace=work)
    assert result.success and result.stop_reason == "submitted" and result.answer == "noted"
    assert (work / "TASK.md").read_text() == "Note this down."
    assert result.tools_used == ["write_file", "stop"] and result.steps == 2
    assert [t.name for t in agentrig.list_tools("echo")] == ["bash", "read_file", "write_file", "stop"]


# A third party's agent written against the agent contract: it does its work and returns, with no
# stop reason of its own (the contract does not ask for one), no error and no limit.
QUIET_AGENT = '''
from pathlib import Path
from typing import Literal

import agentrig


class QuietConfig(agentrig.AgentConfigBase):
    type: Literal["quiet"] = "quiet"


class QuietAgent(agentrig.Agent):
    @classmethod
    def _from_config(cls, config, context):
        agent = cls("quiet", context.problem_name, config.cost_limits, None, context.verbose)
        agent.config = config
        return agent

    def setup(self, session):
        self.workspace = Path(session.workspace.path)

    def run(self, task):
        self.emit_step(agentrig.UserStep(content=task))
        for part in ("Note", "done"):
            self.check_limits()
            with (self.workspace / "DONE.txt").open("a") as done:
                done.write(part + "\\n")
            self.usage.step(agentrig.TokenUsage(input=len(task), output=0), cost=0.0)

    def reset(self):
        pass

    def save_artifacts(self, path):
        pass

    def cleanup(self):
        pass
'''


@pytest.fixture
def quiet_agent(tmp_path: Path, plugin_registry: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    source = tmp_path / "quiet_src"
    source.mkdir()
    (source / "thirdparty_quiet.py").write_text(QUIET_AGENT)
    monkeypatch.syspath_prepend(str(source))

    class Plugin:
        @agentrig.hookimpl
        def agentrig_agents(self) -> list[Any]:
            return [agentrig.AgentSpec(name="quiet", description="returns with no stop reason", needs_model=False,
                                       config="thirdparty_quiet:QuietConfig", agent="thirdparty_quiet:QuietAgent")]

    agentrig.plugins.register(Plugin(), name="thirdparty-quiet")
    return "quiet"


def test_an_agent_that_returns_without_a_stop_reason_finished_on_its_own(tmp_path: Path, quiet_agent: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    result = agentrig.run_task("Note this.", agent=quiet_agent, workspace=work)
    assert result.error is None and result.stop_reason is None
    assert result.success, result
    assert (work / "DONE.txt").read_text() == "Note\ndone\n" and result.steps == 2
    # the same agent stopped by a limit did not finish on its own
    limited = agentrig.run_task("Note this.", agent=quiet_agent, workspace=work, cost_limits={"step_limit": 1})
    assert limited.success is False and limited.stop_reason == "step_limit" and limited.steps == 1
