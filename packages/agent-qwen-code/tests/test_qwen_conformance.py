"""The agentrig conformance suite, run on the qwen_code agent: the real pinned CLI against the fake OpenAI API."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agentrig.agents.interface import Agent
from agentrig.testing.cli_agents import build_cli_agent
from agentrig.testing.conformance import AgentConformance, AgentFactory, ConformancePlan
from agentrig_qwen_code.config import QwenCodeConfig

pytestmark = [pytest.mark.qwen_cli, pytest.mark.usefixtures("node_22_first_on_path")]


class TestQwenCodeConformance(AgentConformance):
    @pytest.fixture
    def build_agent(self, fake_openai_server: Any, qwen_bin: str) -> AgentFactory:
        def build(plan: ConformancePlan) -> Agent:
            # the CLI's own shell tool is `run_shell_command` taking `command`
            fake_openai_server.enqueue(*plan.fake_script(tool_name="run_shell_command", argument="command"))
            config = QwenCodeConfig(
                binary=qwen_bin,
                base_url=fake_openai_server.base_url,
                cost_limits=plan.cost_limits,
                reset_context=plan.reset_context,
            )
            credential = plan.credential("openai", "OPENAI_API_KEY")
            model = plan.model_definition("openai")
            return build_cli_agent(config, model=model, credential=credential, problem_name=plan.problem.name)

        return build

    @pytest.fixture
    def model_requests(self, fake_openai_server: Any) -> Callable[[], list[str]]:
        return lambda: [r.raw_body for r in fake_openai_server.model_requests]
