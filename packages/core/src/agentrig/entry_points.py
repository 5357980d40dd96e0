"""Finding the installed entry points of a group, fast.

``importlib.metadata`` answers the same question, but importing it pulls in
the ``email`` package and its dependencies, and reading a distribution's name
parses its whole METADATA file: together more than `agentrig agents list` may
take. This scanner reads what it needs straight from the ``*.dist-info`` (and
``*.egg-info``) directories on ``sys.path``, first distribution of a name
winning as in ``importlib.metadata``. When ``sys.path`` holds something that
is not a directory (a zip of packages), it defers to ``importlib.metadata``.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from importlib import metadata

_NORMALIZE = re.compile(r"[-_.]+")


@dataclass(frozen=True)
class DeclaredEntryPoint:
    """One entry point with the name and version of the distribution declaring it."""

    name: str
    value: str
    distribution: str | None = None
    version: str | None = None

    def load(self) -> Any:
        """Import the module (and attribute, for ``module:attr``) the entry point names."""
        module_name, _, attr = self.value.partition(":")
        obj: Any = importlib.import_module(module_name.strip())
        for part in filter(None, attr.strip().split(".")):
            obj = getattr(obj, part)
        return obj


def installed_entry_points(group: str, path: Sequence[str] | None = None) -> list[DeclaredEntryPoint]:
    """The entry points of ``group`` declared by the distributions on ``path`` (``sys.path``)."""
    entries = list(sys.path if path is None else path)
    if any(entry and os.path.isfile(entry) for entry in entries):
        from importlib import metadata

        return from_metadata(metadata.entry_points(group=group))
    found: list[DeclaredEntryPoint] = []
    seen: set[str] = set()
    for entry in entries:
        directory = entry or "."
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        for name in names:
            stem, dot, suffix = name.rpartition(".")
            if not dot or suffix not in ("dist-info", "egg-info"):
                continue
            key = _NORMALIZE.sub("_", stem.split("-", 1)[0]).lower()
            if key in seen:
                continue
            info = os.path.join(directory, name)
            if not os.path.isdir(info):
                continue
            seen.add(key)
            declared = _read_group(os.path.join(info, "entry_points.txt"), group)
            if declared:
                dist, version = _name_and_version(info)
                found += [DeclaredEntryPoint(n, v, dist, version) for n, v in declared]
    return found


def from_metadata(eps: Iterable[metadata.EntryPoint]) -> list[DeclaredEntryPoint]:
    """``importlib.metadata`` entry points as :class:`DeclaredEntryPoint` (tests, zipped paths)."""
    out = []
    for ep in eps:
        dist = getattr(ep, "dist", None)
        text = (dist.read_text("METADATA") or dist.read_text("PKG-INFO") or "") if dist is not None else ""
        out.append(DeclaredEntryPoint(ep.name, ep.value, *_header(text)))
    return out


def _read_group(path: str, group: str) -> list[tuple[str, str]]:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        return []
    declared: list[tuple[str, str]] = []
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif section == group and "=" in line:
            name, _, value = line.partition("=")
            declared.append((name.strip(), value.strip()))
    return declared


def _name_and_version(info: str) -> tuple[str | None, str | None]:
    for filename in ("METADATA", "PKG-INFO"):
        try:
            with open(os.path.join(info, filename), encoding="utf-8") as handle:
                return _header(handle.read(8192))
        except OSError:
            continue
    return None, None


def _header(text: str) -> tuple[str | None, str | None]:
    """``Name`` and ``Version`` from a METADATA header block, without an email parser."""
    name = version = None
    for line in text.splitlines():
        if not line:
            break  # the header block ends at the first blank line
        key, _, value = line.partition(":")
        if key == "Name":
            name = value.strip()
        elif key == "Version":
            version = value.strip()
        if name and version:
            break
    return name, version
