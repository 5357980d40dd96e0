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
- :func:`check_tree` for a directory agentrig copies: no symbolic link in it may lead out;
- :func:`read_capped`, :func:`read_problem_file` (capped by ``AGENTRIG_MAX_PROBLEM_FILE_BYTES``) for a
  file whose size an attacker chooses; :func:`check_nesting` for what it parses into (YAML is read
  through :func:`agentrig.yaml_loader.load_yaml`, which counts the depth before it builds);
- :func:`read_under` for a report the agent's workspace holds: opened one component at a time, no
  symbolic link followed;
- :func:`read_inside` for a file of a directory read back (a run directory another person sent):
  never through a symbolic link that leaves it;
- :func:`shorten` for an error message that quotes untrusted input.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import stat
from pathlib import Path
from typing import Annotated, Any, TypeGuard

from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

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


def is_safe_name(name: object) -> TypeGuard[str]:
    """Whether ``name`` may be one path component under a directory of ours (see :data:`NAME_RULE`)."""
    return isinstance(name, str) and len(name) <= NAME_MAX_LENGTH and _NAME.match(name) is not None


def check_name(name: object, where: str) -> str:
    """``name`` when :func:`is_safe_name`; else :class:`BoundaryError` ``"{where}: '<name>' is not a valid name (...)"``."""
    if is_safe_name(name):
        return name
    raise BoundaryError(f"{where}: '{shorten(name)}' is not a valid name ({NAME_RULE})")


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def is_inside(root: Path, path: Path, *, strict: bool = True) -> bool:
    """Whether ``path`` resolves (symbolic links followed) inside ``root``; ``strict``: not ``root`` itself."""
    return _real_inside(os.path.realpath(root), os.path.realpath(path), strict=strict)


def _real_inside(real_root: str, real: str, *, strict: bool = True) -> bool:
    """:func:`is_inside` of two paths already resolved (``os.path.realpath``: absolute, normalized)."""
    if real == real_root:
        return not strict
    return real.startswith(real_root if real_root.endswith(os.sep) else real_root + os.sep)


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
        raise BoundaryError(f"{path}: {what} is larger than {size_text(limit)}; not read")
    return data


def size_text(count: int) -> str:
    """``count`` bytes for a person: ``512 bytes``, ``8 MB``, ``1.5 GB`` (powers of 1024)."""
    for unit, factor in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if count >= factor:
            return f"{count / factor:g} {unit}"
    return f"{count} bytes"


#: The longest time limit accepted anywhere (a problem's, a task's, a config's, a command-line
#: option's), in seconds: 7 days. ``inf`` or ``1e300`` would disable a limit or overflow the clocks.
TIMEOUT_MAX_SECONDS = 7 * 24 * 3600
TIMEOUT_RULE = f"a finite number above 0, at most {TIMEOUT_MAX_SECONDS} seconds (7 days)"



def _seconds(value: float) -> float:
    import math

    if not math.isfinite(value) or value <= 0 or value > TIMEOUT_MAX_SECONDS:
        raise PydanticCustomError("seconds", "{value} is not a time limit: must be {rule}", {"value": shorten(value), "rule": TIMEOUT_RULE})
    return value


def _duration(value: float) -> float:
    import math

    if not math.isfinite(value) or value < 0 or value > TIMEOUT_MAX_SECONDS:
        rule = f"a finite number from 0 to {TIMEOUT_MAX_SECONDS} seconds (7 days)"
        raise PydanticCustomError("seconds", "{value} is not a duration: must be {rule}", {"value": shorten(value), "rule": rule})
    return value


#: A time limit in a model read from a file or a config: :data:`TIMEOUT_RULE`, else a validation error saying so.
Seconds = Annotated[float, AfterValidator(_seconds)]
#: A wait or period that may be 0 (a healthcheck's interval), else as :data:`Seconds`.
Duration = Annotated[float, AfterValidator(_duration)]
#: :data:`Seconds` as a whole number.
WholeSeconds = Annotated[int, AfterValidator(_seconds)]


def positive_finite(value: float, what: str) -> float:
    """``value`` when it is a time limit (:data:`TIMEOUT_RULE`); else :class:`BoundaryError`
    ``"{what} nan: must be a finite number ..."``: ``nan`` and ``inf`` would disable the limit."""
    import math

    if not math.isfinite(value) or value <= 0 or value > TIMEOUT_MAX_SECONDS:
        raise BoundaryError(f"{what} {shorten(value)}: must be {TIMEOUT_RULE}")
    return value


# -- problem files: sizes, nesting, relative paths and the trees agentrig copies -----------------

