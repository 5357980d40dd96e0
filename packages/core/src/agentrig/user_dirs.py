"""Where agentrig keeps what it can make again (the model-call cache, the viewer's compiled templates)."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/agentrig`` (``~/.cache/agentrig`` when unset); ``~/Library/Caches/agentrig`` on
    macOS and ``%LOCALAPPDATA%/agentrig`` on Windows."""
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        base = Path(os.environ["LOCALAPPDATA"])
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "agentrig"
