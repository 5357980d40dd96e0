"""Build wheels and fresh virtual environments, for tests that install packages for real.

Plugin discovery must be tested from built wheels installed the way users
install them, not only from the editable development environment.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Iterable, Sequence
from pathlib import Path


def build_wheel(project: Path, dest: Path) -> Path:
    """Build the wheel of the hatchling project at ``project`` into ``dest``; returns its path.

    Uses the hatchling installed beside this interpreter: no download, no pip.
    """
    dest.mkdir(parents=True, exist_ok=True)
    before = set(dest.glob("*.whl"))
    command = [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(dest.resolve())]
    result = subprocess.run(command, cwd=project, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"building the wheel of {project} failed: {result.stderr.strip()[-2000:]}")
    built = sorted(set(dest.glob("*.whl")) - before, key=lambda p: p.stat().st_mtime)
    if not built:
        raise RuntimeError(f"pip wheel produced no wheel for {project}")
    return built[-1]


def create_venv(path: Path) -> Path:
    """Create a fresh virtual environment with pip (from ensurepip, offline); returns its Python."""
    venv.EnvBuilder(with_pip=True, clear=True).create(path)
    return path / "bin" / "python"


def installer() -> str | None:
    """The ``uv`` executable that installs packages, or ``None`` for pip.

    uv is what hatch installs with (a dependency of hatch, so on PATH wherever ``hatch test`` runs):
    it installs from its cache in seconds where pip takes minutes on a busy machine.
    ``AGENTRIG_TEST_INSTALLER=pip`` forces pip.
    """
    if os.environ.get("AGENTRIG_TEST_INSTALLER", "").lower() == "pip":
        return None
    return shutil.which("uv")


def pip_install(python: Path, requirements: Iterable[str | Path], *, no_deps: bool = False,
                extra_args: Sequence[str] = ()) -> None:
    """Install into the environment of ``python``: with uv (see :func:`installer`), else with its own pip."""
    uv = installer()
    if uv is not None:
        command = [uv, "pip", "install", "-q", "--python", str(python), *extra_args]
    else:
        command = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *extra_args]
    if no_deps:
        command.append("--no-deps")
    command += [str(r) for r in requirements]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{'uv pip' if uv else 'pip'} install failed: {result.stderr.strip()[-2000:]}")


def venv_bin(python: Path, name: str) -> Path:
    """The path of console script ``name`` in the environment of ``python``."""
    return python.parent / name
