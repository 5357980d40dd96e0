"""``diff.json``: what a checkpoint changed in the workspace, with a patch of the text files."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import TYPE_CHECKING

from agentrig.pathnames import quote_path
from agentrig.run.records import DiffRecord, FileChange

if TYPE_CHECKING:
    from agentrig.workspace import Snapshot

PATCH_LIMIT = 200_000
TEXT_LIMIT = 1_000_000


def _files_root(snapshot: Snapshot) -> Path:
    """Where a snapshot's file contents live (a problem's seed directory is its own root)."""
    files = snapshot.files_dir
    return files if files.is_dir() else snapshot.path


def _text(path: Path | None) -> list[str] | None:
    if path is None:
        return []
    try:
        if path.is_symlink() or path.stat().st_size > TEXT_LIMIT:
            return None
        return path.read_text(encoding="utf-8").splitlines(keepends=True)
    except (UnicodeDecodeError, OSError):
        return None


def diff_record(base: str, before: Snapshot | None, after: Snapshot) -> DiffRecord:
    """Compare ``after`` with ``before`` (``None``: an empty workspace)."""
    from agentrig.workspace import diff_manifests

    changes = diff_manifests(before.manifest if before is not None else None, after.manifest)
    old = before.manifest.by_path() if before is not None else {}
    new = after.manifest.by_path()
    record = DiffRecord(
        base=base,
        added=[FileChange(path=p, new_size=new[p].size) for p in changes.added],
        modified=[FileChange(path=p, old_size=old[p].size, new_size=new[p].size) for p in changes.modified],
        deleted=[FileChange(path=p, old_size=old[p].size) for p in changes.deleted],
    )
    pieces: list[str] = []
    size = 0
    for path in sorted(changes.added + changes.modified + changes.deleted):
        old_lines = _text(_files_root(before) / path) if before is not None and path in old else []
        new_lines = _text(_files_root(after) / path) if path in new else []
        if old_lines is None or new_lines is None:
            piece = f"Binary or large file {quote_path(path)} differs\n"
        else:
            piece = "".join(
                difflib.unified_diff(
                    old_lines,
                    new_lines,
                    fromfile=quote_path(f"a/{path}") if path in old else "/dev/null",
                    tofile=quote_path(f"b/{path}") if path in new else "/dev/null",
                )
            )
            if piece and not piece.endswith("\n"):
                piece += "\n\\ No newline at end of file\n"
        if size + len(piece) > PATCH_LIMIT:
            record.patch_truncated = True
            break
        pieces.append(piece)
        size += len(piece)
    record.patch = "".join(pieces)
    return record
