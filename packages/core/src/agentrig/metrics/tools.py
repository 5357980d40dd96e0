"""Finding the analysis tools a metric needs, with the package to install when one is missing."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from agentrig.metrics.interface import MetricError, ToolMissingError

#: How long one tool run may take before the metric fails (seconds).
TOOL_TIMEOUT = 300.0


def require_module(module: str, package: str) -> ModuleType:
    """``import module``, or :class:`ToolMissingError` naming ``package``."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ToolMissingError(module, package) from None


def executable_candidates(name: str) -> list[str]:
    """The paths of executable ``name`` in the order they are tried: beside this interpreter (the
    environment agentrig is installed in), then the first on ``PATH``; each once."""
    found: list[str] = []
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        found.append(str(beside))
    on_path = shutil.which(name)
    if on_path is not None and all(Path(on_path).resolve() != Path(f).resolve() for f in found):
        found.append(on_path)
    return found


def find_executable(name: str, package: str) -> str:
    """The first of :func:`executable_candidates`; :class:`ToolMissingError` naming ``package`` when
    there is none."""
    found = executable_candidates(name)
    if not found:
        raise ToolMissingError(name, package)
    return found[0]


def run_tool(argv: list[str], cwd: Path, ok_codes: tuple[int, ...] = (0, 1)) -> str:
    """Run a tool (never through a shell, input closed) and return its standard output; a timeout
    or an exit status outside ``ok_codes`` is a :class:`MetricError` with the tool's last line."""
    try:
        done = subprocess.run(
            argv, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TOOL_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired:
        raise MetricError(f"{Path(argv[0]).name} took over {TOOL_TIMEOUT:.0f} s") from None
    if done.returncode not in ok_codes:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise MetricError(f"{Path(argv[0]).name} exited with status {done.returncode}: {last[:300]}")
    return done.stdout
