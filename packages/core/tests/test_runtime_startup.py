"""What a sandboxed command needs to start, and what of it a bubblewrap sandbox shows (real files under /tmp).

:mod:`agentrig.runtime.startup` follows a program to its file, interpreters and
environments; :func:`agentrig.runtime.sandbox.with_startup` binds, read-only,
those the sandbox would hide, and refuses, in one line, those it must not show.
No sandbox is started here: ``tests/security/test_local_sandbox_tmp.py`` runs them.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentrig.runtime.sandbox import BwrapSpec, SandboxStartError, bwrap_argv, with_startup
from agentrig.runtime.startup import program_needs


@pytest.fixture
def under_tmp() -> Iterator[Path]:
    """A directory right under /tmp: what the sandbox's private /tmp hides."""
    root = Path(tempfile.mkdtemp(prefix="agentrig-test-startup-", dir="/tmp"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def _needs(program: Path, search_path: str = "") -> list[str]:
    """What ``program`` needs under its /tmp directory (its ``#!`` line's ``/usr/bin/env`` lies elsewhere)."""
    root = "/".join(str(program).split("/")[:3])
    return [need.path for need in program_needs(str(program), search_path=search_path) if need.path.startswith(root)]


def test_a_node_cli_needs_its_node_modules_and_the_node_its_env_line_finds(under_tmp: Path) -> None:
    cli = _executable(under_tmp / "cache/claude/node_modules/@scope/cli/cli.js", "#!/usr/bin/env node\n")
    link = under_tmp / "cache/claude/node_modules/.bin/claude"
    link.parent.mkdir()
    link.symlink_to("../@scope/cli/cli.js")
    node = _executable(under_tmp / "node/bin/node", "")
    needs = _needs(link, search_path=f"{under_tmp}/node/bin")
    assert needs == [str(under_tmp / "cache/claude/node_modules"), str(node)]
    assert str(cli) not in needs  # inside the node_modules shown whole


@pytest.mark.parametrize("line", ["python3 -u", "-S python3 -u", "-Spython3", "-i PYTHONHASHSEED=0 python3", "-u HOME python3"])
def test_an_env_line_runs_the_program_it_names_after_its_options(under_tmp: Path, line: str) -> None:
    python = _executable(under_tmp / "bin/python3", "")
    script = _executable(under_tmp / "script", f"#!/usr/bin/env {line}\nprint(1)\n")
    assert _needs(script, search_path=f"{under_tmp}/bin") == [str(script), str(python)]


def test_a_venv_needs_itself_its_base_installation_and_what_its_pth_files_add(under_tmp: Path) -> None:
    base = under_tmp / "pythons/3.11"
    _executable(base / "bin/python3.11", "")
    (base / "lib/python3.11").mkdir(parents=True)
    (base / "lib/python3.11/os.py").write_text("")
    venv = under_tmp / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin/python").symlink_to(base / "bin/python3.11")
    (venv / "pyvenv.cfg").write_text(f"home = {base}/bin\nversion_info = 3.11.7\n")
    site = venv / "lib/python3.11/site-packages"
    site.mkdir(parents=True)
    (under_tmp / "src").mkdir()
    (site / "_editable.pth").write_text(f"# an editable install\n{under_tmp}/src\nimport _hook\n../../../../missing\n")
    (site / "local.pth").write_text("vendored\n")
    (site / "vendored").mkdir()
    assert _needs(venv / "bin/python") == [str(venv), str(under_tmp / "src"), str(site / "vendored"), str(base)]
    # a console script of the venv: the venv, through its #! line
    tool = _executable(venv / "bin/tool", f"#!{venv}/bin/python\n")
    assert _needs(tool)[0] == str(venv)


def test_the_sandbox_binds_what_lies_under_tmp_read_only_between_the_private_tmp_and_the_writable_directories(
    under_tmp: Path,
) -> None:
    program = _executable(under_tmp / "tools/run", "#!/bin/sh\n")
    (under_tmp / "ws").mkdir()
    spec = with_startup(BwrapSpec(writable=(str(under_tmp / "ws"),)), [str(program)], search_path="/tmp", cwd="/")
    assert str(program) in spec.startup
    assert "/tmp" not in spec.startup and "/bin/sh" not in spec.startup  # /tmp is never shown whole; /bin shows
    argv = bwrap_argv(spec, [str(program)], program="/usr/bin/bwrap")
    bound = argv.index(str(program)) - 1
    assert argv[bound] == "--ro-bind" and argv.index("/tmp") < bound < argv.index("--bind")


def test_what_cannot_be_shown_safely_is_refused_in_one_line_naming_it(under_tmp: Path) -> None:
    hidden = under_tmp / "credentials"
    program = _executable(hidden / "tool", "#!/bin/sh\n")
    spec = BwrapSpec(writable=(str(under_tmp / "ws"),), hidden=(str(hidden),))
    with pytest.raises(SandboxStartError, match=f"^{program} cannot start in the bubblewrap sandbox: it needs "
                       f"{program}, which lies under {hidden}, which the sandbox hides .*: install it elsewhere$"):
        with_startup(spec, [str(program)], search_path="", cwd="/")
    # a relative program is found from where the command starts, the workspace's environment with it
    (under_tmp / "ws").mkdir()
    venv_tool = _executable(under_tmp / "env/bin/tool", "#!/bin/sh\n")
    (under_tmp / "env/pyvenv.cfg").write_text("")
    (under_tmp / "env/ws").mkdir()
    with pytest.raises(SandboxStartError, match=f"it needs {under_tmp}/env, which holds {under_tmp}/env/ws"):
        with_startup(BwrapSpec(writable=(str(under_tmp / "env/ws"),)), ["../bin/tool"], search_path="",
                     cwd=str(under_tmp / "env/ws"))
    # nor one holding a hidden directory (agentrig's credentials): the bind would show it again
    credentials = under_tmp / "env/credentials"
    with pytest.raises(SandboxStartError, match=f"it needs {under_tmp}/env, which holds {credentials}"):
        with_startup(BwrapSpec(writable=(str(under_tmp / "ws"),), hidden=(str(credentials),)), [str(venv_tool)],
                     search_path="", cwd="/")
