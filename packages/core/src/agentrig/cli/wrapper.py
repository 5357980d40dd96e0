"""``agentrig`` started by ``hatch run`` (the README's commands): stop when hatch is stopped.

hatch runs a command as its child and, on SIGTERM, dies at once without passing the signal on: the
command would run on as an orphan. Under ``hatch run`` (``HATCH_ENV_ACTIVE`` set, the parent process
is hatch itself, which the ``exec`` of hatch.toml's ``agentrig`` script makes so) agentrig asks Linux
for SIGTERM when its parent dies (``PR_SET_PDEATHSIG``), and stops as after any SIGTERM: cleanup,
records written, 143. Anywhere else (a shell, ``nohup``, a service manager) nothing changes.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

#: ``prctl`` option: the signal the calling process gets when its parent dies (linux/prctl.h).
_PR_SET_PDEATHSIG = 1


def started_by_hatch(parent: int) -> bool:
    """Whether process ``parent`` is hatch (``hatch``, or ``python .../hatch``) and agentrig runs in a hatch
    environment (``HATCH_ENV_ACTIVE``)."""
    if not os.environ.get("HATCH_ENV_ACTIVE"):
        return False
    try:
        words = Path(f"/proc/{parent}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return any(Path(os.fsdecode(word)).name == "hatch" for word in words[:3])


def stop_with_hatch() -> bool:
    """Under ``hatch run`` on Linux: SIGTERM to this process when hatch dies (at once, when it already has).
    Returns whether that was arranged."""
    if not sys.platform.startswith("linux"):
        return False
    parent = os.getppid()
    if not started_by_hatch(parent):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    if os.getppid() != parent:  # hatch died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)
    return True
