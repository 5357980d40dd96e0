"""Reading the log files a CLI agent writes besides its stream (its session logs) as they grow.

Codex logs each model call's usage in ``$CODEX_HOME/sessions/**/rollout-*.jsonl``, the Gemini
CLI in ``$GEMINI_CLI_HOME/.gemini/tmp/*/chats/session-*.jsonl``: records their streams do not
carry, written while the CLI runs. :class:`LogTail` hands over the lines written since a mark.
"""

from __future__ import annotations

import os
from pathlib import Path


class LogTail:
    """New complete lines of every file matching ``pattern`` under ``directory`` (at any depth) since :meth:`mark`.

    Files that existed at :meth:`mark` are read from where they ended then (a resumed session
    appends to its log), new ones from their start. A line not yet ended by a newline is left
    for the next read. Symbolic links are not followed (the directory is the CLI's to write).
    """

    def __init__(self, directory: Path, pattern: str) -> None:
        self.directory = directory
        self.pattern = pattern
        self._offsets: dict[Path, int] = {}

    def logs(self) -> list[Path]:
        """The matching files, in name order."""
        if not self.directory.is_dir():
            return []
        return sorted(p for p in self.directory.rglob(self.pattern) if p.is_file() and not p.is_symlink())

    def mark(self) -> None:
        """Remember where every existing file ends now."""
        self._offsets = {path: path.stat().st_size for path in self.logs()}

    def read_new(self) -> list[str]:
        """The lines written since the last read."""
        lines: list[str] = []
        for path in self.logs():
            offset = self._offsets.get(path, 0)
            try:
                # O_NOFOLLOW: a log swapped for a link after it was listed is not read through it
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
                with os.fdopen(fd, "rb") as handle:
                    handle.seek(offset)
                    data = handle.read()
            except OSError:
                continue
            end = data.rfind(b"\n")
            if end < 0:
                continue
            self._offsets[path] = offset + end + 1
            lines += data[: end + 1].decode("utf-8", "replace").splitlines()
        return lines
