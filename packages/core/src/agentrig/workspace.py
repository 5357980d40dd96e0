"""Workspaces: the directory an agent works in, its snapshots and their diffs.

A snapshot is a directory holding a copy of the workspace's files under
``files/`` and ``manifest.json`` (a :class:`SnapshotManifest`: path, size,
SHA-256 and mode of every file, symlinks by target; a name that is not UTF-8 quoted as git
quotes it, :mod:`agentrig.pathnames`). Caches and virtual
environments are left out by ignore globs. A snapshot is written into a
temporary sibling and renamed into place, so a crash never leaves a
half-written snapshot behind its final name. Restoring a snapshot makes the
workspace's contents equal to it again (used by ``--resume``).
"""

from __future__ import annotations

import errno
import fnmatch
import hashlib
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentrig.atomic import write_model_atomic
from agentrig.boundary import BoundaryError, check_relative, shorten
from agentrig.pathnames import RecordedPath
from agentrig.readback import ReadbackBudget, ReadbackLimits

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

    path: RecordedPath
    kind: Literal["file", "symlink"] = "file"
    size: int = 0
    sha256: str = ""
    mode: int = 0o644
    target: RecordedPath | None = Field(default=None, description="Link target, for symlinks.")


class SnapshotManifest(BaseModel):
    """``manifest.json`` of a snapshot: every file kept, and the globs that left others out."""

    model_config = ConfigDict(extra="forbid")

    format: Literal[1] = 1
    created: datetime
    ignore: list[str]
    files: list[FileRecord]
    total_size: int
    left_out: str | None = Field(
        default=None, description="What the read-back limits left out of the snapshot (-c readback.*), one line."
    )

    def by_path(self) -> dict[str, FileRecord]:
        """The records keyed by path."""
        return {record.path: record for record in self.files}


class SnapshotDiff(BaseModel):
    """What changed between two snapshots (``diff.json``): sorted POSIX paths."""

    model_config = ConfigDict(extra="forbid")

    added: list[RecordedPath] = []
    modified: list[RecordedPath] = []
    deleted: list[RecordedPath] = []

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


class _IgnoreMatcher:
    """:func:`is_ignored` for a walk: component globs compiled into one regex, checked
    against each entry's own name (its parents were checked on the way down)."""

    def __init__(self, ignore: Sequence[str]) -> None:
        components = [p for p in ignore if "/" not in p]
        self.name = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in components)) if components else None
        self.paths = [p.strip("/") for p in ignore if "/" in p]

    def __call__(self, name: str, relpath: str) -> bool:
        if self.name is not None and self.name.match(name):
            return True
        return any(fnmatch.fnmatchcase(relpath, pattern) for pattern in self.paths)


def _walk(root: Path, ignore: Sequence[str]) -> list[tuple[str, str]]:
    """``(posix relative path, absolute path)`` of the files and symlinks under ``root``, unsorted."""
    ignored = _IgnoreMatcher(ignore)
    base = os.fspath(root)
    stack = [(base, "")]
    found: list[tuple[str, str]] = []
    while stack:
        directory, prefix = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError as exc:
            raise WorkspaceError(f"cannot read directory '{directory}': {exc.strerror}") from None
        for entry in entries:
            rel = prefix + entry.name
            if ignored(entry.name, rel):
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append((entry.path, rel + "/"))
            elif entry.is_symlink() or entry.is_file(follow_symlinks=False):
                found.append((rel, entry.path))
            # sockets, fifos and devices are not workspace content
    return found


def iter_files(root: Path, ignore: Sequence[str] = DEFAULT_IGNORES) -> Iterator[tuple[str, Path]]:
    """``(posix relative path, absolute path)`` of every regular file and symlink under
    ``root``, sorted, skipping ignored ones; symlinks are never followed."""
    for rel, path in sorted(_walk(root, ignore)):
        yield rel, Path(path)


def _copy_and_hash(src: Path | str, dst: Path | str, mode: int = 0o600, limit: int | None = None) -> tuple[int, str]:
    """Copy ``src`` to the new file ``dst`` (created with ``mode``, before the umask) and hash it;
    at most ``limit`` bytes when given (a file still growing is taken as it was when counted)."""
    digest = hashlib.sha256()
    size = 0
    # never through a link: a workspace file swapped for one after it was listed (``secret -> /etc/shadow``)
    # is refused (ELOOP), not copied; nor a FIFO swapped in, which would block the read
    reader = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        writer = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), mode)
        try:
            while chunk := os.read(reader, _CHUNK if limit is None else min(_CHUNK, limit - size)):
                digest.update(chunk)
                view = memoryview(chunk)
                while view:
                    view = view[os.write(writer, view):]
                size += len(chunk)
        finally:
            os.close(writer)
    finally:
        os.close(reader)
    return size, digest.hexdigest()


