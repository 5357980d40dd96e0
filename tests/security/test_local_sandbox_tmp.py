"""The bubblewrap sandbox starts what lives under ``/tmp`` and still keeps the rest of ``/tmp`` private.

The sandbox mounts a private ``/tmp``; a fresh ``HOME`` or a CI runner's tool
cache puts interpreters, virtual environments and CLIs there. Real
bubblewrap, a real Python installation and virtual environment made under
``/tmp`` (:func:`agentrig.testing.sandbox.python_under_tmp`), real files
planted beside them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentrig.agents.session import Session
from agentrig.runtime.interface import Invocation
from agentrig.testing.sandbox import python_under_tmp

pytestmark = pytest.mark.bwrap

SECRET = "planted in /tmp: must not be readable in the sandbox"

#: Run by the environment's python in the sandbox: where it runs from, and whether the planted files show.
REPORT = """
import os, sys, agentrig
print(sys.prefix, sys.base_prefix, os.path.dirname(agentrig.__file__))
for path in sys.argv[1:]:
    print(path, os.path.exists(path))
print(*sorted(os.listdir(os.path.dirname(sys.argv[1]))))
"""


@pytest.fixture(scope="module")
def under_tmp() -> Iterator[Path]:
    """A directory right under ``/tmp`` holding a Python installation, a virtual environment, and planted secrets."""
    root = Path(tempfile.mkdtemp(prefix="agentrig-test-env-", dir="/tmp"))
    try:
        python_under_tmp(root)
        (root / "secret.txt").write_text(SECRET)
        (root / "tools").mkdir()
        (root / "tools" / "secret.txt").write_text(SECRET)
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def sandboxed(tmp_path: Path) -> Iterator[Session]:
    with Session.create(base_dir=tmp_path / "sessions", runtime_options={"sandbox": "bwrap"}) as made:
        yield made


def _planted(root: Path) -> list[str]:
    return [str(root / "secret.txt"), str(root / "tools" / "secret.txt"), "/tmp/" + root.name]


def test_a_virtual_environment_and_its_base_interpreter_under_tmp_start_in_the_sandbox(
    sandboxed: Session, under_tmp: Path
) -> None:
    python = under_tmp / "venv" / "bin" / "python"
    result = sandboxed.runtime.exec(Invocation([str(python), "-c", REPORT, *_planted(under_tmp)], timeout=60))
    assert result.exit_code == 0, result.stderr
    first, *shown = result.stdout.splitlines()
    prefix, base_prefix, package = first.split()
    assert (prefix, base_prefix) == (str(under_tmp / "venv"), str(under_tmp / "python"))
    assert os.path.isdir(package)  # the import path its .pth file adds (agentrig's own sources)
    # the environment shows; what was planted beside it does not (the directories on the way exist, empty)
    assert shown == [f"{under_tmp / 'secret.txt'} False", f"{under_tmp / 'tools' / 'secret.txt'} False",
                     f"/tmp/{under_tmp.name} True", "python venv"]
    # a command that needs none of it sees none of it
    shell = sandboxed.runtime.exec(f"ls -A /tmp; cat {under_tmp}/secret.txt")
    assert under_tmp.name not in shell.stdout and SECRET not in shell.stdout and "No such file" in shell.stderr


def test_scripts_under_tmp_start_through_their_interpreter_in_the_sandbox(sandboxed: Session, under_tmp: Path) -> None:
    venv = under_tmp / "venv"
    direct, found = under_tmp / "tools" / "direct", under_tmp / "tools" / "found"
    body = "import sys\nprint(sys.prefix)\nprint(open(sys.argv[1]).read())\n"
    direct.write_text(f"#!{venv}/bin/python\n{body}")
    found.write_text(f"#!/usr/bin/env -S python -I\n{body}")  # python found on the command's PATH
    for script in (direct, found):
        script.chmod(0o755)
    path = f"{venv}/bin:{os.environ['PATH']}"
    for script in (direct, found):
        result = sandboxed.runtime.exec(Invocation([str(script), str(under_tmp / "tools" / "secret.txt")],
                                                   env={"PATH": path}, timeout=60))
        assert result.exit_code == 1 and result.stdout == f"{venv}\n", (script, result.stdout, result.stderr)
        assert "FileNotFoundError" in result.stderr and SECRET not in result.stdout + result.stderr
    # a shell finds them too: its PATH's environments show
    shell = sandboxed.runtime.exec(Invocation("python -c 'import sys; print(sys.prefix)'", env={"PATH": path}, timeout=60))
    assert shell.exit_code == 0 and shell.stdout == f"{venv}\n", shell.stderr


def test_an_environment_holding_the_workspace_is_refused_in_one_line(under_tmp: Path) -> None:
    """Showing it would show the workspace's neighbours (the run directory): the command does not start."""
    runs = under_tmp / "venv" / "runs"
    runs.mkdir()
    try:
        with Session.create(base_dir=runs, runtime_options={"sandbox": "bwrap"}) as session:
            result = session.runtime.exec(Invocation([str(under_tmp / "venv" / "bin" / "python"), "-c", "print(1)"]))
            workspace = session.workspace.path
    finally:
        shutil.rmtree(runs)
    lines = result.stderr.splitlines()
    assert result.exit_code == 126 and result.stdout == "" and len(lines) == 1, result.stderr
    assert lines[0].startswith(f"agentrig: {under_tmp}/venv/bin/python cannot start in the bubblewrap sandbox: "
                               f"it needs {under_tmp}/venv, which holds {workspace}"), lines[0]
    assert "elsewhere" in lines[0]
