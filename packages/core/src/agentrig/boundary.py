"""The trust boundary's checks, in one place: names, paths that stay inside their place, the one
guarded delete, and bounded reads of untrusted files.

Problem and task files, run directories read back and model output are untrusted (see
``docs/security.md``). Whatever of theirs becomes a file name or a path goes through here:

- :func:`check_name` for a name that becomes one path component (a problem, a checkpoint, an
  attempt): letters, digits, ``_``, ``-`` and inner dots, never ``.`` or ``..``, at most
  :data:`NAME_MAX_LENGTH` characters;
- :func:`resolve_inside` for a relative path from an untrusted file: it must resolve (symbolic
  links included) inside its root;
- :func:`guard` / :func:`remove` for what the run machinery writes and deletes: the path must be
  strictly inside the root it belongs to (a second line of defence behind the name checks);
- :func:`read_capped` for a file whose size an attacker chooses;
- :func:`shorten` for an error message that quotes untrusted input.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

#: The longest name accepted for a problem, checkpoint or attempt (one path component).
NAME_MAX_LENGTH = 128
_NAME = re.compile(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\Z")
NAME_RULE = f"letters, digits, '_', '-' and inner dots; not '.' or '..'; at most {NAME_MAX_LENGTH} characters"
#: Characters of untrusted input quoted in an error message, at most.
QUOTE_MAX = 120


class BoundaryError(ValueError):
    """A name or path from untrusted input would leave its place; the message is one line naming it."""


def shorten(value: object, limit: int = QUOTE_MAX) -> str:
    """``repr``-free, one-line, bounded rendering of untrusted ``value`` for an error message."""
    text = value if isinstance(value, str) else repr(value)
    text = text.encode("unicode_escape", "backslashreplace").decode("ascii") if not text.isprintable() else text
    if len(text) > limit:
        text = f"{text[:limit]}... ({len(text)} characters)"
    return text


def is_safe_name(name: object) -> bool:
    """Whether ``name`` may be one path component under a directory of ours (see :data:`NAME_RULE`)."""
    return isinstance(name, str) and len(name) <= NAME_MAX_LENGTH and _NAME.match(name) is not None


def check_name(name: object, where: str) -> str:
    """``name`` when :func:`is_safe_name`; else :class:`BoundaryError` ``"{where}: '<name>' is not a valid name (...)"``."""
    if is_safe_name(name):
        return name  # type: ignore[return-value]
    raise BoundaryError(f"{where}: '{shorten(name)}' is not a valid name ({NAME_RULE})")


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def is_inside(root: Path, path: Path, *, strict: bool = True) -> bool:
    """Whether ``path`` resolves (symbolic links followed) inside ``root``; ``strict``: not ``root`` itself."""
    real_root, real = _real(root), _real(path)
    if real == real_root:
        return not strict
    return real_root in real.parents


def resolve_inside(root: Path, relative: str, where: str, *, allow_root: bool = False) -> Path:
    """The path ``relative`` names under ``root``, resolved; :class:`BoundaryError` when it is absolute,
    or it (or a symbolic link on its way) leads outside ``root`` (``allow_root``: ``root`` itself is fine).

    ``where`` names the file and field it came from (``problem.yaml: checkpoints[0].prompt``).
    """
    if not isinstance(relative, str) or "\x00" in relative:
        raise BoundaryError(f"{where}: '{shorten(relative)}' is not a path")
    if os.path.isabs(relative):
        raise BoundaryError(f"{where}: '{shorten(relative)}' is an absolute path; paths are relative to {root}")
    candidate = Path(root) / relative
    if not is_inside(root, candidate, strict=not allow_root):
        real = _real(candidate)
        how = "through a symbolic link " if real != Path(os.path.normpath(candidate)) else ""
        raise BoundaryError(f"{where}: '{shorten(relative)}' leads {how}outside {root}")
    return _real(candidate)


def guard(root: Path, path: Path, action: str = "write") -> Path:
    """``path`` when it lies strictly inside ``root`` (its parent directories resolved, the last
    component not followed, so a symbolic link there is itself the target); else :class:`BoundaryError`.

    Every write and delete of the run machinery passes through this check.
    """
    path = Path(path)
    name = path.name
    parent = _real(path.parent) if name not in ("", ".", "..") else None
    real_root = _real(root)
    if parent is None or not (parent == real_root or real_root in parent.parents):
        raise BoundaryError(f"refusing to {action} '{shorten(str(path))}': it is not inside {root}")
    return parent / name


def remove(root: Path, path: Path) -> None:
    """Delete ``path`` (a file, a symbolic link, or a whole directory tree), which must be strictly inside
    ``root`` (:func:`guard`); a symbolic link is removed, never followed. Missing is fine."""
    target = guard(root, path, "delete")
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        target.unlink(missing_ok=True)
    elif target.is_dir():
        shutil.rmtree(target)


def read_capped(path: Path, limit: int, what: str = "file") -> bytes:
    """The first bytes of ``path``, at most ``limit``; :class:`BoundaryError` naming the file when it is larger."""
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise BoundaryError(f"{path}: {what} is larger than {_size(limit)}; not read")
    return data


def _size(count: int) -> str:
    for unit, factor in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if count >= factor:
            return f"{count / factor:g} {unit}"
    return f"{count} bytes"


def positive_finite(value: float, what: str) -> float:
    """``value`` when it is a finite number above zero (a time limit, say); else :class:`BoundaryError`
    ``"{what} nan: must be a finite number above 0"``: ``nan`` and ``inf`` would disable the limit."""
    import math

    if not math.isfinite(value) or value <= 0:
        raise BoundaryError(f"{what} {shorten(value)}: must be a finite number above 0")
    return value
