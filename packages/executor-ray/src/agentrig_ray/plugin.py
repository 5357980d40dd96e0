"""The plugin module of agentrig-ray: declares the ``ray`` executor by import path (imports no Ray)."""

from __future__ import annotations

import agentrig


@agentrig.hookimpl
def agentrig_executors() -> list[agentrig.ExecutorSpec]:
    """The ``ray`` executor."""
    return [
        agentrig.ExecutorSpec(
            name="ray",
            description="Each problem on a warm worker of a Ray cluster (-c executor.address=HOST:PORT|ray://HOST:PORT|auto).",
            executor="agentrig_ray.executor:RayExecutor",
        )
    ]
