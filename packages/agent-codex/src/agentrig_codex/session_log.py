"""Reading the Codex CLI's session logs (``$CODEX_HOME/sessions/**/rollout-*.jsonl``) as they grow."""

from __future__ import annotations

from pathlib import Path

from agentrig.agents.cli_log import LogTail


class SessionLogTail(LogTail):
    """New complete lines of every session log under ``sessions_dir`` since :meth:`mark` (see :class:`LogTail`)."""

    def __init__(self, sessions_dir: Path) -> None:
        super().__init__(sessions_dir, "rollout-*.jsonl")

    @property
    def sessions_dir(self) -> Path:
        """The directory the CLI writes its session logs under."""
        return self.directory

    def find(self, thread_id: str) -> Path | None:
        """The log of thread ``thread_id`` (its file name ends with the id)."""
        for path in self.logs():
            if path.stem.endswith(thread_id):
                return path
        return None
