"""Workspaces: the directory an agent works in, its snapshots and their diffs.

A snapshot is a directory holding a copy of the workspace's files under
``files/`` and ``manifest.json`` (a :class:`SnapshotManifest`: path, size,
SHA-256 and mode of every file, symlinks by target). Caches and virtual
environments are left out by ignore globs. A snapshot is written into a
temporary sibling and renamed into place, so a crash never leaves a
half-written snapshot behind its final name. Restoring a snapshot makes the
workspace's contents equal to it again (used by ``--resume``).
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

#: Caches, build output and virtual environments: big, rebuildable, noisy in diffs.
DEFAULT_IGNORES: tuple[str, ...] = (
    "__pycache__",
    "*.pyc",
    "*.pyo",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    ".tox",
    ".nox",
    ".venv",
    "venv",
    ".cache",
    "node_modules",
    ".DS_Store",
)

MANIFEST_NAME = "manifest.json"
FILES_DIR = "files"
_CHUNK = 1 << 20


class WorkspaceError(Exception):
    """A workspace, seed or snapshot path is unusable; the message names it (one line)."""


class FileRecord(BaseModel):
    """One file of a snapshot: ``path`` is POSIX and relative to the workspace."""

    model_config = ConfigDict(extra="forbid")

    path: str
    kind: Literal["file", "symlink"] = "file"
    size: int = 0
    sha256: str = ""
    mode: int = 0o644
    target: str | None = Field(default=None, description="Link target, for symlinks.")


class SnapshotManifest(BaseModel):
    """``manifest.json`` of a snapshot: every file kept, and the globs that left others out."""

    model_config = ConfigDict(extra="forbid")

    format: Literal[1] = 1
    created: datetime
    ignore: list[str]
    files: list[FileRecord]
    total_size: int

    def by_path(self) -> dict[str, FileRecord]:
        """The records keyed by path."""
        return {record.path: record for record in self.files}


class SnapshotDiff(BaseModel):
    """What changed between two snapshots (``diff.json``): sorted POSIX paths."""

    model_config = ConfigDict(extra="forbid")

    added: list[str] = []
    modified: list[str] = []
    deleted: list[str] = []

    @property
    def empty(self) -> bool:
        """Whether nothing changed."""
        return not (self.added or self.modified or self.deleted)


def is_ignored(relpath: str, ignore: Sequence[str]) -> bool:
    """Whether POSIX ``relpath`` (file or directory) is left out by ``ignore``.

    A glob without ``/`` matches any single path component (``__pycache__``,
    ``*.pyc``); a glob with ``/`` matches the whole relative path.
    """
    parts = PurePosixPath(relpath).parts
    for pattern in ignore:
        if "/" in pattern:
            if fnmatch.fnmatchcase(relpath, pattern.strip("/")):
                return True
        elif any(fnmatch.fnmatchcase(part, pattern) for part in parts):
            return True
    return False


def iter_files(root: Path, ignore: Sequence[str] = DEFAULT_IGNORES) -> Iterator[tuple[str, Path]]:
    """``(posix relative path, absolute path)`` of every regular file and symlink under
    ``root``, sorted, skipping ignored ones; symlinks are never followed."""
    stack = [root]
    found: list[tuple[str, Path]] = []
    while stack:
        directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError as exc:
            raise WorkspaceError(f"cannot read directory '{directory}': {exc.strerror}") from None
        for entry in entries:
            path = Path(entry.path)
            rel = path.relative_to(root).as_posix()
            if is_ignored(rel, ignore):
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append(path)
            elif entry.is_symlink() or entry.is_file(follow_symlinks=False):
                found.append((rel, path))
            # sockets, fifos and devices are not workspace content
    yield from sorted(found)


def _copy_and_hash(src: Path, dst: Path) -> tuple[int, str]:
    digest = hashlib.sha256()
    size = 0
    with open(src, "rb") as reader, open(dst, "wb") as writer:
        while chunk := reader.read(_CHUNK):
            digest.update(chunk)
            writer.write(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


def hash_file(path: Path) -> str:
    """SHA-256 of a file's content, hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as reader:
        while chunk := reader.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def write_json_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step (temporary file, fsync, rename)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


