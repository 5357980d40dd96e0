"""Fixtures of the agent-opencode tests: the pinned CLI, a local session, an agent on the fake OpenAI server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from agentrig import APIPricing, ModelDefinition, ProviderCredential
from agentrig.testing.cli_agents import cli_agent_factory, find_cli_binary, local_session

REPO = Path(__file__).resolve().parents[3]
CLI_VERSION = "1.18.33"
DEFAULT_OPENCODE_BIN = REPO / ".cache" / "opencode" / "node_modules" / ".bin" / "opencode"
API_KEY = "sk-test-opencode-secret-0123456789"
#: GPT-5 list prices (USD per million tokens).
GPT5 = APIPricing(input=1.25, output=10.0, cache_read=0.125)
MODEL = "gpt-5"


def find_opencode_bin() -> str:
    """The pinned CLI (``AGENTRIG_TEST_OPENCODE_BIN`` or ``<repo>/.cache/opencode``); fails under CI when missing."""
    return find_cli_binary(
        env_var="AGENTRIG_TEST_OPENCODE_BIN",
        default=DEFAULT_OPENCODE_BIN,
        cli_name="OpenCode CLI",
        install=f"npm install --prefix .cache/opencode opencode-ai@{CLI_VERSION}",
    )


@pytest.fixture
def opencode_bin() -> str:
    """Path of the pinned ``opencode`` executable."""
    return find_opencode_bin()


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Any]:
    """A fresh local session."""
    with local_session(tmp_path) as created:
        yield created


@pytest.fixture
def credential() -> ProviderCredential:
    """The credential the CLI gets; its value must reach no argv, artifact or message."""
    return ProviderCredential(provider="openai", value=SecretStr(API_KEY), source="test", env_var="OPENAI_API_KEY")


@pytest.fixture
def model_def() -> ModelDefinition:
    """A priced OpenAI model."""
    return ModelDefinition(provider="openai", name=MODEL, pricing=GPT5)


@pytest.fixture
def make_agent(
    opencode_bin: str, fake_openai_server: Any, model_def: ModelDefinition, credential: ProviderCredential
) -> Callable[..., Any]:
    """Build an ``opencode`` agent on the fake server: ``make_agent(**config_fields)``."""
    from agentrig_opencode.config import OpenCodeConfig

    return cli_agent_factory(
        OpenCodeConfig, binary=opencode_bin, base_url=fake_openai_server.base_url, model=model_def, credential=credential
    )
