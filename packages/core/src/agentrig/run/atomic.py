"""Writing run artifacts so that a crash never leaves a half-written file.

Whole files go through a temporary file in the same directory and
``os.replace``; JSONL files grow by appending each complete line with a single
``write`` so a reader sees every finished line and, at worst, one torn last
line that :func:`read_jsonl_lines` drops.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one step (temporary file, fsync, rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_text_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) in one step."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_model_atomic(path: Path, record: BaseModel) -> None:
    """Replace ``path`` with ``record.model_dump_json(indent=2)`` in one step."""
    write_text_atomic(path, record.model_dump_json(indent=2) + "\n")


def append_line(path: Path, line: str, *, sync: bool = False) -> None:
    """Append one line to ``path`` with a single ``write`` (O_APPEND).

    One ``write`` of a complete line is what keeps concurrent writers and
    crashes from interleaving or splitting lines; ``sync`` adds an fsync for
    records that must survive a power loss, not just a killed process.
    """
    data = (line.rstrip("\n") + "\n").encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        written = os.write(fd, data)
        while written < len(data):  # a short write only happens on odd filesystems
            written += os.write(fd, data[written:])
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def append_model(path: Path, record: BaseModel, *, sync: bool = False) -> None:
    """Append ``record.model_dump_json()`` as one JSONL line."""
    append_line(path, record.model_dump_json(), sync=sync)


def read_jsonl_records(
    path: Path, containing: str | None = None, read: Callable[[Path], bytes] | None = None
) -> list[tuple[int, bytes]]:
    """The complete lines of a JSONL file as ``(line number, bytes)``, not decoded; a torn last
    line (a crash mid-write) and blank lines are dropped.

    ``containing``: only the lines holding that text. ``read``: how the file is read
    (default :meth:`Path.read_bytes`; a run directory read back passes one that never
    follows a link out of it).
    """
    try:
        data = read(path) if read is not None else path.read_bytes()
    except FileNotFoundError:
        return []
    lines = data.split(b"\n")
    # Everything before the last newline is whole; what follows it is torn or empty.
    whole = list(enumerate(lines[:-1], 1))
    if containing is not None:
        needle = containing.encode("utf-8")
        whole = [(number, line) for number, line in whole if needle in line]
    return [(number, line) for number, line in whole if line.strip()]


def read_jsonl_lines(path: Path, containing: str | None = None, read: Callable[[Path], bytes] | None = None) -> list[str]:
    """The complete lines of a JSONL file; a torn last line (a crash mid-write) is dropped, and so
    is a line that is not UTF-8 (no JSON record).

    ``containing``: only the lines holding that text (tested before decoding, so
    picking one problem's lines out of a long file costs little); ``read``: as
    :func:`read_jsonl_records`.
    """
    out = []
    for _, line in read_jsonl_records(path, containing, read):
        try:
            out.append(line.decode("utf-8"))
        except UnicodeDecodeError:
            continue
    return out


def truncate_torn_tail(path: Path) -> None:
    """Cut a torn last line off a JSONL file, so appending continues on a clean line."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    if data and not data.endswith(b"\n"):
        keep = data.rfind(b"\n") + 1
        write_bytes_atomic(path, data[:keep])
