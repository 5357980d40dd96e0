"""Fixtures of the Ray executor's tests: one real local Ray cluster (head + worker node) for the session."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests" / "fixtures" / "scripted-agent" / "src"))

from agentrig_scripted import testkit  # noqa: E402


@pytest.fixture(scope="session")
def agent_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the scripted test agent is 'installed' for the dispatcher and the Ray nodes alike."""
    return testkit.agent_site(tmp_path_factory.mktemp("site"))


@pytest.fixture(scope="session")
def ray_cluster(agent_site: Path) -> Iterator[object]:
    """A real Ray cluster on 127.0.0.1: a head node and a second worker node, 1 CPU each, torn down afterwards.

    The nodes' environment holds no model endpoint, key or agentrig setting:
    what the workers get of those comes from the dispatcher. Where mount
    namespaces are available the worker node does not see ``cluster.hidden``
    (for runs whose artifacts are shipped).
    """
    from agentrig_ray.testing import LocalRayCluster, require_ray

    require_ray()

    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "AGENTRIG_", "RAY_"))}
    env["PYTHONPATH"] = str(agent_site)
    with LocalRayCluster(env, hide_from_worker=can_hide()) as cluster:
        yield cluster


def can_hide() -> bool:
    """Whether a node can get a mount namespace of its own here (``unshare --mount``: root or user namespaces)."""
    import subprocess

    try:
        return subprocess.run(["unshare", "--mount", "true"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
