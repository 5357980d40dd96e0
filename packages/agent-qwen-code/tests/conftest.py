"""Fixtures of the agent-qwen-code tests (the shared CLI-agent kit, :mod:`agentrig.testing.cli_agents`):
the pinned CLI, a local session, an agent on the fake OpenAI API, the agent's Docker image.

The CLI needs Node.js 22 (its package.json: ``engines.node >=22.0.0``); this host's is older. The
test install puts npm's ``node`` package beside the CLI (``.cache/qwen-code/node_modules/.bin/node``,
see .ci/run), and :func:`node_22_first_on_path` puts that directory first on ``PATH`` for the tests
that run the CLI in the local runtime, as a user of such a host puts a newer Node first on theirs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentrig import APIPricing
from agentrig.testing.cli_agents import CliAgentKit, agent_image_fixture, cli_agent_fixtures

KIT = CliAgentKit(
    agent="qwen_code",
    config="agentrig_qwen_code.config:QwenCodeConfig",
    cli_name="Qwen Code CLI",
    npm_package="@qwen-code/qwen-code",
    version="0.24.4",
    executable="qwen",
    cache_dir="qwen-code",
    binary_env="AGENTRIG_TEST_QWEN_BIN",
    provider="openai",
    key_env="OPENAI_API_KEY",
    api_key="sk-test-qwen-secret-0123456789",
    model="gpt-5",
    pricing=APIPricing(input=1.25, output=10.0, cache_read=0.125),  # GPT-5 list prices, USD per million tokens
    server_fixture="fake_openai_server",
)

cli_kit, qwen_bin, session, credential, model_def, make_agent = cli_agent_fixtures(KIT, binary="qwen_bin")
qwen_image = agent_image_fixture(KIT, name="qwen_image")


def node_dir_of(qwen_bin: str) -> str:
    """The ``.bin`` directory the pinned CLI was installed into (npm's ``node`` package puts Node 22 there)."""
    return os.path.dirname(qwen_bin)


@pytest.fixture
def node_22_first_on_path(qwen_bin: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``PATH`` with the Node.js installed beside the CLI first (the local runtime's commands inherit it)."""
    from agentrig.testing.prerequisites import require

    bin_dir = node_dir_of(qwen_bin)
    node = Path(bin_dir) / "node"
    require(None if node.exists() else f"no Node.js 22 at {node}: npm install --prefix .cache/qwen-code node@22",
            "Node.js 22 beside the pinned Qwen Code CLI is missing")
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', os.defpath)}"
    monkeypatch.setenv("PATH", path)
    yield path
