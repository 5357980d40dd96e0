"""The pytest plugin of agentrig (entry point ``pytest11``): shared fixtures.

Loaded by pytest in any environment where agentrig is installed; it imports
nothing heavy at load time.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from agentrig.registry import PluginRegistry, get_registry, reset_registry

# Fixture modules: one import line each (re-exported names are what pytest collects).
from agentrig.testing.fake_fixtures import (
    fake_anthropic_server as fake_anthropic_server,
    fake_gemini_server as fake_gemini_server,
    fake_openai_server as fake_openai_server,
)

pytest_plugins = [
    "agentrig.testing.docker", "agentrig.testing.browser", "agentrig.testing.llama", "agentrig.testing.sandbox",
    "agentrig.testing.host_server",
]


@pytest.fixture
def plugin_registry() -> Iterator[PluginRegistry]:
    """A fresh process-wide plugin registry for one test, restored afterwards.

    Plugins a test registers with ``agentrig.plugins.register`` vanish with it.
    """
    old = reset_registry(None)
    try:
        yield get_registry()
    finally:
        reset_registry(old)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook reads the groups (``--dist loadgroup``)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Keep each conformance class's checks on one xdist worker, where they share their runs."""
    conformance = sys.modules.get("agentrig.testing.conformance")
    if conformance is None:  # no test module imported the suite: nothing to group
        return
    for item in items:
        cls = getattr(item, "cls", None)
        if cls is not None and issubclass(cls, conformance.AgentConformance) and cls.share_runs:
            item.add_marker(pytest.mark.xdist_group(f"conformance_{cls.__module__}.{cls.__qualname__}"))
