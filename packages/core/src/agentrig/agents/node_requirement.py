"""Whether the host's Node.js can run a CLI agent's npm CLI (``--runtime local``), checked before anything runs.

A CLI installed with npm either ships a native executable (Claude Code, OpenCode) or is a
script run by ``node`` (``#!/usr/bin/env node``: Gemini CLI, Codex's launcher). On an older
Node than the package's ``engines.node`` asks for, such a script dies on its first line it
cannot parse, with the CLI's own syntax error. :func:`check_host_node` turns that into one
line naming the agent, the Node found, the Node needed and what to do. The requirement is
read from the installed package's own ``package.json`` (``engines.node``); where there is
none (a CLI not installed by npm, a package naming no engines) the agent's documented
fallback applies. A native executable needs no Node and is not checked.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from agentrig.errors import AgentSetupError

#: What the check is told to do instead, besides installing a newer Node.
USE_DOCKER = "or use --runtime docker (the agent's image brings its own Node.js)"

_COMPARATOR = re.compile(r"(>=|<=|>|<|=|\^|~)?\s*v?(\d+)(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?")
_NODE_VERSION = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)")
_VERSION_TIMEOUT = 20.0

Version = tuple[int, int, int]


@dataclass(frozen=True)
class NodeRequirement:
    """The lowest Node.js a CLI runs on, and where that figure comes from (for the message)."""

    minimum: Version
    #: ``"engines.node '>=20' of @google/gemini-cli 0.61.0"`` or ``"the gemini_cli agent's default"``.
    source: str

    @property
    def label(self) -> str:
        """The minimum as a user writes it: ``20``, ``18.17``, ``20.0.1``."""
        major, minor, patch = self.minimum
        return str(major) if (minor, patch) == (0, 0) else f"{major}.{minor}" if patch == 0 else f"{major}.{minor}.{patch}"


def parse_version(text: str) -> Version | None:
    """``(major, minor, patch)`` of ``v18.19.0`` / ``20.1.0``; ``None`` when ``text`` does not start with one."""
    match = _NODE_VERSION.match(text.strip())
    return (int(match.group(1)), int(match.group(2)), int(match.group(3))) if match else None


def lowest_allowed(spec: str) -> Version | None:
    """The lowest version an npm semver range allows (``>=20`` -> 20.0.0, ``^18 || >= 21`` -> 18.0.0,
    ``>20`` -> 21.0.0); ``None`` when ``spec`` names no version. Upper bounds are not checked: only "too old" is."""
    lows: list[Version] = []
    for alternative in spec.split("||"):
        alternative = alternative.strip()
        if alternative in ("", "*", "x", "X"):
            return (0, 0, 0)
        if " - " in alternative:  # a hyphen range: its lower end
            alternative = alternative.split(" - ", 1)[0]
        bounds = [_lower_bound(m) for m in _COMPARATOR.finditer(alternative)]
        found = [b for b in bounds if b is not None]
        if found:
            lows.append(max(found))
        elif bounds:  # only upper bounds (``<22``): anything older is allowed
            return (0, 0, 0)
    return min(lows) if lows else None


def _lower_bound(match: re.Match[str]) -> Version | None:
    """The lower bound one comparator sets; ``None`` for an upper bound (``<``, ``<=``)."""
    operator, *parts = match.groups()
    if operator in ("<", "<="):
        return None
    given = [int(p) for p in parts if p is not None and p.isdigit()]
    numbers = [*given, 0, 0, 0][:3]
    if operator == ">":  # ``>20`` is ``>=21.0.0``, ``>20.1`` is ``>=20.2.0``
        numbers[len(given) - 1] += 1
        numbers[len(given):] = [0] * (3 - len(given))
    return (numbers[0], numbers[1], numbers[2])


def node_interpreter(program: Path) -> str | None:
    """The ``node`` a script runs on, from its ``#!`` line (``node``: looked up on ``PATH``; an absolute path
    as written); ``None`` for a native executable or a script of another interpreter."""
    try:
        with open(program, "rb") as handle:
            first = handle.readline(512)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", errors="replace").split()
    if words and os.path.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    if not words or not re.fullmatch(r"node(js)?(\d+)?", os.path.basename(words[0])):
        return None
    return words[0]


def package_requirement(program: Path) -> NodeRequirement | None:
    """``engines.node`` of the npm package ``program`` (the real file, links followed) belongs to: the nearest
    ``package.json`` with a ``name`` above it; ``None`` when there is none or it names no Node version."""
    for directory in program.parents:
        manifest = directory / "package.json"
        if directory.name == "node_modules":
            return None
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            continue  # a folder's own {"type": "module"}: the package is further up
        engines = data.get("engines")
        spec = engines.get("node") if isinstance(engines, dict) else None
        minimum = lowest_allowed(spec) if isinstance(spec, str) else None
        if minimum is None:
            return None
        return NodeRequirement(minimum, f"engines.node '{spec}' of {data['name']} {data.get('version', '')}".rstrip())
    return None


def resolve_program(binary: str, path: str) -> Path | None:
    """The file ``binary`` runs (a name looked up on ``path``, else a path), links followed; ``None`` if absent."""
    found = shutil.which(binary, path=path) if os.sep not in binary else binary
    if found is None or not os.path.isfile(found):
        return None
    return Path(os.path.realpath(found))


def check_host_node(*, agent: str, cli_name: str, binary: str, fallback: str, path: str | None = None) -> None:
    """Refuse to run ``binary`` (the ``agent``'s ``cli_name``) on this host when it is a Node script and the
    ``node`` it runs on is missing, does not run, or is older than its package's ``engines.node`` (else
    ``fallback``, a version like ``"20"``): :class:`AgentSetupError`, one line. ``path``: the ``PATH``
    commands see (default: this process's). A binary not found is left to the CLI's version probe."""
    search = os.environ.get("PATH", os.defpath) if path is None else path
    program = resolve_program(binary, search)
    interpreter = node_interpreter(program) if program is not None else None
    if program is None or interpreter is None:
        return
    needed = package_requirement(program)
    if needed is None:
        minimum = lowest_allowed(fallback) or (0, 0, 0)
        needed = NodeRequirement(minimum, f"the {agent} agent's default, its package.json names none")
    what = f"the {agent} agent's {cli_name} ({program}) needs Node.js >= {needed.label} ({needed.source})"
    todo = f"install Node.js >= {needed.label} on this host, {USE_DOCKER}"
    node = shutil.which(interpreter, path=search) if os.sep not in interpreter else interpreter
    if node is None or not os.path.isfile(node):
        where = "on PATH" if os.sep not in interpreter else "(named by its #! line)"
        raise AgentSetupError(f"{what}, and there is no '{interpreter}' {where}: {todo}")
    version_text = _node_version(node, search)
    found = parse_version(version_text)
    if found is None:
        raise AgentSetupError(f"{what}, and '{node} --version' gave '{version_text[:80]}', not a version: {todo}")
    if found < needed.minimum:
        raise AgentSetupError(f"{what}, and this host's node ({node}) is {version_text.strip()}: {todo}")


def _node_version(node: str, path: str) -> str:
    """What ``node --version`` prints (its first line), or why it did not run, as one short line; run with
    ``PATH`` only (none of this process's variables, its keys, reach it)."""
    try:
        result = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=_VERSION_TIMEOUT,
            stdin=subprocess.DEVNULL, errors="replace", env={"PATH": path},
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"did not run: {exc}"
    lines = result.stdout.strip().splitlines()
    return lines[0] if lines else f"exit {result.returncode}, no output"
