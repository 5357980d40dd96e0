"""Fixtures of the agent-aider tests: the pinned aider (its own virtual environment under
``<repo>/.cache/aider-venv``), a local session, an agent on the fake chat-completions API, the
agent's Docker image."""

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
from agentrig_aider.config import DEFAULT_AIDER_VERSION, AiderConfig

#: Where the tests (and .ci/run) install the pinned aider: a virtual environment of its own.
VENV = Path(".cache") / "aider-venv"
INSTALL = (
    f"python3 -m venv {VENV} && {VENV}/bin/pip install aider-chat=={DEFAULT_AIDER_VERSION}"
)
API_KEY = "sk-test-aider-secret-0123456789"
MODEL = "gpt-4.1"
#: GPT-4.1 list prices, USD per million tokens.
PRICING = APIPricing(input=2.0, output=8.0, cache_read=0.5)


@pytest.fixture
def aider_bin(request: pytest.FixtureRequest) -> str:
    """The pinned aider (``$AGENTRIG_TEST_AIDER_BIN`` or ``<repo>/.cache/aider-venv/bin/aider``)."""
    default = Path(request.config.rootpath) / VENV / "bin" / "aider"
    return find_cli_binary(env_var="AGENTRIG_TEST_AIDER_BIN", default=default, cli_name="aider", install=INSTALL)


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    """A fresh session in the local runtime."""
    with local_session(tmp_path) as created:
        yield created


@pytest.fixture
def credential() -> ProviderCredential:
    """The credential aider gets; its value must reach no argv, artifact or message."""
    from pydantic import SecretStr

    return ProviderCredential(provider="openai", value=SecretStr(API_KEY), source="test", env_var="OPENAI_API_KEY")


@pytest.fixture
def model_def() -> ModelDefinition:
    """The priced model the agent is built for."""
    return ModelDefinition(provider="openai", name=MODEL, pricing=PRICING)


@pytest.fixture
def make_agent(
    fake_openai_server: Any, aider_bin: str, model_def: ModelDefinition, credential: ProviderCredential
) -> Callable[..., Agent]:
    """``make_agent(**config_fields)``: an aider agent talking to the fake chat-completions server."""
    return cli_agent_factory(
        AiderConfig, binary=aider_bin, base_url=fake_openai_server.base_url, model=model_def, credential=credential
    )


@pytest.fixture(scope="module")
def aider_image(docker_engine: Any, node_test_image: str) -> str:
    """The agent's image from its default template over the Debian + Node test image (built unless present)."""
    from agentrig.runtime.images import ensure_agent_image

    config = AiderConfig()
    assert config.version is not None
    template = config.docker_template
    return ensure_agent_image("aider", config.version, template, node_test_image, client=docker_engine)
