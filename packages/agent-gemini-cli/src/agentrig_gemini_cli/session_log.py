"""Reading the Gemini CLI's session logs (``$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-*.jsonl``) as they grow."""

from __future__ import annotations

import json
from pathlib import Path

from agentrig.agents.cli_log import LogTail


class ChatLogTail(LogTail):
    """New complete lines of every session log under the CLI's ``tmp`` directory since :meth:`mark`.

    Subagents' logs (in a directory named after their parent's session) are read too: their
    model calls are the run's.
    """

    def __init__(self, tmp_dir: Path) -> None:
        super().__init__(tmp_dir, "session-*.jsonl")

    def find(self, session_id: str) -> Path | None:
        """The main log of session ``session_id``: its name ends with the id's first part, its first
        record names the session. A resumed session appends to its first log (the longest one)."""
        found: list[Path] = []
        for path in self.logs():
            if not path.stem.endswith(session_id[:8]):
                continue
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    header = json.loads(handle.readline() or "{}")
            except (OSError, json.JSONDecodeError):
                continue
            if isinstance(header, dict) and header.get("sessionId") == session_id and header.get("kind", "main") == "main":
                found.append(path)
        return max(found, key=lambda p: p.stat().st_size, default=None)
