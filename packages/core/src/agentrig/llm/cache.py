"""The model-call cache: a request seen before is answered from disk instead of the provider.

One file per entry, ``<dir>/<key[:2]>/<key>.json``, where the key is the SHA-256 of a canonical
JSON of the request (provider, model, and the request body the SDK would send: messages, tools,
parameters, a seed given in ``extra_body``), with the run's own paths (its workspace, session, home
and run directory) replaced by placeholders, in the key and in the stored reply, which a hit gets back
as the current run's paths (:mod:`agentrig.llm.run_paths`). The credential, headers and endpoint are never part
of the key, and an entry whose text would hold the credential is not written: an entry answers the same
provider, model and request on any endpoint (a local server serving a model under a hosted model's name
included), so give such a server's runs a cache directory of their own (``--cache=DIR``). The cache's
directories are made 0700 and its entries 0600, whatever the umask. Entries are written
atomically (:func:`agentrig.atomic.write_bytes_atomic`), so concurrent writers (``--jobs``,
Ray workers) and readers never see a torn entry; an unreadable entry is ignored with one warning
and replaced. Entry names are hashes only, and nothing read from the directory can lead outside
it: entries are opened without following a symbolic link (:func:`agentrig.boundary.read_under`)
and written and deleted through :func:`agentrig.boundary.guard`.

A hit is recorded with its original usage, ``cost`` 0, ``attempts`` 0 and ``cache_hit`` true
(:class:`~agentrig.llm.interface.ChatResponse`, and so the trajectory's ``LLMCall``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

if TYPE_CHECKING:
    from agentrig.llm.interface import ChatResponse
    from agentrig.llm.run_paths import RunPaths

CachePolicy = Literal["read", "write", "readwrite"]
#: Bumped when the key's recipe or the entry's form changes: older entries then simply miss.
#: 2: the run's own paths are placeholders in the key and the stored reply (:mod:`agentrig.llm.run_paths`).
FORMAT: Final = 2
#: The largest entry read back (a bigger file is treated as unreadable).
ENTRY_LIMIT = 64 << 20
#: Entries and the directories made for them are private to their owner: a reply may hold what a tool printed.
ENTRY_MODE: Final = 0o600
DIR_MODE: Final = 0o700
_KEY = re.compile(r"[0-9a-f]{64}")
_SHARD = re.compile(r"[0-9a-f]{2}")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw]?)")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


class ModelCacheWarning(UserWarning):
    """An entry of the model-call cache that could not be read or written (the call went on)."""


class CacheError(ValueError):
    """A cache setting that cannot work (one line naming it)."""


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/agentrig/model-calls`` (``~/.cache`` when unset); ``~/Library/Caches`` on
    macOS and ``%LOCALAPPDATA%`` on Windows."""
    from agentrig.user_dirs import user_cache_dir

    return user_cache_dir() / "model-calls"


def parse_duration(text: str, what: str = "--cache-ttl") -> float:
    """Seconds from ``90``, ``45s``, ``30m``, ``12h``, ``7d`` or ``2w``; :class:`CacheError` otherwise."""
    match = _DURATION.fullmatch(text.strip().lower())
    if not match or float(match.group(1)) <= 0:
        raise CacheError(f"{what} {text}: a positive duration such as 3600, 30m, 12h or 7d")
    return float(match.group(1)) * _UNITS[match.group(2)]


class CacheEntry(BaseModel):
    """One cached reply as stored on disk (``<key[:2]>/<key>.json``)."""

    model_config = ConfigDict(extra="forbid")

    format: Literal[2] = FORMAT
    key: str
    provider: str
    model: str
    #: When the reply was received (seconds since the epoch); ``--cache-ttl`` counts from here.
    created: float
    #: The reply as the provider gave it: original usage, cost, latency and attempts.
    response: dict[str, Any]


