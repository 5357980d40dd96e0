"""Opening the session (workspace, home, runtime) a problem runs in."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def open_session(
    runtime: str,
    image: str | None,
    seed: Path | None,
    name: str,
    base_dir: Path,
    options: dict[str, Any] | None = None,
) -> Any:
    """A started :class:`agentrig.session.Session` seeded from ``seed``, under ``base_dir``.

    ``options`` are the runtime's options (``-c runtime.KEY=VALUE``); ``--image``
    is its ``image`` option (the Docker runtime's).
    """
    from agentrig.session import Session

    merged = dict(options or {})
    if image:
        merged["image"] = image
    return Session.create(runtime=runtime, seed=seed, name=name, base_dir=base_dir, runtime_options=merged or None)