def hash_file(path: Path) -> str:
    """SHA-256 of a file's content, hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as reader:
        while chunk := reader.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


_StatKey = tuple[int, int, int, int, int, int]


def _stat_key(info: os.stat_result) -> _StatKey:
    """What must be equal for a file to be taken as unchanged: inode, size, mode, mtime and ctime.

    Any write, chmod, rename over it or ``utime`` moves the ctime, which no
    program can set back; a replaced file is another inode.
    """
    return (info.st_dev, info.st_ino, info.st_size, info.st_mode, info.st_mtime_ns, info.st_ctime_ns)


class Snapshot:
    """A snapshot on disk: ``path`` holds ``files/`` and ``manifest.json``."""

    def __init__(self, path: Path, manifest: SnapshotManifest, sources: dict[str, _StatKey] | None = None) -> None:
        """Wrap an existing snapshot; use :meth:`load` or :func:`take_snapshot`.

        ``sources`` (kept in memory only) maps paths to the workspace file's
        status when it was copied, for files known unchanged since: the next
        snapshot of the same workspace links those that still have it.
        """
        self.path = path
        self.manifest = manifest
        self.sources = sources or {}

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


def take_snapshot(
    source: Path,
    dest: Path,
    ignore: Sequence[str] = DEFAULT_IGNORES,
    previous: Snapshot | None = None,
    limits: ReadbackLimits | None = None,
) -> Snapshot:
    """Copy ``source``'s files into a new snapshot at ``dest`` (replaced if it exists).

    Written into a temporary sibling of ``dest`` and renamed, so ``dest`` is
    either the previous complete snapshot or the new complete one.

    With ``previous`` (the last snapshot taken of the same workspace in this
    process), a file whose inode, size, mode, mtime and ctime are those it had
    when ``previous`` copied it is hard-linked from ``previous`` with its record,
    not copied and hashed again. A file is remembered as copied only when its
    ctime is older than the new snapshot's own directory (the filesystem's
    clock), so a write landing in the same clock tick as the copy is never
    mistaken for no change. Snapshot files are never written after they are
    made, so the links share content that cannot change.

    Files are taken in path order within ``limits`` (:class:`~agentrig.readback.ReadbackLimits`, the
    defaults when ``None``): the files beyond them are left out, said in the manifest's ``left_out``.
    """
    if not source.is_dir():
        raise WorkspaceError(f"workspace '{source}' is not a directory")
    dest = dest.absolute()
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".partial", dir=dest.parent))
    try:
        # "now" on the filesystem's clock (before files/ is made in it): files changed at or after it may
        # change again unseen
        now = os.stat(staging).st_ctime_ns
        copier = _SnapshotCopier(staging / FILES_DIR, previous, now)
        budget = ReadbackBudget(limits, f"the snapshot of workspace {source}")
        for rel, path in sorted(_walk(source, ignore)):
            copier.add(rel, path, budget)
        manifest = SnapshotManifest(
            created=datetime.now(timezone.utc),
            ignore=list(ignore),
            files=copier.records,
            total_size=sum(r.size for r in copier.records),
            left_out=budget.left_out(),
        )
        write_model_atomic(staging / MANIFEST_NAME, manifest)
        _replace_directory(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return Snapshot(dest, manifest, copier.sources)


def _replace_directory(staging: Path, dest: Path) -> None:
    """``staging`` renamed to ``dest``; an existing ``dest`` moved aside first and removed after."""
    if dest.exists() or dest.is_symlink():
        old = dest.with_name(f".{dest.name}.old-{os.getpid()}")
        os.replace(dest, old)
        os.replace(staging, dest)
        _remove(old)
    else:
        os.replace(staging, dest)


class _SnapshotCopier:
    """A snapshot's ``files/`` filled file by file: each copied and hashed, or hard-linked from the previous
    snapshot when unchanged since it copied it; the records, and the files known unchanged (``sources``)."""

    def __init__(self, files_dir: Path, previous: Snapshot | None, now: int) -> None:
        files_dir.mkdir()
        self.base = os.fspath(files_dir) + os.sep
        self.now = now
        self.reusable: dict[str, _StatKey] = {}
        self.previous_records: dict[str, FileRecord] = {}
        self.previous_files = ""
        if previous is not None:
            self.reusable = previous.sources
            self.previous_records = previous.manifest.by_path() if self.reusable else {}
            self.previous_files = os.fspath(previous.files_dir) + os.sep
        self.made: set[str] = {""}
        self.records: list[FileRecord] = []
        self.sources: dict[str, _StatKey] = {}

    def add(self, rel: str, path: str, budget: ReadbackBudget) -> None:
        """The workspace file ``path`` (``rel``: its POSIX path in the workspace) into the snapshot,
        when it fits in ``budget``."""
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return  # deleted while we walked: it is not part of the snapshot
        if not budget.take(0 if stat.S_ISLNK(info.st_mode) else info.st_size):
            return
        parent = rel.rpartition("/")[0]
        if parent not in self.made:
            os.makedirs(self.base + parent, exist_ok=True)
            self.made.add(parent)
        target = self.base + rel  # rel is POSIX and relative: plain concatenation is the join
        try:
            if stat.S_ISLNK(info.st_mode):
                link = os.readlink(path)
                os.symlink(link, target)
                self.records.append(FileRecord(path=rel, kind="symlink", target=link, mode=0o777))
                return
            key = _stat_key(info)
            record = self._linked(rel, key, target)
            if record is None:
                record = _copied(rel, path, target, info)
        except FileNotFoundError:
            return  # deleted while we walked: it is not part of the snapshot
        except PermissionError:
            raise WorkspaceError(f"cannot read '{path}' to snapshot it: permission denied") from None
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            raise WorkspaceError(f"'{path}' became a symbolic link while it was snapshotted; not followed") from None
        if key[5] < self.now:
            self.sources[rel] = key
        self.records.append(record)

    def _linked(self, rel: str, key: _StatKey, target: str) -> FileRecord | None:
        """The previous snapshot's record of ``rel``, its copy hard-linked, when the file is as it was then."""
        record = self.previous_records.get(rel) if self.reusable.get(rel) == key else None
        if record is None:
            return None
        try:
            os.link(self.previous_files + rel, target)
        except OSError:  # another filesystem, a link limit, the old copy gone: copy it
            return None
        return record