class ModelCallCache(BaseModel):
    """Where cached replies live and how they are used; frozen and picklable (it rides in the run plan)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    directory: Path = Field(default_factory=default_cache_dir)
    #: ``read``: answer from the cache, never store; ``write``: always call, store the reply; ``readwrite``: both.
    policy: CachePolicy = "readwrite"
    #: Seconds an entry is good for (``None``: for ever); an older one is ignored and, when writing, replaced.
    ttl: float | None = Field(default=None, gt=0)

    @property
    def reads(self) -> bool:
        """Whether a hit answers the call."""
        return self.policy in ("read", "readwrite")

    @property
    def writes(self) -> bool:
        """Whether a reply from the provider is stored."""
        return self.policy in ("write", "readwrite")

    def key(self, provider: str, model: str, request: dict[str, Any]) -> str:
        """The entry's name: SHA-256 of the canonical JSON of (format, provider, model, request body)."""
        canonical = json.dumps(
            {"format": FORMAT, "provider": provider, "model": model, "request": request},
            sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str,
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def _relative(self, key: str) -> str:
        if not _KEY.fullmatch(key):
            raise ValueError(f"not a cache key: {key!r}")
        return f"{key[:2]}/{key}.json"

    def get(self, key: str, now: float | None = None, *, paths: RunPaths | None = None) -> ChatResponse | None:
        """The cached reply for ``key``: ``None`` when there is none, it expired, or it is unreadable
        (then one warning). With ``paths``, the placeholders of the stored reply are this run's paths."""
        from agentrig.boundary import BoundaryError, read_under
        from agentrig.llm.interface import ChatResponse

        relative = self._relative(key)
        try:
            data = read_under(self.directory, relative, "model-call cache entry", ENTRY_LIMIT)
        except FileNotFoundError:
            return None
        except (BoundaryError, OSError) as exc:
            _warn_once(self.directory / relative, str(exc))
            return None
        try:
            entry = CacheEntry.model_validate_json(data)
            if entry.key != key:
                raise ValueError("its key does not match its name")
            response = ChatResponse.model_validate(paths.show(entry.response) if paths else entry.response)
        except (ValidationError, ValueError) as exc:
            _warn_once(self.directory / relative, _first_line(exc))
            return None
        if self.ttl is not None and (now if now is not None else time.time()) - entry.created > self.ttl:
            return None
        return response

    def put(
        self, key: str, provider: str, response: ChatResponse, secrets: Sequence[str] = (), *, paths: RunPaths | None = None
    ) -> bool:
        """Store ``response`` under ``key`` atomically; ``False`` (one warning) when it cannot be written
        or would hold one of ``secrets``. With ``paths``, the run's paths in the reply are stored as placeholders."""
        from agentrig.atomic import write_bytes_atomic
        from agentrig.boundary import BoundaryError, guard

        path = self.directory / self._relative(key)
        entry = CacheEntry(key=key, provider=provider, model=response.model, created=time.time(),
                           response=_hidden(response.model_dump(mode="json", exclude={"cache_hit"}), paths))
        data = entry.model_dump_json().encode("utf-8")
        if any(secret and secret.encode("utf-8") in data for secret in secrets):
            _warn_once(path, "the reply holds the credential; not cached")
            return False
        try:
            _private_dir(self.directory)
            _private_dir(self.directory / key[:2])
            write_bytes_atomic(guard(self.directory, path), data, mode=ENTRY_MODE)
        except (BoundaryError, OSError) as exc:
            _warn_once(path, f"not written: {exc}")
            return False
        with _warned_lock:  # a replaced entry that breaks again is said again
            _warned.discard(str(path))
        return True


class CacheSummary(BaseModel):
    """What ``agentrig cache list`` shows."""

    model_config = ConfigDict(extra="forbid")

    directory: str
    entries: int = 0
    bytes: int = 0
    #: Modification times (seconds since the epoch) of the oldest and newest entry; ``None`` when empty.
    oldest: float | None = None
    newest: float | None = None


def iter_entries(directory: Path) -> Iterator[tuple[Path, os.stat_result]]:
    """Every entry file of the cache at ``directory`` with its ``lstat``: only ``xx/<64 hex>.json``
    regular files; links and anything else are never followed nor listed."""
    try:
        shards = list(os.scandir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return
    for shard in shards:
        if not (_SHARD.fullmatch(shard.name) and shard.is_dir(follow_symlinks=False)):
            continue
        for item in os.scandir(shard.path):
            name = item.name
            if name.endswith(".json") and _KEY.fullmatch(name[:-5]) and name.startswith(shard.name) \
                    and item.is_file(follow_symlinks=False):
                yield Path(item.path), item.stat(follow_symlinks=False)


def summarize(directory: Path) -> CacheSummary:
    """Entries, bytes and the oldest and newest entry of the cache at ``directory``."""
    summary = CacheSummary(directory=str(directory))
    for _, info in iter_entries(directory):
        summary.entries += 1
        summary.bytes += info.st_size
        summary.oldest = info.st_mtime if summary.oldest is None else min(summary.oldest, info.st_mtime)
        summary.newest = info.st_mtime if summary.newest is None else max(summary.newest, info.st_mtime)
    return summary


def clear(directory: Path, older_than: float | None = None, now: float | None = None) -> int:
    """Delete the cache's entries (``older_than``: only those written more than that many seconds ago);
    returns how many. Only entry files are deleted, each through :func:`agentrig.boundary.remove`."""
    from agentrig.boundary import remove

    cutoff = None if older_than is None else (now if now is not None else time.time()) - older_than
    removed = 0
    for path, info in list(iter_entries(directory)):
        if cutoff is None or info.st_mtime < cutoff:
            remove(directory, path)
            removed += 1
    return removed


_active: ModelCallCache | None = None
_warned: set[str] = set()
_warned_lock = threading.Lock()


def active_cache() -> ModelCallCache | None:
    """The cache the core's model clients use when their options name none (set by :func:`use_cache`)."""
    return _active


@contextmanager
def use_cache(cache: ModelCallCache | None) -> Iterator[None]:
    """Within the block, the core's model clients in this process use ``cache`` (``None``: none).

    A problem run sets its plan's cache here, in the process that runs it (inline, a ``--jobs``
    worker, a Ray worker), so nothing depends on the dispatcher's state.
    """
    global _active
    previous, _active = _active, cache
    try:
        yield
    finally:
        _active = previous


def _private_dir(path: Path) -> None:
    """``path`` made a directory when it is none, readable by its owner only (an existing one is left as it is)."""
    if not path.is_dir():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.mkdir(mode=DIR_MODE, exist_ok=True)  # 0o700 whatever the umask: the umask only ever removes bits


def _hidden(response: dict[str, Any], paths: RunPaths | None) -> dict[str, Any]:
    hidden: dict[str, Any] = paths.hide(response) if paths else response
    return hidden


def _warn_once(path: Path, reason: str) -> None:
    with _warned_lock:
        if str(path) in _warned:
            return
        _warned.add(str(path))
    warnings.warn(f"model-call cache: {path}: {reason}; ignored", ModelCacheWarning, stacklevel=3)


def _first_line(exc: BaseException) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        return f"not a cache entry ({'.'.join(map(str, first['loc'])) or 'JSON'}: {first['msg']})"
    return f"not a cache entry ({exc})"


__all__ = [
    "CacheEntry", "CacheError", "CachePolicy", "CacheSummary", "ModelCacheWarning", "ModelCallCache",
    "active_cache", "clear", "default_cache_dir", "iter_entries", "parse_duration", "summarize", "use_cache",
]
