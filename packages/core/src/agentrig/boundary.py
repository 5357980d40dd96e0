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
- :func:`copy_under`, :func:`write_under` and :func:`make_dirs_under` for every copy and write
  agentrig makes into a directory an agent controlled (its workspace, a copy of it, a subagent's
  directory): one component at a time from the root, no symbolic link followed;
- :func:`shorten` for an error message that quotes untrusted input.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import stat
from collections.abc import Callable
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


def ascii_number(text: str) -> int | None:
    """``text`` as a whole number when it is one or more ASCII digits (``"12"``), else ``None``.

    ``str.isdigit`` accepts ``"²"`` (which ``int`` refuses) and ``"٣"`` (which ``int`` reads as 3): every
    number parsed from a record or a name read back goes through here instead."""
    return int(text) if text.isascii() and text.isdigit() else None


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
#: The largest file of a run directory read back (a trajectory, a record, a raw agent log), in bytes.
RECORD_MAX_BYTES = 256 * 1024 * 1024
#: The environment variable that overrides :data:`RECORD_MAX_BYTES`.
RECORD_LIMIT_ENV = "AGENTRIG_MAX_RECORD_BYTES"


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


def record_limit() -> int:
    """The size cap of a file read back from a run directory: :data:`RECORD_LIMIT_ENV` when set, else
    :data:`RECORD_MAX_BYTES`."""
    return _limit_from_env(RECORD_LIMIT_ENV, RECORD_MAX_BYTES)


def record_too_large(path: Path, size: int | None, limit: int) -> BoundaryError:
    """The one line for a file of a run directory larger than ``limit`` (``size`` when known): not read."""
    actual = f" ({size_text(size)})" if size is not None else ""
    return BoundaryError(
        f"{path}: file is larger than {size_text(limit)}{actual}; not read (raise the limit with {RECORD_LIMIT_ENV}=BYTES)"
    )


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
    the file when it leads outside ``root``, is not a regular file, or is larger than ``limit`` bytes
    (default :func:`record_limit`: a file of 3 GB, even a sparse one, is refused by its size, unread).
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
    if limit is None:
        limit = record_limit()
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise BoundaryError(f"{path}: not a regular file; not read")
        if info.st_size > limit:
            raise record_too_large(path, info.st_size, limit)
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise record_too_large(path, None, limit)
    return data


# -- copies and writes into a directory an agent controlled ---------------------------------------

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
#: How many times one path component is made again when it keeps changing under us (an agent's
#: process racing the copy): then the copy gives up.
_COMPONENT_TRIES = 5


def _parts(relative: str, where: str) -> list[str]:
    """The components of ``relative`` (``""`` or ``"."``: none, the root itself), checked by :func:`check_relative`."""
    if relative in ("", "."):
        return []
    check_relative(relative, where)
    return [part for part in relative.replace("\\", "/").split("/") if part not in ("", ".")]