def _copied(rel: str, path: str, target: str, info: os.stat_result) -> FileRecord:
    """``path`` copied to ``target`` and hashed on the way, readable and removable by us whatever the umask."""
    mode = stat.S_IMODE(info.st_mode)
    size, digest = _copy_and_hash(path, target, mode | 0o600, info.st_size)
    os.chmod(target, mode | 0o600)
    return FileRecord(path=rel, size=size, sha256=digest, mode=mode)


def clear_directory(path: Path) -> None:
    """Remove everything inside ``path``, keeping ``path`` itself (a bind mount stays valid)."""
    for entry in os.scandir(path):
        _remove(Path(entry.path))


#: How many symbolic links a path of a snapshot may pass through before it counts as a loop (Linux's own limit).
_LINK_HOPS_MAX = 40


def _leaves(path: str, links: dict[str, str]) -> bool:
    """Whether ``path`` (relative to a snapshot's root, with the manifest's ``links`` followed as the restored
    workspace would follow them) leads outside that root, or through an absolute link, or into a loop."""
    pending = list(reversed(path.split("/")))
    resolved: list[str] = []
    hops = 0
    while pending:
        part = pending.pop()
        if part in ("", "."):
            continue
        if part == "..":
            if not resolved:
                return True
            resolved.pop()
            continue
        here = "/".join([*resolved, part])
        if here in links:
            hops += 1
            target = links[here]
            if hops > _LINK_HOPS_MAX or not target or target.startswith("/"):
                return True
            pending.extend(reversed(target.split("/")))  # relative to the link's directory: ``resolved``
            continue
        resolved.append(part)
    return False


def check_manifest(snapshot: Path, manifest: SnapshotManifest) -> None:
    """Refuse a manifest whose restore would write or point outside the workspace, before anything is written:
    :class:`WorkspaceError` naming ``manifest.json`` and the entry when a path is empty, absolute or has a ``..``
    component, lies below an entry that is a symbolic link (or is listed twice), when a link leads outside the
    snapshot (followed through the other links, as the workspace would), or when a file's copy under ``files/`` is
    not a regular file reached without a link. A manifest read back from a run directory may come from someone
    else; every restore passes through here (:func:`restore_snapshot`)."""
    where = snapshot / MANIFEST_NAME
    links = {r.path: r.target or "" for r in manifest.files if r.kind == "symlink"}
    seen: set[str] = set()
    files_dir = os.path.realpath(snapshot / FILES_DIR)
    for record in manifest.files:
        path = record.path
        shown = shorten(path)
        try:
            check_relative(path, str(where))
        except BoundaryError as exc:
            raise WorkspaceError(f"{exc}; the snapshot is not restored") from None
        parts = path.split("/")
        if "." in parts or "" in parts:  # a backslash is a character of a POSIX name, not a separator
            raise WorkspaceError(f"{where}: '{shown}' is not a plain relative path; the snapshot is not restored")
        if path in seen:
            raise WorkspaceError(f"{where}: '{shown}' is listed twice; the snapshot is not restored")
        seen.add(path)
        below = next(("/".join(parts[:i]) for i in range(1, len(parts)) if "/".join(parts[:i]) in links), None)
        if below is not None:
            raise WorkspaceError(f"{where}: '{shown}' lies below the symbolic link '{shorten(below)}'; the snapshot is not restored")
        if record.kind == "symlink":
            target = record.target or ""
            if not target or target.startswith("/") or _leaves("/".join([*parts[:-1], target]), links):
                raise WorkspaceError(
                    f"{where}: the symbolic link '{shown}' leads outside the snapshot"
                    f" (to '{shorten(record.target or '')}'); the snapshot is not restored"
                )
            continue
        source = os.path.join(files_dir, *parts)
        if os.path.realpath(source) != source or not os.path.isfile(source):
            raise WorkspaceError(
                f"{where}: '{shown}' has no regular file under {FILES_DIR}/ (missing, or a link); the snapshot is not restored"
            )


