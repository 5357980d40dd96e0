"""Moving files in and out of a task's container through the Docker SDK (no ``docker cp`` binary).

- :func:`put_directory` uploads a host directory to an absolute path in a
  running container (``tests/`` to ``/tests`` after the agent, ``solution/`` to
  ``/solution`` for the oracle), parents created, owned by the user commands run as.
- :func:`make_directories` creates directories writable by everyone (``/logs/verifier``).
- :func:`read_directory` reads the regular files under a container path
  (the verifier's reward files and logs).
- :func:`extract_image_directory` copies a directory of an image (its working
  directory, e.g. ``/app``) to the host, where it seeds the task's workspace.
"""

from __future__ import annotations

import io
import os
import shutil
import socket
import tarfile
import tempfile
from collections.abc import Collection, Iterator
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from agentrig.readback import ReadbackBudget

if TYPE_CHECKING:
    import docker

MAX_READ_BYTES = 8 * 1024 * 1024


def _owner(user: str | None) -> tuple[int, int]:
    """Numeric ``uid:gid`` of a runtime user ('' or a name: root)."""
    if not user:
        return 0, 0
    uid, _, gid = user.partition(":")
    try:
        return int(uid), int(gid or uid)
    except ValueError:
        return 0, 0


def _parents(tar: tarfile.TarFile, target: PurePosixPath, uid: int, gid: int, mode: int) -> None:
    parts = target.parts[1:]
    for depth in range(1, len(parts) + 1):
        info = tarfile.TarInfo("/".join(parts[:depth]))
        info.type, info.mode, info.uid, info.gid = tarfile.DIRTYPE, mode, uid, gid
        info.mtime = 0
        tar.addfile(info)


def put_directory(container: Any, source: Path, target: str, *, user: str | None = None) -> None:
    """Upload every file under ``source`` to ``target`` (absolute) in the running ``container``."""
    path = PurePosixPath(target)
    if not path.is_absolute() or path == PurePosixPath("/"):
        raise ValueError(f"target {target!r} must be an absolute directory other than /")
    uid, gid = _owner(user)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        _parents(tar, path, uid, gid, 0o755)
        prefix = "/".join(path.parts[1:])
        for item in sorted(source.rglob("*")):
            rel = item.relative_to(source).as_posix()
            info = tar.gettarinfo(str(item), arcname=f"{prefix}/{rel}")
            info.uid, info.gid, info.uname, info.gname = uid, gid, "", ""
            if info.isfile():
                with open(item, "rb") as handle:
                    tar.addfile(info, handle)
            else:
                tar.addfile(info)
    if not container.put_archive("/", buffer.getvalue()):
        raise OSError(f"uploading {source} to {target} in container {container.name} failed")


def make_directories(container: Any, *targets: str) -> None:
    """Create ``targets`` (absolute) in the running ``container``, writable by every user."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        seen: set[str] = set()
        for target in targets:
            parts = PurePosixPath(target).parts[1:]
            for depth in range(1, len(parts) + 1):
                name = "/".join(parts[:depth])
                if name in seen:
                    continue
                seen.add(name)
                info = tarfile.TarInfo(name)
                info.type, info.mode = tarfile.DIRTYPE, 0o777 if depth == len(parts) else 0o755
                tar.addfile(info)
    if not container.put_archive("/", buffer.getvalue()):
        raise OSError(f"creating {', '.join(targets)} in container {container.name} failed")


class _ChunkReader(io.RawIOBase):
    """The chunks of a Docker archive stream as a file a streaming ``tarfile`` reads (nothing spooled)."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self.chunks = chunks
        self.pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self.pending:
            try:
                self.pending = next(self.chunks)
            except StopIteration:
                return 0
        count = min(len(buffer), len(self.pending))
        buffer[:count] = self.pending[:count]
        self.pending = self.pending[count:]
        return count


