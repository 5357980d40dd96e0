"""Fixtures of the agent-openhands tests: OpenHands' own Python environment (``<repo>/.cache/openhands-venv``,
made by ``.ci/run``), a local session, an agent on the fake OpenAI API."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentrig import APIPricing
from agentrig.agents.interface import Agent
from agentrig.agents.session import Session
from agentrig.credentials import ProviderCredential
from agentrig.model_definition import ModelDefinition
from agentrig.testing.cli_agents import cli_agent_factory, find_cli_binary, local_session
from agentrig_openhands.config import DEFAULT_SDK_VERSION, OpenHandsConfig

API_KEY = "sk-test-openhands-secret-0123456789"
#: gpt-4o list prices, USD per million tokens
PRICING = APIPricing(input=2.5, output=10.0, cache_read=1.25)


@pytest.fixture
def openhands_python(request: pytest.FixtureRequest) -> str:
    """The Python of OpenHands' environment (``AGENTRIG_TEST_OPENHANDS_PYTHON`` or ``<repo>/.cache/openhands-venv``);
    missing: the test skips (fails under CI)."""
    default = Path(request.config.rootpath) / ".cache" / "openhands-venv" / "bin" / "python"
    return find_cli_binary(
        env_var="AGENTRIG_TEST_OPENHANDS_PYTHON", default=default, cli_name="OpenHands SDK environment",
        install=f"uv venv --python 3.12 .cache/openhands-venv && uv pip install --python .cache/openhands-venv "
        f"openhands-sdk=={DEFAULT_SDK_VERSION} openhands-tools=={DEFAULT_SDK_VERSION} (see .ci/run)",
    )


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    with local_session(tmp_path) as created:
        yield created


@pytest.fixture
def credential() -> ProviderCredential:
    from pydantic import SecretStr

    return ProviderCredential(provider="openai", value=SecretStr(API_KEY), source="test", env_var="OPENAI_API_KEY")


@pytest.fixture
def model_def() -> ModelDefinition:
    return ModelDefinition(provider="openai", name="gpt-4o", pricing=PRICING)


@pytest.fixture
def make_agent(
    openhands_python: str, fake_openai_server: Any, model_def: ModelDefinition, credential: ProviderCredential
) -> Callable[..., Agent]:
    """``make_agent(**config_fields)``: an agent running OpenHands against the fake OpenAI server (no retries)."""
    make = cli_agent_factory(OpenHandsConfig, binary=openhands_python, base_url=fake_openai_server.base_url,
                             model=model_def, credential=credential)

    def build(**fields: Any) -> Agent:
        fields.setdefault("num_retries", 0)
        return make(**fields)

    return build
