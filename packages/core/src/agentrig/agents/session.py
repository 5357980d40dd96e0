"""A session: one problem's workspace, isolated home directory and runtime.

``Session.create`` makes a private directory holding ``workspace/`` (seeded
from the problem's files) and ``home/`` (the ``HOME`` every command sees, so
agents' dotfiles never touch the user's), and starts the runtime through the
``agentrig_runtimes`` hook. Agents use ``session.workspace.path`` and
``session.runtime``, and may read ``session.problem`` (the
:class:`~agentrig.problem.Problem` being run, in the core's model) and
``session.checkpoint`` (the :class:`~agentrig.problem.Checkpoint` being worked
on, set before each ``run_checkpoint``; both ``None`` outside a run); the runner uses :meth:`Session.record_checkpoint` after
each checkpoint and :meth:`Session.restore` for ``--resume``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from agentrig.workspace import DEFAULT_IGNORES, Snapshot, SnapshotDiff, Workspace, WorkspaceError

if TYPE_CHECKING:
    from agentrig.problem import Checkpoint, Problem
    from agentrig.registry import PluginRegistry
    from agentrig.runtime.interface import Runtime

SNAPSHOT_DIR = "snapshot"
DIFF_FILE = "diff.json"


class Session:
    """One problem's workspace, home directory and runtime; close it (or use ``with``) to release them."""

    def __init__(self, workspace: Workspace, runtime: Runtime, home: Path, *, directory: Path | None = None) -> None:
        """Wrap parts already made; :meth:`create` is the usual way in."""
        self.workspace = workspace
        self.runtime = runtime
        self.home = home
        self.directory = directory
        self.problem: Problem | None = None
        self.checkpoint: Checkpoint | None = None
        #: The directory the workspace was seeded from, when the run knows it (``None``: empty or unknown).
        self.seed: Path | None = None
        #: One line each where the problem's environment has less than it asks for (its format's notices).
        self.notices: list[str] = []
        self._closed = False
        from agentrig.runtime.teardown import track

        track(self)

    @classmethod
    def create(
        cls,
        *,
        runtime: str = "local",
        seed: Path | None = None,
        name: str = "session",
        base_dir: Path | None = None,
        env: Mapping[str, str] | None = None,
        runtime_options: Mapping[str, Any] | None = None,
        ignore: tuple[str, ...] = DEFAULT_IGNORES,
        registry: PluginRegistry | None = None,
    ) -> Session:
        """A fresh session: a private directory under ``base_dir`` (default: the temp dir)
        with ``workspace/`` seeded from ``seed`` and ``home/``, and runtime ``runtime``
        started on it with ``env`` added to every command."""
        from agentrig.runtime.resolve import create_runtime
        from agentrig.scratch import temp_dir

        parent = Path(base_dir) if base_dir is not None else Path(tempfile.gettempdir())
        try:
            parent.mkdir(parents=True, exist_ok=True)
            if base_dir is None:  # in the temporary directory: named after this process, swept once it is gone
                directory = temp_dir(f"agentrig-{name}-")
            else:  # under a run directory's .workspaces: removed by the run's own sweep
                directory = Path(tempfile.mkdtemp(prefix=f"agentrig-{name}-", dir=parent))
        except OSError as exc:
            raise WorkspaceError(f"cannot create a session directory under '{parent}': {exc.strerror}") from None
        try:
            # a container user other than ours must be able to enter and write
            os.chmod(directory, 0o755)
            workspace = Workspace.create(directory / "workspace", seed=seed, ignore=ignore, owned=True)
            home = directory / "home"
            home.mkdir(mode=0o700)
            # the agents' CLIs keep state here (Codex's shell snapshots hold its environment, the key included):
            # private to the user the commands run as, and gone with the session
            os.chmod(home, 0o700)
            rt = create_runtime(runtime, workspace.path, home=home, env=env, options=runtime_options, registry=registry)
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        return cls(workspace, rt, home, directory=directory)

    @classmethod
    def for_problem(cls, problem: Problem, **kwargs: Any) -> Session:
        """A session whose workspace is seeded from ``problem``'s ``workspace`` directory, if any."""
        seed = None
        if problem.workspace:
            seed = problem.path / problem.workspace
            if not seed.is_dir():
                raise WorkspaceError(
                    f"problem '{problem.name}': workspace '{problem.workspace}' is not a directory ({seed})"
                )
        kwargs.setdefault("name", problem.name)
        session = cls.create(seed=seed, **kwargs)
        session.problem = problem
        return session

    # -- snapshots --------------------------------------------------------------

    def snapshot(self, dest: Path) -> Snapshot:
        """Write a snapshot of the workspace at ``dest`` (``files/`` + ``manifest.json``)."""
        return self.workspace.snapshot(dest)

    def record_checkpoint(self, checkpoint_dir: Path, previous: Snapshot | Path | None = None) -> SnapshotDiff:
        """Write ``<checkpoint_dir>/snapshot/`` and ``<checkpoint_dir>/diff.json`` (the change
        since ``previous``, a snapshot or its directory; ``None``: since an empty workspace)."""
        from agentrig.atomic import write_model_atomic

        snapshot = self.snapshot(Path(checkpoint_dir) / SNAPSHOT_DIR)
        before = Snapshot.load(previous) if isinstance(previous, Path) else previous
        diff = snapshot.diff(before)
        write_model_atomic(Path(checkpoint_dir) / DIFF_FILE, diff)
        return diff

    def restore(self, snapshot: Snapshot | Path) -> Snapshot:
        """Make the workspace equal to ``snapshot`` (a snapshot or its directory, e.g.
        ``<checkpoint_dir>/snapshot``); the runtime keeps running on it."""
        return self.workspace.restore(snapshot)

    # -- teardown ---------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has run."""
        return self._closed

    def close(self) -> None:
        """Stop the runtime (processes, container) and delete the session directory; idempotent."""
        if self._closed:
            return
        self._closed = True
        from agentrig.runtime.teardown import untrack

        try:
            self.runtime.cleanup()
        finally:
            untrack(self)
            self.workspace.cleanup()
            if self.directory is not None:
                shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Session(workspace={str(self.workspace.path)!r}, runtime={self.runtime.name!r})"
