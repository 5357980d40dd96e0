"""``cost_limits.time_limit`` and ``token_limit``, enforced by the runner for agents that never check them:
the agent is stopped with a recorded reason, and the processes it runs are ended."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import agentrig
from agentrig.agents import lifecycle
from agentrig.agents.session import Session
from agentrig.problem import Checkpoint
from agentrig.runtime.interface import Invocation
from agentrig.trajectory import ErrorStep, LLMCall, ToolUseStep

CHECKPOINT = Checkpoint(name="checkpoint_1", prompt="checkpoint_1.md")


class CarelessAgent(agentrig.Agent):
    """Never calls check_limits. ``mode``: ``sleep`` runs ``sleep 60`` commands, ``tokens`` records model calls."""

    @classmethod
    def _from_config(cls, *args: Any, **kwargs: Any) -> CarelessAgent:  # pragma: no cover - built directly
        raise NotImplementedError

    def __init__(self, limits: agentrig.AgentCostLimits, mode: str) -> None:
        super().__init__("careless", "limits", limits, None, False)
        self.mode = mode
        self.commands = 0

    def setup(self, session: Any) -> None:
        self.session = session

    def run(self, task: str) -> None:
        for _ in range(1000):
            if self.mode == "sleep":
                self.commands += 1
                result = self.session.runtime.exec(Invocation("sleep 60 && echo late > late.txt", timeout=120))
                self.emit_step(ToolUseStep(tool="bash", arguments={"command": "sleep 60"}, exit_code=result.exit_code))
            else:
                tokens = agentrig.TokenUsage(input=90, output=10)
                self.usage.step(tokens, cost=0.0)
                self.emit_step(LLMCall(model="fake", usage=tokens))
                time.sleep(0.05)
        self.stop_reason = "finished"

    def reset(self) -> None:
        pass

    def save_artifacts(self, path: Path) -> None:
        pass

    def cleanup(self) -> None:
        pass


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    with Session.create(runtime="local", base_dir=tmp_path) as created:
        yield created


def run(agent: CarelessAgent, session: Session) -> tuple[agentrig.CheckpointInferenceResult, list[Any]]:
    steps: list[Any] = []
    agent.add_step_listener(steps.append)
    lifecycle.setup_agent(agent, session)
    result = lifecycle.run_checkpoint(agent, CHECKPOINT, "work", session.runtime)
    return result, steps


def test_time_limit_ends_the_running_command_and_stops_the_agent(session: Session) -> None:
    agent = CarelessAgent(agentrig.AgentCostLimits(time_limit=1.0), "sleep")
    result, steps = run(agent, session)
    assert not (session.workspace.path / "late.txt").exists(), "the sleep 60 was not ended"
    assert result.stop_reason == "time_limit" and not result.had_error
    assert agent.commands == 1, "the agent went on after the stop"
    assert isinstance(steps[-1], ErrorStep) and steps[-1].error_type == "time_limit"
    assert "time_limit of 1 s reached" in steps[-1].message
    assert session.runtime.exec("true").exit_code == 0, "the runtime works again for the evaluation"


def test_token_limit_stops_an_agent_that_never_checks(session: Session) -> None:
    agent = CarelessAgent(agentrig.AgentCostLimits(token_limit=1000), "tokens")
    result, steps = run(agent, session)
    assert result.stop_reason == "token_limit" and not result.had_error
    assert 1000 <= result.usage.net_tokens.total < 1000 + 100 * 10  # stopped within a few calls of the limit
    assert isinstance(steps[-1], ErrorStep) and steps[-1].error_type == "token_limit"


def test_a_checking_agent_stops_itself_at_the_token_limit() -> None:
    limits = agentrig.AgentCostLimits(token_limit=250)
    usage = agentrig.UsageTracker()
    assert limits.exceeded(usage) is None
    usage.step(agentrig.TokenUsage(input=200, output=60), cost=0.0)
    assert limits.exceeded(usage) == "token_limit"


def test_time_limit_reached_for_a_checking_agent(session: Session) -> None:
    class Checking(CarelessAgent):
        def run(self, task: str) -> None:
            while True:
                self.check_limits()
                time.sleep(0.02)

    agent = Checking(agentrig.AgentCostLimits(time_limit=0.3), "sleep")
    result, _steps = run(agent, session)  # returns only once check_limits stopped the endless loop
    assert result.stop_reason == "time_limit" and not result.had_error


def test_no_limit_no_watchdog(session: Session) -> None:
    class Quick(CarelessAgent):
        def run(self, task: str) -> None:
            self.stop_reason = "submitted"

    agent = Quick(agentrig.AgentCostLimits(), "sleep")
    result, steps = run(agent, session)
    assert result.stop_reason == "submitted" and steps == []


def test_negative_limits_are_rejected() -> None:
    with pytest.raises(ValueError, match="time_limit"):
        agentrig.AgentCostLimits(time_limit=-1)
    with pytest.raises(ValueError, match="token_limit"):
        agentrig.AgentCostLimits(token_limit=-5)
