"""A problem run's files shipped between a worker and the run directory, for workers that do not share its filesystem.

With shared storage a worker writes a checkpoint's artifacts into the run
directory itself. Without it (an executor whose workers do not share the run directory)
the worker writes them under a directory of its own; when the checkpoint is
finished its directory is packed (:func:`pack_checkpoint`, a gzipped tar) and
sent with the ``checkpoint_end`` event, and the dispatcher writes it into the
run directory (:func:`unpack_checkpoint`: whole, atomically, before the
checkpoint's ``results.jsonl`` line). The other way, a problem resumed or
retried on a worker gets what its run needs of the finished checkpoints
(:func:`pack_resume`: the last one's workspace snapshot, every one's
trajectory), unpacked into its own directory (:func:`unpack`).
"""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
from collections.abc import Iterable
from pathlib import Path

from agentrig.boundary import BoundaryError, ascii_number, shorten
from agentrig.run.layout import RunDirectory
from agentrig.run.records import CheckpointResultLine

#: gzip level of the archives: fast (snapshots are mostly text; a cluster's network is the cost).
COMPRESS_LEVEL = 1

_INCOMING = ".incoming-"


def pack(root: Path, paths: Iterable[str]) -> bytes:
    """A gzipped tar of ``paths`` (relative to ``root``; missing ones are left out), named relative to ``root``.

    Files hard-linked to files outside the archive (a snapshot's unchanged
    files are linked to the previous snapshot's) are stored as files.
    """
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=COMPRESS_LEVEL) as tar:
        for rel in paths:
            path = root / rel
            if path.exists() or path.is_symlink():
                tar.add(path, arcname=rel, recursive=True)
    return buffer.getvalue()


class ShippingError(BoundaryError):
    """An archive whose members would land outside the directory it is unpacked into."""


def check_members(members: Iterable[tarfile.TarInfo], where: str) -> None:
    """:class:`ShippingError` unless every member stays inside the directory it is extracted into.

    A member's name is relative and has no ``..``; no member lies under a symbolic link of the
    archive (writing through it would land wherever it points; the link itself, a workspace's
    own, may point anywhere); a hard link names a member before it (never a file outside); only
    files, directories and links.
    """
    links: set[str] = set()
    seen: set[str] = set()
    for member in members:
        name = member.name
        parts = [p for p in name.split("/") if p not in ("", ".")]
        if name.startswith("/") or ".." in parts or "\x00" in name:
            raise ShippingError(f"{where}: member '{shorten(name)}' would land outside the directory; not unpacked")
        for depth in range(1, len(parts)):
            if "/".join(parts[:depth]) in links:
                raise ShippingError(f"{where}: member '{shorten(name)}' lies under a symbolic link; not unpacked")
        clean = "/".join(parts)
        if member.islnk():
            target = "/".join(p for p in member.linkname.split("/") if p not in ("", "."))
            if member.linkname.startswith("/") or target not in seen:
                raise ShippingError(
                    f"{where}: hard link '{shorten(name)}' to '{shorten(member.linkname)}' leaves the archive; not unpacked"
                )
        elif member.issym():
            links.add(clean)
        elif not (member.isfile() or member.isdir()):
            raise ShippingError(f"{where}: member '{shorten(name)}' is not a file, directory or link; not unpacked")
        seen.add(clean)


def _extract(data: bytes, into: Path) -> None:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        members = tar.getmembers()
        check_members(members, f"archive for {into}")
        if hasattr(tarfile, "tar_filter"):
            # 'tar': nothing outside ``into``, no device files; a workspace's own symlinks stay as they were
            tar.extractall(into, members, filter="tar")
        else:  # pragma: no cover - Pythons before the extraction filters (3.11.4)
            tar.extractall(into, members)


def unpack(root: Path, data: bytes) -> None:
    """Extract an archive of :func:`pack` under ``root`` (a worker's own directory); every member
    must stay inside it (:func:`check_members`)."""
    root.mkdir(parents=True, exist_ok=True)
    _extract(data, root)


