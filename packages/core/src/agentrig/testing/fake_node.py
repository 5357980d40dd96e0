"""A host ``node`` of a chosen version for the tests of the Node check (:mod:`agentrig.agents.node_requirement`).

A fake ``node`` is a small shell script that answers ``--version`` as a real one does
(``v18.19.0``), put first on ``PATH``; a host without Node is a ``PATH`` of an empty
directory. :func:`refused_local_run` runs ``agentrig run PROBLEM --runtime local``
as a user types it and :func:`check_one_line_refusal` checks what must come out: one line,
exit 2, no run directory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from agentrig.testing.cli_agents import agentrig_executable


def fake_node_dir(parent: Path, version: str) -> Path:
    """A new directory under ``parent`` holding an executable ``node`` that prints ``version`` (``v18.19.0``)
    for ``--version`` and fails at anything else, as a Node too old for a CLI's syntax would."""
    directory = parent / f"node-{version}"
    directory.mkdir(parents=True)
    script = directory / "node"
    script.write_text(
        f'#!/bin/sh\nif [ "$1" = "--version" ]; then echo {version}; exit 0; fi\n'
        'echo "SyntaxError: Unexpected token (fake old node)" >&2\nexit 1\n'
    )
    script.chmod(0o755)
    return directory


def first_on_path(directory: Path, path: str | None = None) -> str:
    """``PATH`` (default: this process's) with ``directory`` first."""
    rest = os.environ.get("PATH", os.defpath) if path is None else path
    return f"{directory}{os.pathsep}{rest}"


def path_without_node(parent: Path) -> str:
    """A ``PATH`` on which there is no ``node`` (one empty directory under ``parent``)."""
    directory = parent / "no-node-bin"
    directory.mkdir(parents=True, exist_ok=True)
    return str(directory)


def host_node_version() -> tuple[int, int, int] | None:
    """The version of the ``node`` on this process's ``PATH``, ``None`` when there is none (or it does not answer)."""
    from agentrig.agents.node_requirement import parse_version

    node = shutil.which("node")
    if node is None:
        return None
    result = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30, check=False)
    return parse_version(result.stdout) if result.returncode == 0 else None


def require_host_node(major: int) -> None:
    """Skip the test (fail it under ``CI``) unless this host's ``node`` is at least ``major``."""
    from agentrig.testing.prerequisites import require

    found = host_node_version()
    problem = None if found is not None and found[0] >= major else f"this host's node is {found}, not >= {major}"
    require(problem, f"Node.js >= {major} is missing")


def refused_local_run(
    problem: Path, *, agent: str, model: str, binary: str, env: dict[str, str], output: Path
) -> subprocess.CompletedProcess[str]:
    """``agentrig run PROBLEM --agent AGENT --model MODEL --runtime local -c binary=BINARY --output OUTPUT``
    with ``env`` (its ``PATH`` holds the fake ``node``, or none), from ``output``'s parent."""
    argv = [
        agentrig_executable(), "run", str(problem), "--agent", agent, "--model", model, "--runtime", "local",
        "-c", f"binary={binary}", "--output", str(output),
    ]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, cwd=output.parent, check=False)


def check_one_line_refusal(result: subprocess.CompletedProcess[str], output: Path, *expected: str) -> str:
    """``result`` exited 2 with one line on stderr holding each of ``expected``, nothing on stdout, no
    traceback, and ``output`` was never made; return that line."""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, result.stdout + result.stderr
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr and result.stdout.strip() == "", result.stdout + result.stderr
    for text in expected:
        assert text in lines[0], (text, lines[0])
    assert not output.exists(), sorted(str(p) for p in output.rglob("*"))
    return lines[0]


def refused_preflight(agent: Any, *expected: str) -> str:
    """The one line ``agent.preflight()`` refuses with (an :class:`~agentrig.errors.AgentSetupError`), holding each of
    ``expected``."""
    from agentrig.errors import AgentSetupError

    try:
        agent.preflight()
    except AgentSetupError as exc:
        message = str(exc)
    else:
        raise AssertionError("the preflight passed")
    assert "\n" not in message, message
    for text in expected:
        assert text in message, (text, message)
    return message
