"""Fixtures of tests that need a real bubblewrap sandbox (``bwrap``) or a real Landlock domain.

A test marked ``bwrap`` (or calling :func:`require_bwrap`) skips when ``bwrap``
cannot sandbox commands on this machine, and fails instead when ``CI`` is set:
CI installs bubblewrap, so a missing one there is a broken setup, not a skip.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


def require_bwrap() -> None:
    """Fail (when ``CI`` is set) or skip the current test if ``bwrap`` cannot sandbox commands here."""
    from agentrig.runtime.sandbox import bwrap_problem
    from agentrig.testing.prerequisites import require

    require(bwrap_problem(), "the bwrap sandbox cannot run")


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Enforce the bubblewrap rule for every test marked ``bwrap``."""
    if item.get_closest_marker("bwrap") is not None:
        require_bwrap()


def python_under_tmp(root: Path) -> Path:
    """A Python installation and a virtual environment made from it, both in ``root`` (a directory under
    ``/tmp``, as a fresh ``HOME`` or a CI runner's tool cache puts them); returns the environment's ``python``.

    The installation is this interpreter's executable copied to ``root/python/bin`` beside links to its
    standard library and ``libpython``; the environment (``root/venv``, made by ``python -m venv`` from
    that copy) imports what this interpreter imports, through a ``.pth`` file listing ``sys.path``.
    """
    import os
    import subprocess
    import sys
    import sysconfig

    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    base = root / "python"
    (base / "bin").mkdir(parents=True)
    executable = base / "bin" / version
    shutil.copy2(os.path.realpath(getattr(sys, "_base_executable", sys.executable)), executable)
    (base / "lib").mkdir()
    (base / "lib" / version).symlink_to(Path(os.__file__).parent)  # the standard library: Python's landmark
    for library in Path(sysconfig.get_config_var("LIBDIR") or "/nonexistent").glob("libpython*.so*"):
        (base / "lib" / library.name).symlink_to(library)
    venv = root / "venv"
    subprocess.run([str(executable), "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True, timeout=120)
    site_packages = venv / "lib" / version / "site-packages"
    paths = [entry for entry in sys.path if os.path.isabs(entry) and os.path.isdir(entry)]
    (site_packages / "agentrig-test.pth").write_text("".join(f"{entry}\n" for entry in paths))
    return venv / "bin" / "python"
