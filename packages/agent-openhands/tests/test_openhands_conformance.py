"""The agentrig conformance suite, run on the openhands agent: the real pinned SDK against the fake OpenAI API."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agentrig.agents.interface import Agent
from agentrig.testing.cli_agents import build_cli_agent
from agentrig.testing.conformance import AgentConformance, AgentFactory, ConformancePlan
from agentrig_openhands.config import OpenHandsConfig

pytestmark = pytest.mark.openhands


class TestOpenHandsConformance(AgentConformance):
    @pytest.fixture
    def build_agent(self, fake_openai_server: Any, openhands_python: str) -> AgentFactory:
        def build(plan: ConformancePlan) -> Agent:
            # OpenHands' own shell tool is `terminal` taking `command`
            fake_openai_server.enqueue(*plan.fake_script(tool_name="terminal", argument="command"))
            config = OpenHandsConfig(
                binary=openhands_python,
                base_url=fake_openai_server.base_url,
                cost_limits=plan.cost_limits,
                reset_context=plan.reset_context,
                num_retries=0,  # the permanent-failure plan must not back off
            )
            credential = plan.credential("openai", "OPENAI_API_KEY")
            model = plan.model_definition("openai")
            return build_cli_agent(config, model=model, credential=credential, problem_name=plan.problem.name)

        return build

    @pytest.fixture
    def model_requests(self, fake_openai_server: Any) -> Callable[[], list[str]]:
        return lambda: [r.raw_body for r in fake_openai_server.model_requests]
