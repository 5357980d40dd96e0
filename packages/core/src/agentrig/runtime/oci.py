"""The OCI runtime a Docker container runs under (``-c runtime.oci_runtime=runsc``: gVisor).

A container under gVisor's ``runsc`` runs on a kernel of its own in user space: a command that
escapes the container's namespaces meets gVisor's kernel, not the host's. It is defence in depth
for untrusted agent commands, on top of everything the ``docker`` runtime already does. The name
must be an OCI runtime the engine knows (``docker info``: ``Runtimes``); when it is not, the run is
refused before anything starts, in one line saying how to install and register it.
"""

from __future__ import annotations

import re

#: What an OCI runtime's name may hold (as ``dockerd --add-runtime NAME=PATH`` takes it).
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"

#: How gVisor is installed and registered with the Docker engine (Debian's package: ``runsc``). Registered with
#: ``--network=none``: on an engine without a bridge, gVisor's own network stack cannot start ("cannot run with
#: network enabled in root network namespace"), and a task's container has no network anyway.
RUNSC_SETUP = (
    "install gVisor (apt-get install runsc) and register it with dockerd: "
    '{"runtimes": {"runsc": {"path": "/usr/bin/runsc", "runtimeArgs": ["--network=none"]}}} '
    "in /etc/docker/daemon.json, then `kill -HUP $(pidof dockerd)`"
)

def missing_message(name: str, runtimes: list[str]) -> str:
    """The one line saying that the engine, which has ``runtimes``, lacks the OCI runtime ``name``, and how to add it."""
    setup = RUNSC_SETUP if name == "runsc" else f"register it with dockerd (dockerd --add-runtime {name}=PATH)"
    return f"the Docker engine has no OCI runtime '{name}' (it has: {', '.join(runtimes) or 'none'}): {setup}"


def is_default(name: str | None) -> bool:
    """Whether ``name`` is the engine's usual runtime (none given, or runc), whose processes are the host's."""
    return name is None or re.fullmatch(r"runc|io\.containerd\.runc\.v\d+", name) is not None