class Snapshot:
    """A snapshot on disk: ``path`` holds ``files/`` and ``manifest.json``."""

    def __init__(self, path: Path, manifest: SnapshotManifest) -> None:
        """Wrap an existing snapshot; use :meth:`load` or :func:`take_snapshot`."""
        self.path = path
        self.manifest = manifest

    @property
    def files_dir(self) -> Path:
        """The copy of the workspace's files."""
        return self.path / FILES_DIR

    @classmethod
    def load(cls, path: Path) -> Snapshot:
        """Read the snapshot at ``path``; a missing or invalid manifest raises :class:`WorkspaceError`."""
        manifest_path = path / MANIFEST_NAME
        try:
            manifest = SnapshotManifest.model_validate_json(manifest_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise WorkspaceError(f"'{path}' is not a snapshot: '{manifest_path}' is missing") from None
        except ValidationError as exc:
            raise WorkspaceError(f"snapshot manifest '{manifest_path}' is invalid: {exc.errors()[0]['msg']}") from None
        if not (path / FILES_DIR).is_dir():
            raise WorkspaceError(f"snapshot '{path}' has no '{FILES_DIR}/' directory")
        return cls(path, manifest)

    def diff(self, previous: Snapshot | SnapshotManifest | None) -> SnapshotDiff:
        """What changed from ``previous`` (``None``: an empty workspace) to this snapshot."""
        return diff_manifests(previous.manifest if isinstance(previous, Snapshot) else previous, self.manifest)


def diff_manifests(before: SnapshotManifest | None, after: SnapshotManifest) -> SnapshotDiff:
    """Added, modified (content, kind, mode or link target) and deleted paths."""
    old = before.by_path() if before is not None else {}
    new = after.by_path()
    added = sorted(set(new) - set(old))
    deleted = sorted(set(old) - set(new))
    modified = sorted(
        path
        for path in set(new) & set(old)
        if (new[path].kind, new[path].sha256, new[path].mode, new[path].target)
        != (old[path].kind, old[path].sha256, old[path].mode, old[path].target)
    )
    return SnapshotDiff(added=added, modified=modified, deleted=deleted)


def take_snapshot(source: Path, dest: Path, ignore: Sequence[str] = DEFAULT_IGNORES) -> Snapshot:
    """Copy ``source``'s files into a new snapshot at ``dest`` (replaced if it exists).

    Written into a temporary sibling of ``dest`` and renamed, so ``dest`` is
    either the previous complete snapshot or the new complete one.
    """
    if not source.is_dir():
        raise WorkspaceError(f"workspace '{source}' is not a directory")
    dest = dest.absolute()
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".partial", dir=dest.parent))
    try:
        files_dir = staging / FILES_DIR
        files_dir.mkdir()
        records: list[FileRecord] = []
        for rel, path in iter_files(source, ignore):
            target = files_dir / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                info = path.lstat()
                if stat.S_ISLNK(info.st_mode):
                    link = os.readlink(path)
                    os.symlink(link, target)
                    records.append(FileRecord(path=rel, kind="symlink", target=link, mode=0o777))
                    continue
                size, digest = _copy_and_hash(path, target)
            except FileNotFoundError:
                continue  # deleted while we walked: it is not part of the snapshot
            except PermissionError:
                raise WorkspaceError(f"cannot read '{path}' to snapshot it: permission denied") from None
            mode = stat.S_IMODE(info.st_mode)
            os.chmod(target, mode | 0o600)  # keep the copy readable and removable by us
            records.append(FileRecord(path=rel, size=size, sha256=digest, mode=mode))
        manifest = SnapshotManifest(
            created=datetime.now(timezone.utc),
            ignore=list(ignore),
            files=records,
            total_size=sum(r.size for r in records),
        )
        write_json_atomic(staging / MANIFEST_NAME, manifest.model_dump_json(indent=2) + "\n")
        if dest.exists() or dest.is_symlink():
            old = dest.with_name(f".{dest.name}.old-{os.getpid()}")
            os.replace(dest, old)
            os.replace(staging, dest)
            _remove(old)
        else:
            os.replace(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return Snapshot(dest, manifest)


def clear_directory(path: Path) -> None:
    """Remove everything inside ``path``, keeping ``path`` itself (a bind mount stays valid)."""
    for entry in os.scandir(path):
        _remove(Path(entry.path))


def restore_snapshot(snapshot: Snapshot | Path, target: Path) -> Snapshot:
    """Make ``target``'s contents equal to ``snapshot``, checking every file's hash.

    ``target`` itself is kept (only its contents change), so a container that
    has it bind-mounted keeps seeing it. A file whose content does not match
    the manifest raises :class:`WorkspaceError` naming it.
    """
    snap = snapshot if isinstance(snapshot, Snapshot) else Snapshot.load(snapshot)
    if not target.is_dir():
        raise WorkspaceError(f"cannot restore into '{target}': not a directory")
    clear_directory(target)
    for record in snap.manifest.files:
        src = snap.files_dir / record.path
        dst = target / record.path
        dst.parent.mkdir(parents=True, exist_ok=True)
        if record.kind == "symlink":
            os.symlink(record.target or "", dst)
            continue
        try:
            size, digest = _copy_and_hash(src, dst)
        except FileNotFoundError:
            raise WorkspaceError(f"snapshot '{snap.path}' is missing '{record.path}'") from None
        if digest != record.sha256 or size != record.size:
            raise WorkspaceError(f"snapshot '{snap.path}' is corrupt: '{record.path}' does not match its manifest")
        os.chmod(dst, record.mode)
    return snap


def seed_directory(seed: Path, target: Path) -> None:
    """Copy the contents of ``seed`` into ``target`` (symlinks kept as links)."""
    if not seed.exists():
        raise WorkspaceError(f"workspace seed '{seed}' does not exist")
    if not seed.is_dir():
        raise WorkspaceError(f"workspace seed '{seed}' is not a directory")
    shutil.copytree(seed, target, symlinks=True, dirs_exist_ok=True)


class Workspace:
    """The directory an agent works in, on the host.

    ``owned`` workspaces were created by agentrig and are deleted by
    :meth:`cleanup`; a workspace wrapping a user's directory never is.
    """

    def __init__(self, path: Path, *, ignore: Iterable[str] = DEFAULT_IGNORES, owned: bool = False) -> None:
        """Wrap the existing directory ``path``."""
        path = Path(path)
        if not path.exists():
            raise WorkspaceError(f"workspace '{path}' does not exist")
        if not path.is_dir():
            raise WorkspaceError(f"workspace '{path}' is not a directory")
        self.path = path.resolve()
        self.ignore = tuple(ignore)
        self.owned = owned

    @classmethod
    def create(
        cls,
        path: Path,
        *,
        seed: Path | None = None,
        ignore: Iterable[str] = DEFAULT_IGNORES,
        owned: bool = True,
    ) -> Workspace:
        """A fresh workspace at ``path`` (must not exist, or be an empty directory), seeded from ``seed``."""
        path = Path(path)
        if path.exists() and (not path.is_dir() or any(path.iterdir())):
            raise WorkspaceError(f"workspace '{path}' already exists and is not an empty directory")
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise WorkspaceError(f"cannot create workspace '{path}': {exc.strerror}") from None
        if seed is not None:
            seed_directory(Path(seed), path)
        return cls(path, ignore=ignore, owned=owned)

    def snapshot(self, dest: Path) -> Snapshot:
        """Write a snapshot of this workspace at ``dest`` (``files/`` + ``manifest.json``)."""
        return take_snapshot(self.path, dest, self.ignore)

    def restore(self, snapshot: Snapshot | Path) -> Snapshot:
        """Replace this workspace's contents with ``snapshot``'s."""
        return restore_snapshot(snapshot, self.path)

    def files(self) -> list[str]:
        """Relative POSIX paths of the workspace's (non-ignored) files."""
        return [rel for rel, _ in iter_files(self.path, self.ignore)]

    def cleanup(self) -> None:
        """Delete the workspace if agentrig created it; idempotent."""
        if self.owned:
            shutil.rmtree(self.path, ignore_errors=True)

    def __repr__(self) -> str:
        return f"Workspace({str(self.path)!r})"
