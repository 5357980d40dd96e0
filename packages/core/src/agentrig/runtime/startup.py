"""What a program needs of the file system to start: its file, its interpreters, their environments.

:func:`program_needs` follows a program the way ``execve`` and the
interpreters do: every symlink on the way to its file, the interpreter of a
``#!`` script (``/usr/bin/env NAME`` too, ``NAME`` found on the ``PATH`` the
program gets), and for a Python: its virtual environment (whose
``pyvenv.cfg`` ``home`` names the base interpreter), its installation prefix,
and the directories the ``.pth`` files of its ``site-packages`` add (editable
installs); the running interpreter's ``sys.prefix`` and ``sys.base_prefix``
when the program is it. Each need is the directory to show whole, as the
program names it: a virtual environment's root, a Python installation's
prefix (the directory above ``bin`` holding ``lib/python3.*/os.py``), the
top-most ``node_modules`` a file lies in, or else the file itself.

:mod:`agentrig.runtime.sandbox` decides which of them a sandbox must show.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass

#: How many ``#!`` interpreters deep a program is followed (a script run by a script run by ...).
MAX_INTERPRETERS = 8

#: How much of a ``.pth`` file is read (an editable install's is a line or two).
MAX_PTH_BYTES = 65536


@dataclass(frozen=True)
class Need:
    """A path ``program`` needs to start: ``path`` (absolute, as named on the way, not resolved) shown whole."""

    path: str
    program: str


def find_program(name: str, *, search_path: str, cwd: str) -> str | None:
    """The file ``name`` runs as: with a ``/``, relative to ``cwd``; otherwise found on ``search_path``."""
    if "/" in name:
        path = os.path.join(cwd, name)
        return os.path.abspath(path) if os.path.isfile(path) else None
    found = shutil.which(name, path=search_path)
    return os.path.abspath(found) if found is not None else None


def program_needs(program: str, *, search_path: str) -> list[Need]:
    """What ``program`` (an absolute path) needs to start, itself included (see the module's docstring)."""
    needs: dict[str, Need] = {}
    _follow(program, program, search_path, needs, depth=0)
    return list(needs.values())


def interpreter_needs() -> list[Need]:
    """What the running interpreter (``sys.executable``) needs to start, its prefixes and import path included."""
    return program_needs(os.path.abspath(sys.executable), search_path="") if sys.executable else []


def directory_needs(directory: str) -> list[Need]:
    """What the programs of ``directory`` (an absolute ``PATH`` entry) need beside it: its environment, else itself."""
    return [Need(root, directory) for root in _roots(os.path.join(directory, "_"), fallback=directory)]


def _follow(path: str, program: str, search_path: str, needs: dict[str, Need], *, depth: int) -> None:
    for hop in _hops(path):
        for root in _roots(hop, fallback=hop):
            needs.setdefault(root, Need(root, program))
    real = os.path.realpath(path)
    if sys.executable and real == os.path.realpath(sys.executable):
        for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
            if os.path.isdir(prefix):
                needs.setdefault(os.path.abspath(prefix), Need(os.path.abspath(prefix), program))
    if depth < MAX_INTERPRETERS:
        for interpreter in _interpreters(real, search_path):
            _follow(interpreter, program, search_path, needs, depth=depth + 1)


def _hops(path: str) -> list[str]:
    """``path``, every symlink's target on the way to its file (as the link names it), and its real path."""
    hops = [os.path.abspath(path)]
    current = hops[0]
    for _ in range(40):  # the kernel's own limit on a chain of links
        if not os.path.islink(current):
            break
        try:
            current = os.path.abspath(os.path.join(os.path.dirname(current), os.readlink(current)))
        except OSError:
            break
        hops.append(current)
    hops.append(os.path.realpath(path))
    return [hop for index, hop in enumerate(hops) if hop not in hops[:index] and os.path.exists(hop)]


def _roots(file: str, *, fallback: str) -> list[str]:
    """The directories to show whole for ``file`` to run (its environment's), else ``[fallback]``."""
    parent = os.path.dirname(file)
    prefix = os.path.dirname(parent)
    if os.path.isfile(os.path.join(prefix, "pyvenv.cfg")):
        return [prefix, *_pth_directories(prefix), *_venv_base(prefix)]
    if os.path.basename(parent) == "bin" and _is_python_prefix(prefix):
        return [prefix, *_pth_directories(prefix)]
    parts = file.split(os.sep)
    if "node_modules" in parts:
        return [os.sep.join(parts[: parts.index("node_modules") + 1]) or os.sep]
    return [fallback]


def _is_python_prefix(directory: str) -> bool:
    return any(os.path.isfile(os.path.join(lib, "os.py")) for lib in _python_libs(directory))


def _python_libs(prefix: str) -> list[str]:
    """``prefix/lib/python3*``, the directories a Python installation keeps its library in."""
    lib = os.path.join(prefix, "lib")
    return [os.path.join(lib, name) for name in _listing(lib) if name.startswith("python3")]


#: Directory -> (its modification time, its entries' names): ``lib`` and ``site-packages`` are long to list.
_LISTINGS: dict[str, tuple[int, list[str]]] = {}


def _listing(directory: str) -> list[str]:
    """The names in ``directory`` (sorted; none when it cannot be listed), listed again only once it changed."""
    try:
        changed = os.stat(directory).st_mtime_ns
    except OSError:
        return []
    cached = _LISTINGS.get(directory)
    if cached is None or cached[0] != changed:
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            names = []
        cached = _LISTINGS[directory] = (changed, names)
    return cached[1]


def _venv_base(venv: str) -> list[str]:
    """The installation a virtual environment's ``pyvenv.cfg`` names (``home``: its interpreter's directory)."""
    try:
        with open(os.path.join(venv, "pyvenv.cfg"), encoding="utf-8", errors="replace") as config:
            lines = config.read(MAX_PTH_BYTES).splitlines()
    except OSError:
        return []
    for line in lines:
        key, _, value = line.partition("=")
        home = value.strip()
        if key.strip() == "home" and os.path.isabs(home) and os.path.isdir(home):
            prefix = os.path.dirname(os.path.normpath(home))
            if _is_python_prefix(prefix):
                return [prefix, *_pth_directories(prefix)]
            return [os.path.normpath(home)]
    return []


#: ``.pth`` file -> (its modification time, the directories it adds).
_PTH_ENTRIES: dict[str, tuple[int, list[str]]] = {}


def _pth_directories(prefix: str) -> list[str]:
    """The existing directories the ``.pth`` files of ``prefix``'s ``site-packages`` add to the import path."""
    found: list[str] = []
    for site_packages in (os.path.join(lib, "site-packages") for lib in _python_libs(prefix)):
        for pth in _pth_files(site_packages):
            found += [directory for directory in _pth_entries(pth) if directory not in found]
    return found


def _pth_files(site_packages: str) -> list[str]:
    return [os.path.join(site_packages, name) for name in _listing(site_packages) if name.endswith(".pth")]


def _pth_entries(pth: str) -> list[str]:
    try:
        changed = os.stat(pth).st_mtime_ns
        cached = _PTH_ENTRIES.get(pth)
        if cached is not None and cached[0] == changed:
            return cached[1]
        with open(pth, encoding="utf-8", errors="replace") as file:
            lines = file.read(MAX_PTH_BYTES).splitlines()
    except OSError:
        return []
    entries: list[str] = []
    for line in lines:
        entry = line.strip()
        if not entry or entry.startswith(("#", "import ", "import\t")):
            continue  # as site.py: comments and import lines add nothing to the path
        directory = os.path.abspath(os.path.join(os.path.dirname(pth), entry))
        if os.path.isdir(directory) and directory not in entries:
            entries.append(directory)
    _PTH_ENTRIES[pth] = (changed, entries)
    return entries


def _interpreters(file: str, search_path: str) -> list[str]:
    """The interpreter(s) of a ``#!`` script: the one named, and the program ``env`` is told to find."""
    try:
        with open(file, "rb") as script:
            head = script.read(512)
    except OSError:
        return []
    if not head.startswith(b"#!"):
        return []
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", errors="replace").split()
    if not words or not os.path.isabs(words[0]):
        return []
    found = [words[0]]
    if os.path.basename(words[0]) == "env":
        name = _env_program(words[1:])
        program = None if name is None else find_program(name, search_path=search_path, cwd="/")
        if program is not None:
            found.append(program)
    return found


def _env_program(words: list[str]) -> str | None:
    """The program ``env`` runs given ``words`` (its options and ``NAME=VALUE`` settings skipped)."""
    index = 0
    while index < len(words):
        word = words[index]
        if word in ("-u", "--unset", "-C", "--chdir"):
            index += 2
            continue
        if word.startswith("-S") and len(word) > 2:
            return word[2:]
        if word.startswith("-") or "=" in word:
            index += 1
            continue
        return word
    return None
