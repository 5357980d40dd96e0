"""Opening the session (workspace, home, runtime) a problem runs in."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentrig.boundary import guard, remove

if TYPE_CHECKING:
    from agentrig.problem import Problem


def open_session(
    runtime: str,
    image: str | None,
    seed: Path | None,
    name: str,
    base_dir: Path,
    options: dict[str, Any] | None = None,
    problem: Problem | None = None,
    env: dict[str, str] | None = None,
    rebuild: str | None = None,
) -> Any:
    """A started :class:`agentrig.agents.session.Session` seeded from ``seed``, under ``base_dir``.

    ``options`` are the runtime's options (``-c runtime.KEY=VALUE``); ``--image``
    is its ``image`` option (the Docker runtime's). With ``problem``, its format
    may first prepare what the problem runs in
    (:meth:`~agentrig.formats.interface.ProblemFormat.prepare_environment`: a
    Harbor task's image, working directory and starting files), which then
    replaces the image, the options and the seed. ``session.seed`` is the
    directory the workspace was seeded from in the end (kept while the session
    lives: the first checkpoint's diff compares with it). ``env`` is added to every command's environment.
    ``rebuild`` (``agentrig run --rebuild``) reaches the format's ``prepare_environment``; its
    ``notices`` (what the problem cannot have here) become ``session.notices``; its ``snapshot_ignore``
    is left out of the workspace's snapshots.
    """
    from agentrig.agents.session import Session
    from agentrig.workspace import DEFAULT_IGNORES

    merged = dict(options or {})
    if image:
        merged["image"] = image
    scratch: Path | None = None
    notices: list[str] = []
    ignore: tuple[str, ...] = DEFAULT_IGNORES
    try:
        if problem is not None:
            from agentrig.formats.resolve import get_format

            base_dir.mkdir(parents=True, exist_ok=True)
            scratch = Path(tempfile.mkdtemp(prefix=f"agentrig-{name}-environment-", dir=base_dir))
            problem_format = get_format(problem.format)
            extra = {"rebuild": rebuild} if rebuild is not None and _takes_rebuild(problem_format) else {}
            prepared = problem_format.prepare_environment(problem, runtime, merged, scratch, **extra)
            if prepared is not None:
                notices = list(prepared.notices)
                merged = dict(prepared.runtime_options)
                if prepared.image:
                    merged["image"] = prepared.image
                if prepared.seed is not None:
                    seed = prepared.seed
                ignore += _literal_paths(prepared.snapshot_ignore)
        session = Session.create(
            runtime=runtime, seed=seed, name=name, base_dir=base_dir, env=env, runtime_options=merged or None,
            ignore=ignore,
        )
    except BaseException:
        if scratch is not None:
            try:
                remove(base_dir, scratch)  # strictly inside base_dir, or refused
            except OSError:
                pass
        raise
    if scratch is not None and session.directory is not None:
        # the prepared files live (and die) with the session
        kept = guard(base_dir, session.directory / "environment", "move")
        os.replace(guard(base_dir, scratch, "move"), kept)
        if seed is not None and seed.is_relative_to(scratch):
            seed = kept / seed.relative_to(scratch)
    session.seed = seed
    session.notices = notices
    return session


def _literal_paths(paths: list[str]) -> tuple[str, ...]:
    """Workspace paths as ignore globs that match each path itself only (a glob holding ``/`` is
    matched against the whole relative path; its special characters are escaped)."""
    import glob
    import posixpath

    return tuple("/" + glob.escape(posixpath.normpath(path.replace("\\", "/")).strip("/")) for path in paths)


def _takes_rebuild(problem_format: Any) -> bool:
    """Whether the format's ``prepare_environment`` has the ``rebuild`` parameter (formats written before it do not)."""
    import inspect

    try:
        return "rebuild" in inspect.signature(problem_format.prepare_environment).parameters
    except (TypeError, ValueError):
        return False