def pack_checkpoint(root: Path, unit: str, checkpoint: str) -> bytes:
    """The whole directory ``<unit>/<checkpoint>/`` under ``root``, its contents named relative to it."""
    return pack(root / unit / checkpoint, ["."])


def unpack_checkpoint(root: Path, unit: str, checkpoint: str, data: bytes) -> None:
    """Make ``<unit>/<checkpoint>/`` under ``root`` exactly the archive's contents, in one step.

    The archive is extracted beside it under a hidden name and renamed into
    place; a directory already there (what an attempt that died left) is
    replaced. A dispatcher killed meanwhile leaves only a hidden directory,
    removed by the next call for that checkpoint.
    """
    directory = RunDirectory(root)
    target = directory.guard(directory.checkpoint(unit, checkpoint).root)  # plain names, strictly inside
    parent = directory.make_dir(target.parent)
    for leftover in parent.glob(f".{checkpoint}{_INCOMING}*"):
        _quietly_remove(directory, leftover)
    incoming = Path(tempfile.mkdtemp(prefix=f".{checkpoint}{_INCOMING}", dir=parent))
    try:
        _extract(data, incoming)
        _keep_earlier_tries(directory, target, incoming)
        if target.exists() or target.is_symlink():
            stale = Path(tempfile.mkdtemp(prefix=f".{checkpoint}{_INCOMING}stale-", dir=parent))
            os.replace(target, directory.guard(stale / checkpoint, "move"))
            _quietly_remove(directory, stale)
        os.replace(incoming, target)
    except BaseException:
        _quietly_remove(directory, incoming)
        raise


def _keep_earlier_tries(directory: RunDirectory, target: Path, incoming: Path) -> None:
    """The tries the run directory kept of the checkpoint (``--resume --retry-errors`` keeps them there, where
    the worker never saw them) go into the incoming directory: first, the worker's own (numbered from 1 in
    its own directory) renumbered after them. The result line's ``tries`` counts only the worker's."""
    from agentrig.run.layout import TRIES_DIR

    kept = target / TRIES_DIR
    if target.is_symlink() or kept.is_symlink() or not kept.is_dir():
        return
    earlier = sorted((n, p) for p in kept.iterdir() if (n := ascii_number(p.name)) is not None and p.is_dir() and not p.is_symlink())
    if not earlier:
        return
    arrived = incoming / TRIES_DIR
    theirs = sorted((n, p) for p in arrived.iterdir() if (n := ascii_number(p.name)) is not None) if arrived.is_dir() else []
    directory.make_dir(arrived)
    shift = earlier[-1][0]
    for number, path in reversed(theirs):
        os.replace(path, directory.guard(arrived / str(number + shift), "move"))
    for number, path in earlier:
        os.replace(path, directory.guard(arrived / str(number), "move"))


def _quietly_remove(directory: RunDirectory, path: Path) -> None:
    """Remove ``path`` (strictly inside the run directory); an error other than the guard's is ignored."""
    try:
        directory.remove(path)
    except BoundaryError:
        raise
    except OSError:
        pass


def resume_paths(unit: str, finished: list[CheckpointResultLine]) -> list[str]:
    """What a worker needs of a unit's finished checkpoints to go on after them (relative to the run directory).

    Every finished checkpoint's ``trajectory.jsonl`` (a replayed model counts
    the replies used) and the workspace ``snapshot/`` of the last checkpoint
    of the unbroken run of finished ones from the first (the workspace the
    next checkpoint starts from).
    """
    by_index = {line.index: line for line in finished}
    paths = [f"{unit}/{line.checkpoint}/trajectory.jsonl" for line in sorted(finished, key=lambda line: line.index)]
    last = None
    while (last + 1 if last is not None else 0) in by_index:
        last = last + 1 if last is not None else 0
    if last is not None:
        paths.append(f"{unit}/{by_index[last].checkpoint}/snapshot")
    return paths


def pack_resume(root: Path, unit: str, finished: list[CheckpointResultLine]) -> bytes | None:
    """The archive of :func:`resume_paths` from the run directory ``root``; ``None`` when nothing is finished."""
    if not finished:
        return None
    return pack(root, resume_paths(unit, finished))