#: The largest problem or task file read (``problem.yaml``, ``config.yaml``, ``task.toml``, a prompt), in bytes.
PROBLEM_FILE_MAX_BYTES = 10 * 1024 * 1024
#: The environment variable that overrides :data:`PROBLEM_FILE_MAX_BYTES` (a number of bytes).
PROBLEM_FILE_LIMIT_ENV = "AGENTRIG_MAX_PROBLEM_FILE_BYTES"
#: The deepest nesting of lists and mappings accepted in a problem file (YAML, JSON, TOML) and in
#: every YAML file agentrig reads (a model catalog, an agent config).
NESTING_MAX = 100
#: The largest test report (pytest JSON, JUnit XML) read back after a test, in bytes.
REPORT_MAX_BYTES = 64 * 1024 * 1024
#: The environment variable that overrides :data:`REPORT_MAX_BYTES`.
REPORT_LIMIT_ENV = "AGENTRIG_MAX_REPORT_BYTES"
#: The largest reward file (``reward.txt``, ``reward.json``) parsed, in bytes: a reward is a number or a few.
REWARD_MAX_BYTES = 64 * 1024


def _limit_from_env(variable: str, default: int) -> int:
    raw = os.environ.get(variable)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        value = 0
    if value <= 0:
        raise BoundaryError(f"{variable}={shorten(raw, 40)}: expected a positive number of bytes")
    return value


def problem_file_limit() -> int:
    """The size cap of a problem file: :data:`PROBLEM_FILE_LIMIT_ENV` when set, else :data:`PROBLEM_FILE_MAX_BYTES`."""
    return _limit_from_env(PROBLEM_FILE_LIMIT_ENV, PROBLEM_FILE_MAX_BYTES)


def report_limit() -> int:
    """The size cap of a test report: :data:`REPORT_LIMIT_ENV` when set, else :data:`REPORT_MAX_BYTES`."""
    return _limit_from_env(REPORT_LIMIT_ENV, REPORT_MAX_BYTES)


def read_problem_file(path: Path, what: str = "problem file") -> bytes:
    """The bytes of the regular file ``path`` when it is at most :func:`problem_file_limit` bytes;
    else :class:`BoundaryError` naming the file, the limit and :data:`PROBLEM_FILE_LIMIT_ENV`.

    A FIFO, device or directory is refused before it is opened for reading (a FIFO would block).
    ``OSError`` (missing, unreadable) passes through.
    """
    limit = problem_file_limit()
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise BoundaryError(f"{path}: {what} is not a regular file; not read")
        if info.st_size > limit:
            raise BoundaryError(_too_large(path, what, info.st_size, limit))
        chunks: list[bytes] = []
        size = 0
        while size <= limit and (chunk := os.read(fd, min(1 << 20, limit + 1 - size))):
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit:
        raise BoundaryError(_too_large(path, what, None, limit))
    return b"".join(chunks)


def _too_large(path: Path, what: str, size: int | None, limit: int) -> str:
    actual = f" ({size_text(size)})" if size is not None else ""
    return (
        f"{path}: {what} is larger than {size_text(limit)}{actual}; not read"
        f" (raise the limit with {PROBLEM_FILE_LIMIT_ENV}=BYTES)"
    )


def read_problem_text(path: Path, what: str = "problem file") -> str:
    """:func:`read_problem_file` decoded as UTF-8 (``UnicodeDecodeError`` passes through)."""
    return read_problem_file(path, what).decode("utf-8")


def check_nesting(data: object, where: str, limit: int = NESTING_MAX) -> object:
    """``data`` when its lists and mappings nest at most ``limit`` deep; else :class:`BoundaryError`
    ``"{where}: nested more than {limit} levels deep; not read"``. Iterative: any depth is safe."""
    stack: list[tuple[object, int]] = [(data, 0)]
    seen: dict[int, int] = {}  # a YAML alias shares one object many times: walk it once per depth
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list, tuple)):
            if seen.get(id(item), -1) >= depth:
                continue
            seen[id(item)] = depth
        if isinstance(item, dict):
            children: list[Any] | tuple[Any, ...] = list(item.values())
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth + 1 > limit:
            raise BoundaryError(nesting_message(where, limit))
        stack.extend((child, depth + 1) for child in children)
    return data


def nesting_message(where: str, limit: int = NESTING_MAX, line: int | None = None) -> str:
    """The one line for a file nested deeper than ``limit`` (or than its parser can go), from
    ``line`` when known."""
    at = f"line {line}: " if line is not None else ""
    return f"{where}: {at}nested more than {limit} levels deep; not read"


