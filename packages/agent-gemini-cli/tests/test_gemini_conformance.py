"""The agentrig conformance suite, run on the gemini_cli agent: the real pinned CLI against the fake Gemini API."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agentrig.agents.interface import Agent
from agentrig.testing.cli_agents import build_cli_agent
from agentrig.testing.conformance import AgentConformance, AgentFactory, ConformancePlan
from agentrig_gemini_cli.config import GeminiCliConfig

pytestmark = pytest.mark.gemini_cli


class TestGeminiCliConformance(AgentConformance):
    @pytest.fixture
    def build_agent(self, fake_gemini_server: Any, gemini_bin: str) -> AgentFactory:
        def build(plan: ConformancePlan) -> Agent:
            # the CLI's own shell tool is `run_shell_command` taking `command`
            fake_gemini_server.enqueue(*plan.fake_script(tool_name="run_shell_command", argument="command"))
            config = GeminiCliConfig(
                binary=gemini_bin,
                base_url=fake_gemini_server.base_url,
                cost_limits=plan.cost_limits,
                reset_context=plan.reset_context,
                max_attempts=1,  # the permanent-failure plan must not back off
            )
            credential = plan.credential("gemini", "GEMINI_API_KEY")
            model = plan.model_definition("gemini")
            return build_cli_agent(config, model=model, credential=credential, problem_name=plan.problem.name)

        return build

    @pytest.fixture
    def model_requests(self, fake_gemini_server: Any) -> Callable[[], list[str]]:
        return lambda: [r.raw_body for r in fake_gemini_server.model_requests]
