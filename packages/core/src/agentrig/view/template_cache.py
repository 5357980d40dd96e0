"""The report's templates compiled once, not at every start: Jinja's compiled templates kept in the user's
cache directory (``<user cache>/agentrig/templates``, :func:`~agentrig.user_dirs.user_cache_dir`).

Compiling the report's templates took a tenth of a second at every ``agentrig view``. An entry is used only
for the same template source (Jinja checks it), compiled the same way by the same Jinja and Python: how the
environment compiles (:func:`compile_settings`) and Jinja's version are part of its key. A directory that cannot be made, or
that another user or group may write (its entries are code this process runs), is not used; an entry that
cannot be read or written is compiled again, silently.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import jinja2
from jinja2.bccache import Bucket, FileSystemBytecodeCache

from agentrig.user_dirs import user_cache_dir

#: Where the compiled templates live, under the user's cache directory.
TEMPLATES_DIR = "templates"


class TemplateCache(FileSystemBytecodeCache):
    """Jinja's file cache of compiled templates, keyed by ``salt`` too, never failing a page: an entry that
    cannot be read is compiled again, one that cannot be written is not kept."""

    def __init__(self, directory: Path, salt: str) -> None:
        """Entries ``<key>.cache`` in ``directory`` (which must exist)."""
        super().__init__(str(directory), "%s.cache")
        self.salt = f"{salt}|jinja2 {jinja2.__version__}"

    def get_cache_key(self, name: str, filename: str | None = None) -> str:
        """The entry of template ``name`` (read from ``filename``) compiled as :attr:`salt` says."""
        return hashlib.sha1(f"{self.salt}|{name}|{filename}".encode()).hexdigest()

    def load_bytecode(self, bucket: Bucket) -> None:
        """The compiled template when its entry can be read; otherwise it is compiled again."""
        try:
            super().load_bytecode(bucket)
        except Exception:  # a damaged entry (the pickled checksum unreadable): compiled again
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        """Keep the compiled template when the directory can be written (Jinja writes it atomically)."""
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass


def _own_directory(directory: Path) -> bool:
    """Whether ``directory`` is (made if missing) a directory of this user that no group or other user may write."""
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(directory)
    except OSError:
        return False
    owner = getattr(os, "getuid", None)
    mine = owner is None or info.st_uid == owner()
    return stat.S_ISDIR(info.st_mode) and mine and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def compile_settings(environment: jinja2.Environment, autoescaped: tuple[str, ...]) -> str:
    """What a template compiled by ``environment`` depends on besides its source: the syntax, whitespace and
    optimizer settings, the extensions, and the template extensions it escapes (``autoescaped``, which the
    environment holds only as a function)."""
    settings = (
        environment.block_start_string, environment.block_end_string, environment.variable_start_string,
        environment.variable_end_string, environment.comment_start_string, environment.comment_end_string,
        environment.line_statement_prefix, environment.line_comment_prefix, environment.trim_blocks,
        environment.lstrip_blocks, environment.newline_sequence, environment.keep_trailing_newline,
        environment.optimized, sorted(environment.extensions), autoescaped,
    )
    return repr(settings)


def template_cache(environment: jinja2.Environment, autoescaped: tuple[str, ...]) -> TemplateCache | None:
    """The cache of the templates ``environment`` compiles (:func:`compile_settings`); ``None`` when the user's
    cache directory cannot hold it (the templates are then compiled at every start)."""
    try:
        directory = user_cache_dir() / TEMPLATES_DIR
    except RuntimeError:  # no home directory to be found (HOME unset, the user unknown)
        return None
    return TemplateCache(directory, compile_settings(environment, autoescaped)) if _own_directory(directory) else None
