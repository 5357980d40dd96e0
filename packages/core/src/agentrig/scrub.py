"""Keeping the secrets agentrig holds out of what a run records.

A :class:`SecretScrubber` holds the values agentrig hands to agents and verifiers as
secrets: the model provider's credential, the MCP servers' ``env`` and ``headers``
values (their ``${VAR}`` resolved), and the variables a task's verifier may take from
the host (``-c verifier.allow_env``). Every agent has one (:attr:`agentrig.Agent.secrets`),
filled when the agent is built and by the runner; whatever the agent's model makes its
tools print (``env``, ``cat`` of a CLI's config file) is replaced by :data:`REDACTED`
in every step it emits (:meth:`agentrig.Agent.emit_step`), in its artifacts directory
and in the checkpoint's other records before they reach disk.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pydantic import BaseModel

    from agentrig.credentials import ProviderCredential

#: What replaces a secret in anything recorded.
REDACTED = "[redacted]"
#: Shorter values are never scrubbed: a placeholder such as ``x`` would erase ordinary text.
MIN_SECRET = 4
_CHUNK = 1 << 20

_ModelT = TypeVar("_ModelT", bound="BaseModel")


class SecretScrubber:
    """The secret values of one agent (or run) and their removal from text, records and files."""

    def __init__(self, values: Iterable[str | ProviderCredential | None] = ()) -> None:
        """A scrubber holding ``values`` (credentials are taken by their secret; empty and short ones are ignored)."""
        self._values: tuple[str, ...] = ()
        self.add(*values)

    def add(self, *values: str | ProviderCredential | None) -> None:
        """Hold ``values`` as secrets too (``None``, empty and shorter than :data:`MIN_SECRET` ignored)."""
        found = set(self._values)
        for value in values:
            text = value if isinstance(value, str) or value is None else value.secret()
            if text and len(text.strip()) >= MIN_SECRET:
                found.add(text)
        self._values = tuple(sorted(found, key=len, reverse=True))  # longest first: a secret holding another goes whole

    @property
    def values(self) -> tuple[str, ...]:
        """The secrets held, longest first."""
        return self._values

    def __bool__(self) -> bool:
        return bool(self._values)

    def text(self, text: str) -> str:
        """``text`` with every secret replaced by :data:`REDACTED`."""
        for value in self._values:
            if value in text:
                text = text.replace(value, REDACTED)
        return text

    def data(self, value: Any) -> Any:
        """``value`` (JSON-like: dicts, lists, strings) with every string scrubbed; the same object when
        nothing changed."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            items = {self.data(k): self.data(v) for k, v in value.items()}
            changed = any(a is not b for a, b in zip(items.values(), value.values(), strict=True)) or list(items) != list(value)
            return items if changed else value
        if isinstance(value, list | tuple):
            scrubbed = [self.data(item) for item in value]
            if any(a is not b for a, b in zip(scrubbed, value, strict=True)):
                return type(value)(scrubbed) if isinstance(value, tuple) else scrubbed
            return value
        return value

    def model(self, record: _ModelT) -> _ModelT:
        """``record`` (a pydantic model: a step, a result) with every secret in its strings replaced; the same
        object when it holds none."""
        if not self._values:
            return record
        dumped = record.model_dump()
        scrubbed = self.data(dumped)
        if scrubbed is dumped:
            return record
        return type(record).model_validate(scrubbed)

    def _needles(self) -> list[bytes]:
        """Each secret as bytes on disk: UTF-8, and as a JSON string escapes it (non-ASCII as ``\\uXXXX``)."""
        needles: set[bytes] = set()
        for value in self._values:
            needles.add(value.encode("utf-8"))
            needles.add(json.dumps(value)[1:-1].encode("ascii"))
            needles.add(json.dumps(value, ensure_ascii=False)[1:-1].encode("utf-8"))
        return sorted(needles, key=len, reverse=True)

    def file(self, path: Path) -> bool:
        """Rewrite the regular file ``path`` without its secrets (atomically, keeping its mode); a link or
        anything else is left alone. Whether it held any."""
        needles = self._needles()
        if not needles:
            return False
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(path, flags)
        except OSError:
            return False
        with os.fdopen(fd, "rb") as source:
            info = os.fstat(source.fileno())
            if not stat.S_ISREG(info.st_mode):
                return False
            return _rewrite(Path(path), source, info.st_mode, needles)

    def tree(self, root: Path) -> int:
        """Scrub every regular file under ``root`` (links are never followed); how many held a secret."""
        if not self._values:
            return 0
        count = 0
        for directory, _dirs, files in os.walk(root, followlinks=False):
            for name in files:
                count += self.file(Path(directory) / name)
        return count


def _rewrite(path: Path, source: Any, mode: int, needles: list[bytes]) -> bool:
    """Stream ``source`` (the open file ``path``) into a sibling without ``needles``; replace ``path`` with it
    when any was found, else drop it."""
    keep = max(len(n) for n in needles) - 1
    marker = REDACTED.encode("ascii")
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    found = replaced = False
    try:
        with os.fdopen(handle, "wb") as out:
            buffer = b""
            while True:
                chunk = source.read(_CHUNK)
                buffer += chunk
                for needle in needles:
                    if needle in buffer:
                        found = True
                        buffer = buffer.replace(needle, marker)
                if not chunk:
                    out.write(buffer)
                    break
                if len(buffer) > keep:  # a secret cut by the chunk's end is still whole in what is kept
                    cut = len(buffer) - keep
                    out.write(buffer[:cut])
                    buffer = buffer[cut:]
        if found:
            os.chmod(temp, stat.S_IMODE(mode))
            os.replace(temp, path)
            replaced = True
    finally:
        if not replaced:
            Path(temp).unlink(missing_ok=True)
    return found


__all__ = ["MIN_SECRET", "REDACTED", "SecretScrubber"]
