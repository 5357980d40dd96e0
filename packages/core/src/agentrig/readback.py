"""Limits on what agentrig copies back from a container or a workspace into the run directory.

A task's verifier, its image or the agent decides how many files there are and how large: a
Harbor ``tests/test.sh`` writing 250 files of 8 MB into ``/logs/verifier`` once took agentrig to
2.1 GB of memory and 2 GB of run directory. Every copy back (a Harbor verifier's and oracle's
logs, a Harbor image's working directory seeding the workspace, each checkpoint's workspace
snapshot) takes files in name order until :attr:`ReadbackLimits.max_files` files or
:attr:`ReadbackLimits.max_bytes` bytes are reached; the rest is left out, said in one line that is
logged and recorded (``evaluation.json``'s ``left_out``, the snapshot manifest's ``left_out``).
``-c readback.max_files=N`` and ``-c readback.max_bytes=N`` change the limits of a run.
"""

from __future__ import annotations

import logging

from pydantic import BaseModel, ConfigDict, Field

from agentrig.boundary import size_text

#: Files copied back by one copy, at most (``-c readback.max_files``).
DEFAULT_MAX_FILES = 10_000
#: Bytes copied back by one copy, at most (``-c readback.max_bytes``): 1 GiB.
DEFAULT_MAX_BYTES = 1 << 30

log = logging.getLogger(__name__)


class ReadbackLimits(BaseModel):
    """``-c readback.KEY=VALUE``: how much one copy back from a container or workspace may hold."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_files: int = Field(default=DEFAULT_MAX_FILES, gt=0, description="Files one copy back takes, at most.")
    max_bytes: int = Field(default=DEFAULT_MAX_BYTES, gt=0, description="Bytes one copy back takes, at most.")


class ReadbackBudget:
    """One copy's count of files and bytes against its limits, and what it left out."""

    def __init__(self, limits: ReadbackLimits | None, what: str) -> None:
        """Count against ``limits`` (the defaults when ``None``); ``what`` names the copy in the line."""
        self.limits = limits or ReadbackLimits()
        self.what = what
        self.files = 0
        self.bytes = 0
        self.skipped_files = 0
        self.skipped_bytes = 0

    def take(self, size: int) -> bool:
        """Whether a file of ``size`` bytes fits (then it is counted); one that does not is counted as left out."""
        if self.files >= self.limits.max_files or self.bytes + size > self.limits.max_bytes:
            self.skipped_files += 1
            self.skipped_bytes += size
            return False
        self.files += 1
        self.bytes += size
        return True

    def left_out(self) -> str | None:
        """One line saying what was left out (logged once when first asked), or ``None``."""
        if not self.skipped_files:
            return None
        return (
            f"{self.what}: {self.skipped_files} file{'s' if self.skipped_files != 1 else ''} ({size_text(self.skipped_bytes)}) "
            f"left out beyond the read-back limits ({self.limits.max_files} files, {size_text(self.limits.max_bytes)}; "
            "-c readback.max_files=N, readback.max_bytes=N)"
        )

    def report(self) -> str | None:
        """:meth:`left_out`, logged as a warning when there is something to say."""
        line = self.left_out()
        if line is not None:
            log.warning("%s", line)
        return line


__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_MAX_FILES", "ReadbackBudget", "ReadbackLimits"]
