"""The plugin module of agentrig-ray: declares the ``ray`` executor by import path (imports no Ray)."""

from __future__ import annotations

import agentrig


@agentrig.hookimpl
def agentrig_executors() -> list[agentrig.ExecutorSpec]:
    """The ``ray`` executor."""
    return [
        agentrig.ExecutorSpec(
            name="ray",
            description="Each problem a task on a Ray cluster (-c executor.address=HOST:PORT|auto).",
            executor="agentrig_ray.executor:RayExecutor",
        )
    ]
