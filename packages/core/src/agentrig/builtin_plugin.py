"""The core's own plugin: the ``local`` and ``docker`` runtimes.

Registered through the ``agentrig`` entry-point group exactly as a third
party registers ``podman`` or ``k8s``; nothing here imports a runtime.
"""

from __future__ import annotations

from agentrig.markers import hookimpl
from agentrig.specs import RuntimeSpec


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
