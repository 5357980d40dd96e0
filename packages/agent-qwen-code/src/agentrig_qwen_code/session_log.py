"""Finding the Qwen Code CLI's record of a session (``$QWEN_HOME/projects/<project>/chats/<session id>.jsonl``)."""

from __future__ import annotations

from pathlib import Path


def find_session_log(qwen_home: Path, session_id: str) -> Path | None:
    """The chat log of session ``session_id`` under ``qwen_home`` (one per session; a resumed session
    appends to it); ``None`` when the CLI wrote none (chat recording off, a run that never started)."""
    if not session_id or "/" in session_id or session_id.startswith("."):
        return None
    return next(iter(sorted((qwen_home / "projects").glob(f"*/chats/{session_id}.jsonl"))), None)
