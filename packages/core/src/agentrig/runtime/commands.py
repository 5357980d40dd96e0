"""Turning a runtime call's command and environment into what a process gets.

A string command runs through ``sh -c`` (an agent's bash tool); a list is an
argument vector with no shell, so task text in it is never interpreted.
"""

from __future__ import annotations

from collections.abc import Mapping

from agentrig.runtime.interface import Command


def to_argv(command: Command) -> list[str]:
    """The argument vector for ``command``; rejects an empty one."""
    if isinstance(command, str):
        if not command.strip():
            raise ValueError("empty command")
        return ["sh", "-c", command]
    argv = list(command)
    if not argv:
        raise ValueError("empty command")
    for arg in argv:
        if not isinstance(arg, str):
            raise TypeError(f"command arguments must be strings, got {type(arg).__name__}: {arg!r}")
    return argv


def merge_env(base: Mapping[str, str], extra: Mapping[str, str] | None) -> dict[str, str]:
    """``base`` with ``extra`` on top; every name and value must be a string without NUL."""
    env = dict(base)
    if extra:
        for name, value in extra.items():
            if not isinstance(name, str) or not isinstance(value, str):
                raise TypeError(f"environment variable {name!r} must map a string to a string")
            if not name or "=" in name or "\0" in name or "\0" in value:
                raise ValueError(f"invalid environment variable name or value: {name!r}")
            env[name] = value
    return env