def _enter(parent: int, name: str, shown: str, where: str, replace_links: bool) -> int:
    """The directory ``name`` in the directory ``parent`` (a descriptor), made when missing, opened
    without following a link: a link there is removed (``replace_links``) or refused."""
    for _ in range(_COMPONENT_TRIES):
        try:
            return os.open(name, _DIRECTORY_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            try:
                os.mkdir(name, 0o777, dir_fd=parent)
            except FileExistsError:
                pass  # made meanwhile: open whatever it is now, without following it
            continue
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            try:
                info = os.stat(name, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                continue
            if not stat.S_ISLNK(info.st_mode):
                raise NotADirectoryError(errno.ENOTDIR, f"{where}: '{shorten(shown)}' is not a directory") from None
            if not replace_links:
                raise BoundaryError(f"{where}: '{shorten(shown)}' is a symbolic link; not followed") from None
            try:
                os.unlink(name, dir_fd=parent)
            except FileNotFoundError:
                pass
    raise BoundaryError(f"{where}: '{shorten(shown)}' keeps changing while it is written; not written")


def _open_directories(root: Path, parts: list[str], where: str, replace_links: bool) -> int:
    """A descriptor of the directory ``root/parts...``, each component made when missing and never a link."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        for index, part in enumerate(parts):
            child = _enter(fd, part, "/".join(parts[: index + 1]), where, replace_links)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _put(directory: int, name: str, fill: Callable[[int], None], mode: int, times: tuple[int, int] | None = None) -> None:
    """The file ``name`` in ``directory`` replaced by a new one that ``fill(fd)`` writes: made under a
    temporary name and renamed over it, so whatever ``name`` was (a link, a file with another hard
    link) is replaced, never written through."""
    import secrets

    temporary = f".agentrig-{secrets.token_hex(8)}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600,
                 dir_fd=directory)
    try:
        try:
            fill(fd)
            os.fchmod(fd, mode)
            if times is not None:
                os.utime(fd, ns=times)
        finally:
            os.close(fd)
        os.rename(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary, dir_fd=directory)
        raise


def _put_link(directory: int, name: str, target: str) -> None:
    """The symbolic link ``name`` -> ``target`` in ``directory``, replacing whatever ``name`` was (not followed)."""
    import secrets

    temporary = f".agentrig-{secrets.token_hex(8)}.tmp"
    os.symlink(target, temporary, dir_fd=directory)
    try:
        os.rename(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary, dir_fd=directory)
        raise


def _writer(data: bytes) -> Callable[[int], None]:
    def fill(fd: int) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]

    return fill


def _copier(source: str) -> Callable[[int], None]:
    def fill(fd: int) -> None:
        reader = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
        try:
            while chunk := os.read(reader, 1 << 20):
                _writer(chunk)(fd)
        finally:
            os.close(reader)

    return fill


def make_dirs_under(root: Path, relative: str, where: str, *, replace_links: bool = False) -> Path:
    """``root/relative`` as a directory, each missing component made, none of them followed when it is
    a symbolic link: :class:`BoundaryError` ``"{where}: 'a/b' is a symbolic link; not followed"``
    (``replace_links``: the link is removed and a directory made in its place). ``root`` itself is
    trusted (agentrig made or named it); what lies under it is the agent's."""
    parts = _parts(relative, where)
    os.close(_open_directories(Path(root), parts, where, replace_links))
    return Path(root, *parts)


def write_under(
    root: Path, relative: str, data: bytes, where: str, *, mode: int = 0o644, replace_links: bool = False
) -> Path:
    """Write ``data`` as the file ``relative`` under ``root`` (a directory an agent controlled) without
    following a symbolic link: the directories on the way are opened one at a time
    (:func:`make_dirs_under`), and the file is made beside its place and renamed over it, so a link
    or a hard link there is replaced, never written through."""
    parts = _parts(relative, where)
    if not parts:
        raise BoundaryError(f"{where}: '{shorten(relative)}' names no file")
    fd = _open_directories(Path(root), parts[:-1], where, replace_links)
    try:
        _put(fd, parts[-1], _writer(data), mode)
    finally:
        os.close(fd)
    return Path(root, *parts)


def copy_under(root: Path, relative: str, source: Path, where: str, *, replace_links: bool = False) -> Path:
    """Copy ``source`` (a file, or a directory merged over what is there, as ``shutil.copytree(...,
    symlinks=True, dirs_exist_ok=True)`` does; modes and times kept, links copied as links) to
    ``relative`` under ``root`` (``"."``: ``root`` itself), a directory an agent controlled, following
    no symbolic link there (see :func:`write_under`). ``source`` is agentrig's or a checked problem's
    (:func:`check_tree`); a FIFO or device in it is refused."""
    parts = _parts(relative, where)
    source = Path(source)
    if source.is_dir():
        fd = _open_directories(Path(root), parts, where, replace_links)
        try:
            _copy_tree(source, fd, "/".join(parts), where, replace_links)
        finally:
            os.close(fd)
    else:
        if not parts:
            raise BoundaryError(f"{where}: '{shorten(relative)}' names no file")
        fd = _open_directories(Path(root), parts[:-1], where, replace_links)
        try:
            _copy_entry(source, os.lstat(source), fd, parts[-1], where)
        finally:
            os.close(fd)
    return Path(root, *parts)


def _copy_entry(source: Path, info: os.stat_result, directory: int, name: str, where: str) -> None:
    if stat.S_ISLNK(info.st_mode):
        _put_link(directory, name, os.readlink(source))
    elif stat.S_ISREG(info.st_mode):
        _put(directory, name, _copier(os.fspath(source)), stat.S_IMODE(info.st_mode), (info.st_atime_ns, info.st_mtime_ns))
    else:
        raise BoundaryError(f"{where}: '{shorten(str(source))}' is not a regular file, directory or link; not copied")


def _copy_tree(source: Path, directory: int, shown: str, where: str, replace_links: bool) -> None:
    for entry in sorted(os.scandir(source), key=lambda item: item.name):
        path = f"{shown}/{entry.name}" if shown else entry.name
        info = entry.stat(follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            child = _enter(directory, entry.name, path, where, replace_links)
            try:
                _copy_tree(Path(entry.path), child, path, where, replace_links)
                os.fchmod(child, stat.S_IMODE(info.st_mode) | stat.S_IRWXU)
            finally:
                os.close(child)
        else:
            _copy_entry(Path(entry.path), info, directory, entry.name, where)
