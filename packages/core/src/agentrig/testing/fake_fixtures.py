"""pytest fixtures serving the fake model servers (one per test, stopped after it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentrig.testing.fake_anthropic import FakeAnthropicServer
from agentrig.testing.fake_gemini import FakeGeminiServer
from agentrig.testing.fake_openai import FakeOpenAIServer


@pytest.fixture
def fake_openai_server() -> Iterator[FakeOpenAIServer]:
    """A started :class:`FakeOpenAIServer`; point clients at ``.base_url``.

    Script it with ``add_reply``/``add_tool_call``/``add_fault``/``enqueue`` or
    ``respond_with(fn)``; read ``.requests`` afterwards.
    """
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def fake_anthropic_server() -> Iterator[FakeAnthropicServer]:
    """A started :class:`FakeAnthropicServer` (``ANTHROPIC_BASE_URL=server.base_url``)."""
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture
def fake_gemini_server() -> Iterator[FakeGeminiServer]:
    """A started :class:`FakeGeminiServer` (``GOOGLE_GEMINI_BASE_URL=server.base_url``)."""
    with FakeGeminiServer() as server:
        yield server