def restore_snapshot(snapshot: Snapshot | Path, target: Path) -> Snapshot:
    """Make ``target``'s contents equal to ``snapshot``, checking every file's hash.

    ``target`` itself is kept (only its contents change), so a container that
    has it bind-mounted keeps seeing it. The manifest is checked first
    (:func:`check_manifest`: nothing is written outside ``target``); a file whose
    content does not match the manifest raises :class:`WorkspaceError` naming it.
    """
    snap = snapshot if isinstance(snapshot, Snapshot) else Snapshot.load(snapshot)
    if not target.is_dir():
        raise WorkspaceError(f"cannot restore into '{target}': not a directory")
    check_manifest(snap.path, snap.manifest)
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
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            raise WorkspaceError(f"snapshot '{snap.path}' is corrupt: '{record.path}' is a symbolic link in it") from None
        if digest != record.sha256 or size != record.size:
            raise WorkspaceError(f"snapshot '{snap.path}' is corrupt: '{record.path}' does not match its manifest")
        os.chmod(dst, record.mode)
    return snap


def seed_directory(seed: Path, target: Path, ignore: Sequence[str] | None = None) -> SnapshotManifest | None:
    """Copy the contents of ``seed`` into ``target`` (symlinks kept as links, modes and times kept).

    With ``ignore``, also return the manifest of the copied files that ``ignore``
    does not leave out, hashed while they are copied: what a manifest of ``seed``
    would say, without reading the seed a second time.
    """
    if not seed.exists():
        raise WorkspaceError(f"workspace seed '{seed}' does not exist")
    if not seed.is_dir():
        raise WorkspaceError(f"workspace seed '{seed}' is not a directory")
    if ignore is None:
        shutil.copytree(seed, target, symlinks=True, dirs_exist_ok=True)
        return None
    digests: dict[str, tuple[int, str]] = {}

    def copy_and_hash(src: str, dst: str) -> str:
        if not stat.S_ISREG(os.stat(src).st_mode):
            return shutil.copy2(src, dst)  # special files: copy2 says what is wrong with them
        digests[os.fspath(dst)] = _copy_and_hash(src, dst)
        shutil.copystat(src, dst)
        return dst

    shutil.copytree(seed, target, symlinks=True, dirs_exist_ok=True, copy_function=copy_and_hash)
    records: list[FileRecord] = []
    for rel, path in sorted(_walk(target, ignore)):
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            records.append(FileRecord(path=rel, kind="symlink", target=os.readlink(path), mode=0o777))
            continue
        size, digest = digests.get(path) or (info.st_size, hash_file(Path(path)))
        records.append(FileRecord(path=rel, size=size, sha256=digest, mode=stat.S_IMODE(info.st_mode)))
    return SnapshotManifest(
        created=datetime.now(timezone.utc), ignore=list(ignore), files=records, total_size=sum(r.size for r in records)
    )


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
        #: The manifest of the files :meth:`create` seeded the workspace with (``None``: not seeded by it).
        self.seed_manifest: SnapshotManifest | None = None

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
        ignore = tuple(ignore)
        manifest = seed_directory(Path(seed), path, ignore) if seed is not None else None
        workspace = cls(path, ignore=ignore, owned=owned)
        workspace.seed_manifest = manifest
        return workspace

    def snapshot(self, dest: Path, previous: Snapshot | None = None, limits: ReadbackLimits | None = None) -> Snapshot:
        """Write a snapshot of this workspace at ``dest`` (``files/`` + ``manifest.json``).

        ``previous``, the last snapshot of this workspace, lets unchanged files be
        hard-linked from it instead of copied; ``limits`` bound what it copies (see :func:`take_snapshot`).
        """
        return take_snapshot(self.path, dest, self.ignore, previous, limits)

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
