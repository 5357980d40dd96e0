"""The agentrig conformance suite, run on the aider agent: the real pinned aider against the fake
chat-completions API. aider's model calls no shell tool, so the script is aider's own (:mod:`scripts`):
per checkpoint, an answer whose edit does not apply (aider reflects the error back), then the edits."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agentrig.agents.interface import Agent
from agentrig.testing.cli_agents import build_cli_agent
from agentrig.testing.conformance import AgentConformance, AgentFactory, ConformancePlan, ScriptedTurn
from agentrig_aider.config import AiderConfig
from agentrig_aider.testing import conformance_script, conformance_turns

pytestmark = pytest.mark.aider_cli


class TestAiderConformance(AgentConformance):
    @pytest.fixture
    def build_agent(self, fake_openai_server: Any, aider_bin: str) -> AgentFactory:
        def build(plan: ConformancePlan) -> Agent:
            fake_openai_server.enqueue(*conformance_script(plan))
            config = AiderConfig(
                binary=aider_bin,
                base_url=fake_openai_server.base_url,
                cost_limits=plan.cost_limits,
                reset_context=plan.reset_context,
                edit_format="diff",
            )
            credential = plan.credential("openai", "OPENAI_API_KEY")
            model = plan.model_definition("openai")
            return build_cli_agent(config, model=model, credential=credential, problem_name=plan.problem.name)

        return build

    @pytest.fixture
    def model_requests(self, fake_openai_server: Any) -> Callable[[], list[str]]:
        return lambda: [r.raw_body for r in fake_openai_server.model_requests]

    def scripted_turns(self, plan: ConformancePlan) -> list[ScriptedTurn]:
        return conformance_turns(plan)
