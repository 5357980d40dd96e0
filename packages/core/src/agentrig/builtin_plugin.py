"""The core's own plugin: the ``local`` and ``docker`` runtimes and the ``local`` executor.

Registered through the ``agentrig`` entry-point group exactly as a third
party registers ``podman`` or ``k8s``; nothing here imports a runtime.
"""

from __future__ import annotations

from agentrig.markers import hookimpl
from agentrig.specs import ExecutorSpec, RuntimeSpec


@hookimpl
def agentrig_runtimes() -> list[RuntimeSpec]:
    """The core's runtimes, by import path."""
    return [
        RuntimeSpec(
            name="local",
            description="Subprocesses on this machine, in the workspace directory.",
            runtime="agentrig.runtime.local:LocalRuntime",
        ),
        RuntimeSpec(
            name="docker",
            description="One container per session, the workspace bind-mounted at /workspace.",
            runtime="agentrig.runtime.docker:DockerRuntime",
        ),
    ]


@hookimpl
def agentrig_executors() -> list[ExecutorSpec]:
    """The core's executor, by import path."""
    return [
        ExecutorSpec(
            name="local",
            description="Problems on this machine: one at a time, or --jobs N worker processes.",
            executor="agentrig.executors.local:LocalExecutor",
        )
    ]
