"""``--retries N`` under ``--executor ray``: a checkpoint whose try fails with a model error (HTTP 500 after the
client's own retry) is tried again on the worker that runs its problem; the failed try is kept in
``<checkpoint>/tries/1/`` and its cost counted, as with the local executor.

The scenario is the test kit's (:mod:`agentrig.testing.greeter_retries`, the local ``--jobs 2`` test plays it
too): the greeter example (two copies told apart by a tag in checkpoint 2's prompt) with the react agent,
against the fake OpenAI server in this process, here on the session's real local Ray cluster (head + a second
worker node).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.testing.greeter_retries import check_retries_side_by_side

pytestmark = [pytest.mark.ray, pytest.mark.slow, pytest.mark.timeout(900), pytest.mark.xdist_group("ray_cluster")]

REPO = Path(__file__).resolve().parents[3]


def test_a_retry_under_ray_passes_and_keeps_the_failed_try(ray_cluster, agent_site: Path, fake_openai_server, tmp_path: Path) -> None:
    retried = check_retries_side_by_side(
        fake_openai_server, REPO, tmp_path,
        "--retries", "2", "--executor", "ray", "-c", f"executor.address={ray_cluster.address}",
        drop_prefixes=("RAY_",), env={"PYTHONPATH": str(agent_site)}, timeout=600,
    )
    assert retried.run.executor == "ray"