def check_relative(relative: object, where: str) -> str:
    """``relative`` when it is a relative path that stays below its base by its text alone
    (no ``..`` component, not absolute, no NUL): for paths inside a place that does not exist
    yet (a report in the workspace copy, an entry file the agent writes); else :class:`BoundaryError`."""
    if not isinstance(relative, str) or not relative or "\x00" in relative:
        raise BoundaryError(f"{where}: '{shorten(relative)}' is not a path")
    if relative.startswith(("/", "\\")) or os.path.isabs(relative):
        raise BoundaryError(f"{where}: '{shorten(relative)}' is an absolute path; it must be relative and stay inside")
    if ".." in relative.replace("\\", "/").split("/"):
        raise BoundaryError(f"{where}: '{shorten(relative)}' leads outside its directory ('..')")
    return relative


def check_tree(root: Path, relative: str, where: str) -> Path:
    """The path ``relative`` names under ``root`` (:func:`resolve_inside`, ``root`` itself allowed),
    after checking that no symbolic link anywhere below it leads outside ``root``.

    For the directories agentrig copies out of a problem (workspace seeds, tests, solutions, a build
    context): copies keep links as links, but a link out of the problem (``files/secret -> /etc/shadow``,
    ``data -> /``) would hand the host's files to whoever follows it, so the problem is refused.
    """
    top = resolve_inside(root, relative, where, allow_root=True)
    if not top.is_dir():
        return top
    real_root = _real(root)
    stack = [top]
    while stack:
        directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                real = _real(Path(entry.path))
                if real != real_root and real_root not in real.parents:
                    shown = Path(entry.path).relative_to(real_root).as_posix()
                    target = shorten(os.readlink(entry.path))
                    raise BoundaryError(
                        f"{where}: '{shorten(shown)}' is a symbolic link to '{target}', outside {root}"
                    )
            elif entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
    return top


def open_inside(root: Path, relative: str, where: str) -> int:
    """A read-only file descriptor of the regular file ``relative`` under ``root``, opened one
    component at a time without following any symbolic link (``O_NOFOLLOW``), so a link planted
    there by an agent cannot make agentrig read a host file; :class:`BoundaryError` when ``relative``
    leaves ``root``, a component is a link, or the file is not a regular file; ``FileNotFoundError``
    when it does not exist."""
    check_relative(relative, where)
    parts = [p for p in relative.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts:
        raise BoundaryError(f"{where}: '{shorten(relative)}' names no file")
    flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            try:
                child = os.open(part, flags | os.O_NONBLOCK | (0 if last else os.O_DIRECTORY), dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(os.path.join(root, *parts[: index + 1])):
                    raise BoundaryError(
                        f"{where}: '{shorten('/'.join(parts[: index + 1]))}' is a symbolic link; not followed"
                    ) from None
                raise
            os.close(fd)
            fd = child
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise BoundaryError(f"{where}: '{shorten(relative)}' is not a regular file; not read")
        os.set_blocking(fd, True)
        result, fd = fd, -1
        return result
    finally:
        if fd >= 0:
            os.close(fd)


def read_under(root: Path, relative: str, where: str, limit: int) -> bytes:
    """The regular file ``relative`` under ``root`` (:func:`open_inside`: no link followed), at most
    ``limit`` bytes; :class:`BoundaryError` naming ``where`` when it is larger."""
    fd = open_inside(root, relative, where)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise BoundaryError(f"{where}: '{shorten(relative)}' is larger than {size_text(limit)}; not read")
    return data


def read_inside(root: Path, path: Path, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path`` of a directory read back (a run directory), read only
    when it resolves (symbolic links followed) inside ``root``: a link that leaves ``root`` is never
    followed, and a FIFO or device is never opened for reading.

    :class:`FileNotFoundError` when there is no such file (inside); :class:`BoundaryError` naming
    the file when it leads outside ``root`` or is not a regular file; ``limit``: as
    :func:`read_capped`.
    """
    path = Path(path)
    if not os.path.lexists(path):
        raise FileNotFoundError(2, "No such file or directory", str(path))
    real = os.path.realpath(path)  # resolved once: the path checked is the path opened
    if not _real_inside(os.path.realpath(root), real):
        raise BoundaryError(f"{path}: a symbolic link leading outside {root}; not read")
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # replaced by a link since it was resolved
            raise BoundaryError(f"{path}: a symbolic link leading outside {root}; not read") from None
        raise
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise BoundaryError(f"{path}: not a regular file; not read")
        data = handle.read() if limit is None else handle.read(limit + 1)
    if limit is not None and len(data) > limit:
        raise BoundaryError(f"{path}: file is larger than {size_text(limit)}; not read")
    return data
