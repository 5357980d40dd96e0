"""Opening the session (workspace, home, runtime) a problem runs in."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def open_session(runtime: str, image: str | None, seed: Path | None, name: str, base_dir: Path) -> Any:
    """A started :class:`agentrig.session.Session` seeded from ``seed``, under ``base_dir``.

    ``--image`` is the runtime's ``image`` option (the Docker runtime's).
    """
    from agentrig.session import Session

    options = {"image": image} if image else None
    return Session.create(runtime=runtime, seed=seed, name=name, base_dir=base_dir, runtime_options=options)
