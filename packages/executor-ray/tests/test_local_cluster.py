"""``agentrig_ray.testing.LocalRayCluster`` on a machine too busy for Ray's own start-up waits.

On a loaded machine (load 15-30 on 2 cores, measured) the dashboard agent, a
Python process of each node, takes longer than the 15 s Ray 2.60's raylet
gives it to write its port files, and the raylet aborts: every ``ray start``
failed, and the Ray tests hit their timeout while their cluster started. Here
that slowness is made certain rather than hoped for: the nodes' dashboard
agents sleep 20 s before they start.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentrig_ray.testing import require_ray

# a cluster of its own, started on the Ray tests' worker (not beside their cluster)
pytestmark = [pytest.mark.ray, pytest.mark.slow, pytest.mark.timeout(900), pytest.mark.xdist_group("ray_cluster")]

#: Longer than the raylet's wait for the dashboard agent's port files (15 s, hard-coded in Ray 2.60).
AGENT_DELAY = 20

_SLOW_AGENT = f"""
import os, sys, time
if any(arg.replace(os.sep, "/").endswith("ray/dashboard/agent.py") for arg in sys.orig_argv):
    open(os.path.join(os.path.dirname(__file__), "slow-agent-" + str(os.getpid())), "w").close()
    time.sleep({AGENT_DELAY})
"""

_ON_BOTH_NODES = """
import sys, ray
ray.init(address=sys.argv[1], logging_level="ERROR")
@ray.remote(num_cpus=1)
def node():
    return ray.get_runtime_context().get_node_id()
print(len({*ray.get([node.remote(), node.options(resources={"second_node": 1}).remote()])}), len(ray.nodes()))
"""


def test_the_cluster_starts_when_its_dashboard_agents_are_slower_than_the_raylet_waits(tmp_path: Path) -> None:
    require_ray()
    from agentrig_ray.testing import LocalRayCluster

    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_SLOW_AGENT)  # imported by every Python process of the nodes
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env["PYTHONPATH"] = str(site)
    with LocalRayCluster(env) as cluster:
        ran = subprocess.run([sys.executable, "-c", _ON_BOTH_NODES, cluster.address], capture_output=True, text=True,
                             timeout=300, stdin=subprocess.DEVNULL)
        assert ran.returncode == 0, ran.stderr[-3000:]
        assert ran.stdout.split() == ["2", "2"], ran.stdout  # a task ran on each of the two nodes, both alive
    assert len(list(site.glob("slow-agent-*"))) >= 2, "the nodes' dashboard agents were not slowed down"
