"""The Python sources of a snapshot, read as untrusted input: symbolic links never followed, sizes capped."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

from agentrig.metrics.interface import SnapshotSources, SourceFile
from agentrig.pathnames import escape_undecodable

#: Directory and file names never measured: environments, caches and VCS data (SlopCodeBench leaves the same out).
EXCLUDED = ("__pycache__", "*.pyc", "venv", ".venv", "virtualenv", ".virtualenv", ".git", "node_modules", ".tox", ".nox")
#: A file larger than this is not read (recorded as skipped).
MAX_FILE_BYTES = 2_000_000
#: At most this many files are read from one snapshot (the rest recorded as skipped).
MAX_FILES = 5_000


def _excluded(name: str) -> bool:
    return any(fnmatch.fnmatch(name, pattern) for pattern in EXCLUDED)


def _python_paths(root: Path) -> list[str]:
    found: list[str] = []
    for directory, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not _excluded(d))
        base = Path(directory)
        for name in files:
            path = base / name
            if name.endswith(".py") and not _excluded(name) and not path.is_symlink() and path.is_file():
                found.append(path.relative_to(root).as_posix())
    # a module whose path is not UTF-8 cannot be imported, nor named in quality.json: not measured
    found = [rel for rel in found if escape_undecodable(rel) == rel]
    return sorted(found)


def read_sources(root: Path, previous: SnapshotSources | None = None) -> SnapshotSources:
    """The ``.py`` files under ``root`` (a snapshot directory), parsed once; ``previous``: the
    previous checkpoint's sources, handed to metrics that compare."""
    sources = SnapshotSources(root=root, files=[], previous=previous)
    if not root.is_dir():
        return sources
    for index, relative in enumerate(_python_paths(root)):
        path = root / relative
        if index >= MAX_FILES or path.stat().st_size > MAX_FILE_BYTES:
            sources.skipped.append(relative)
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            sources.unparsable.append(relative)
            continue
        source = SourceFile(path=relative, absolute=path, text=text)
        if source.tree is None:
            sources.unparsable.append(relative)
        else:
            sources.files.append(source)
    return sources