def read_directory(
    container: Any,
    path: str,
    *,
    limit: int = MAX_READ_BYTES,
    budget: ReadbackBudget | None = None,
    dest: Path | None = None,
    keep: Collection[str] = (),
) -> dict[str, bytes]:
    """The regular files under ``path`` in ``container`` (relative name to content); ``{}`` when absent.

    A file larger than ``limit`` keeps only its first ``limit`` bytes. The archive is read as a
    stream, in its order, and files are taken while ``budget`` (:class:`~agentrig.readback.ReadbackBudget`,
    the default limits when ``None``) allows: the rest is counted as left out (its ``left_out()`` says
    so). The files named in ``keep`` (a reward file) are always taken and returned; with ``dest``, each
    file taken is written under it and only those are kept in memory.
    """
    import docker.errors

    budget = budget or ReadbackBudget(None, f"{path} of container {getattr(container, 'name', '?')}")
    try:
        stream, _ = container.get_archive(path)
    except docker.errors.NotFound:
        return {}
    files: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BufferedReader(_ChunkReader(iter(stream)), 1 << 20), mode="r|") as tar:
        for member in tar:
            if not member.isfile():
                continue
            parts = PurePosixPath(member.name).parts
            rel = "/".join(parts[1:]) if len(parts) > 1 else parts[0]
            if rel not in keep and not budget.take(min(member.size, limit)):
                continue
            handle = tar.extractfile(member)
            if handle is None:
                continue
            data = handle.read(limit)
            if dest is not None and rel not in keep:
                _write_inside(dest, rel, data)
            else:
                files[rel] = data
                if dest is not None:
                    _write_inside(dest, rel, data)
    return files


def _write_inside(dest: Path, rel: str, data: bytes) -> None:
    """``data`` written to ``dest/rel`` when ``rel`` is a plain relative path (no ``..``, not absolute);
    a link in the way is replaced, never followed (no fsync: a raw report, committed with its checkpoint)."""
    from agentrig.boundary import guard

    parts = PurePosixPath(rel).parts
    if not parts or PurePosixPath(rel).is_absolute() or any(part in ("", ".", "..") for part in parts):
        return
    target = guard(dest, dest.joinpath(*parts))
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink():
        target.unlink()
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def extract_image_directory(client: docker.DockerClient, image: str, path: str, dest: Path) -> bool:
    """Copy directory ``path`` of ``image`` into ``dest`` (created; its contents replaced).

    Returns False (``dest`` left empty) when the image has no such directory.
    The copy is made in a sibling temporary directory and renamed into place,
    so a killed process never leaves a half-extracted ``dest``. The container
    it copies from is created (never started) through the low-level API and
    made again when it vanishes before the copy is read (removed by another
    party on the engine), up to :data:`EXTRACT_ATTEMPTS` times.
    """
    import docker.errors

    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        for attempt in range(1, EXTRACT_ATTEMPTS + 1):
            try:
                found = _extract_once(client, image, path, staging)
                break
            except docker.errors.NotFound as exc:
                if "no such container" not in str(exc).lower() or attempt == EXTRACT_ATTEMPTS:
                    raise
                shutil.rmtree(staging)
                staging.mkdir()
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if dest.exists():
        shutil.rmtree(dest)
    os.replace(staging, dest)
    return found


#: How many times :func:`extract_image_directory` makes its container when it vanishes mid-copy.
EXTRACT_ATTEMPTS = 3


def _extract_once(client: docker.DockerClient, image: str, path: str, staging: Path) -> bool:
    """One copy of ``path`` of ``image`` into the empty ``staging``; False when the image has no such path."""
    import docker.errors

    from agentrig.runtime.docker import LABEL, LABEL_HOST, LABEL_PID, LABEL_START
    from agentrig.runtime.proctree import process_start_time

    # owner labels: a sweep by another agentrig process leaves it alone; one left by a killed run is swept
    pid = os.getpid()
    labels = {LABEL: "1", LABEL_HOST: socket.gethostname(), LABEL_PID: str(pid), LABEL_START: process_start_time(pid)}
    container_id = client.api.create_container(image, command=["true"], labels=labels)["Id"]
    try:
        try:
            stream, _ = client.api.get_archive(container_id, path.rstrip("/") or "/")
        except docker.errors.NotFound as exc:
            if "no such container" in str(exc).lower():
                raise
            return False
        with tempfile.TemporaryFile() as spool:
            for block in stream:
                spool.write(block)
            spool.seek(0)
            with tarfile.open(fileobj=spool, mode="r:") as tar:
                members = []
                budget = ReadbackBudget(None, f"the working directory {path} of image {image}")
                for member in tar.getmembers():
                    parts = PurePosixPath(member.name).parts
                    if len(parts) < 2 or member.isdev():
                        continue  # the directory itself, devices
                    if not member.isdir() and not budget.take(member.size if member.isfile() else 0):
                        continue
                    member.name = "/".join(parts[1:])
                    members.append(member)
                kwargs: dict[str, Any] = {"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}
                tar.extractall(staging, members=members, **kwargs)
                budget.report()
        return True
    finally:
        try:
            client.api.remove_container(container_id, force=True)
        except docker.errors.APIError:
            pass
