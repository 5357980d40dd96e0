"""Fixtures of the agent-gemini-cli tests: the pinned CLI, a local session, an agent on the fake Gemini API."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from agentrig import APIPricing, ModelDefinition, ProviderCredential
from agentrig.testing.cli_agents import cli_agent_factory, find_cli_binary, local_session

REPO = Path(__file__).resolve().parents[3]
CLI_VERSION = "0.61.0"
DEFAULT_GEMINI_BIN = REPO / ".cache" / "gemini-cli" / "node_modules" / ".bin" / "gemini"
API_KEY = "AIza-test-gemini-secret-0123456789"
#: Gemini 2.5 Pro list prices for prompts up to 200k tokens (USD per million tokens).
GEMINI_PRO = APIPricing(input=1.25, output=10.0, cache_read=0.125)
MODEL = "gemini-2.5-pro"


def find_gemini_bin() -> str:
    """The pinned CLI (``AGENTRIG_TEST_GEMINI_BIN`` or ``<repo>/.cache/gemini-cli``); fails under CI when missing."""
    return find_cli_binary(
        env_var="AGENTRIG_TEST_GEMINI_BIN",
        default=DEFAULT_GEMINI_BIN,
        cli_name="Gemini CLI",
        install=f"npm install --prefix .cache/gemini-cli @google/gemini-cli@{CLI_VERSION}",
    )


@pytest.fixture(scope="session")
def gemini_image(docker_engine: Any, node_test_image: str) -> str:
    """The agent's image from the package's own template (a no-op when it is already built).

    Tests using it are marked ``xdist_group("gemini_image")``: one worker builds it and runs them all.
    """
    import time

    from agentrig.runtime.images import ensure_agent_image
    from agentrig_gemini_cli.config import GeminiCliConfig

    config = GeminiCliConfig()
    started = time.monotonic()
    tag = ensure_agent_image("gemini_cli", config.version, config.docker_template, node_test_image, client=docker_engine)
    print(f"gemini_cli image {tag}: ready in {time.monotonic() - started:.1f}s")
    return tag


@pytest.fixture
def gemini_bin() -> str:
    """Path of the pinned ``gemini`` executable."""
    return find_gemini_bin()


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Any]:
    """A fresh local session."""
    with local_session(tmp_path) as created:
        yield created


@pytest.fixture
def credential() -> ProviderCredential:
    """The credential the CLI gets; its value must reach no argv, artifact or message."""
    return ProviderCredential(provider="gemini", value=SecretStr(API_KEY), source="test", env_var="GEMINI_API_KEY")


@pytest.fixture
def model_def() -> ModelDefinition:
    """A priced Gemini model."""
    return ModelDefinition(provider="gemini", name=MODEL, pricing=GEMINI_PRO)


@pytest.fixture
def make_agent(
    gemini_bin: str, fake_gemini_server: Any, model_def: ModelDefinition, credential: ProviderCredential
) -> Callable[..., Any]:
    """Build a ``gemini_cli`` agent on the fake server: ``make_agent(**config_fields)``."""
    from agentrig_gemini_cli.config import GeminiCliConfig

    return cli_agent_factory(
        GeminiCliConfig, binary=gemini_bin, base_url=fake_gemini_server.base_url, model=model_def, credential=credential
    )
