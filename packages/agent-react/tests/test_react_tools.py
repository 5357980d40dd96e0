"""Each built-in tool against a temporary workspace; bash in the real local runtime."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentrig.runtime.local import LocalRuntime
from agentrig_react.builtin_tools import bash, edit_file, list_dir, read_file, submit, write_file
from agentrig_react.context import ToolContext


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[LocalRuntime]:
    rt = LocalRuntime(tmp_path)
    try:
        yield rt
    finally:
        rt.cleanup()


@pytest.fixture
def ctx(tmp_path: Path, runtime: LocalRuntime) -> ToolContext:
    return ToolContext(root=tmp_path, workdir=runtime.workdir, runtime=runtime, command_timeout=10, max_output_chars=2000)


# -- bash -------------------------------------------------------------------


def test_bash_runs_in_the_workspace_with_exit_code(ctx: ToolContext, tmp_path: Path) -> None:
    out = bash.invoke(ctx, {"command": "echo hi > a.txt; pwd; echo oops >&2; exit 3"})
    assert not out.is_error and out.exit_code == 3
    assert str(tmp_path.resolve()) in out.content and "oops" in out.content
    assert out.content.endswith("[exit code 3]")
    assert (tmp_path / "a.txt").read_text() == "hi\n"


def test_bash_without_output(ctx: ToolContext) -> None:
    assert bash.invoke(ctx, {"command": "true"}).content == "(no output)\n[exit code 0]"


def test_bash_timeout_is_a_tool_error_and_kills_the_command(ctx: ToolContext, tmp_path: Path) -> None:
    out = bash.invoke(ctx, {"command": "echo $$ > shell.pid; echo started; sleep 30; echo late > late.txt", "timeout": 0.5})
    assert out.is_error and "timed out after 0.5 s" in out.content and "started" in out.content
    shell = int((tmp_path / "shell.pid").read_text())
    assert not os.path.exists(f"/proc/{shell}") and not (tmp_path / "late.txt").exists()


def test_bash_timeout_capped_by_the_deadline(ctx: ToolContext) -> None:
    ctx.deadline = time.monotonic() + 0.3
    out = bash.invoke(ctx, {"command": "sleep 30"})
    assert out.is_error and "timed out" in out.content


def test_bash_long_output_truncated_with_head_and_tail(ctx: ToolContext) -> None:
    out = bash.invoke(ctx, {"command": "seq 1 5000"})
    assert out.content.startswith("1\n2\n3\n") and out.content.endswith("5000\n[exit code 0]")
    assert "cut from the middle" in out.content


def test_bash_empty_command_is_an_error(ctx: ToolContext) -> None:
    out = bash.invoke(ctx, {"command": "  "})
    assert out.is_error and "command is empty" in out.content


# -- read_file ----------------------------------------------------------------


def test_read_file_whole_and_ranges(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("".join(f"line{i}\n" for i in range(1, 13)))
    whole = read_file.invoke(ctx, {"path": "f.txt"}).content
    assert whole.splitlines()[0] == " 1\tline1" and whole.splitlines()[-1] == "12\tline12"
    part = read_file.invoke(ctx, {"path": "f.txt", "start_line": 3, "end_line": 4}).content
    assert part == "[f.txt: lines 3-4 of 12]\n3\tline3\n4\tline4"
    tail = read_file.invoke(ctx, {"path": str(tmp_path / "f.txt"), "start_line": 11, "end_line": 99}).content
    assert tail.endswith("12\tline12") and "lines 11-12 of 12" in tail


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"path": "missing.txt"}, "no such file: missing.txt"),
        ({"path": "sub"}, "is a directory: use list_dir"),
        ({"path": "f.txt", "start_line": 0}, "start_line must be 1 or more"),
        ({"path": "f.txt", "start_line": 9}, "past the end of f.txt (2 lines)"),
        ({"path": "f.txt", "start_line": 2, "end_line": 1}, "before start_line"),
        ({"path": "bin.dat"}, "looks binary"),
        ({"path": "../outside.txt"}, "outside the workspace"),
        ({"path": "/etc/passwd"}, "outside the workspace"),
        ({"path": "link"}, "outside the workspace"),
    ],
)
def test_read_file_errors(ctx: ToolContext, tmp_path: Path, args: dict, message: str) -> None:
    (tmp_path / "f.txt").write_text("a\nb\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "bin.dat").write_bytes(b"\x00\x01\x02")
    os.symlink("/etc/hostname", tmp_path / "link")
    out = read_file.invoke(ctx, args)
    assert out.is_error and message in out.content


# -- write_file / edit_file -----------------------------------------------------


def test_write_file_creates_parents_and_overwrites(ctx: ToolContext, tmp_path: Path) -> None:
    out = write_file.invoke(ctx, {"path": "pkg/mod/x.py", "content": "a = 1\nb = 2\n"})
    assert out.content == "created pkg/mod/x.py (12 bytes, 2 lines)"
    assert (tmp_path / "pkg/mod/x.py").read_text() == "a = 1\nb = 2\n"
    (tmp_path / "pkg/mod/x.py").chmod(0o755)
    assert write_file.invoke(ctx, {"path": "pkg/mod/x.py", "content": "c"}).content.startswith("overwrote")
    assert (tmp_path / "pkg/mod/x.py").read_text() == "c"
    assert (tmp_path / "pkg/mod/x.py").stat().st_mode & 0o777 == 0o755
    assert sorted(p.name for p in (tmp_path / "pkg/mod").iterdir()) == ["x.py"]  # no temp files left


def test_write_file_outside_the_workspace_is_refused(ctx: ToolContext, tmp_path: Path) -> None:
    out = write_file.invoke(ctx, {"path": "../escape.txt", "content": "x"})
    assert out.is_error and "outside the workspace" in out.content
    assert not (tmp_path.parent / "escape.txt").exists()


def test_edit_file_replaces_a_unique_string(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def f():\n    return 1\n\ndef g():\n    return 2\n")
    out = edit_file.invoke(ctx, {"path": "m.py", "old_text": "return 2", "new_text": "return 3"})
    assert out.content == "replaced 1 occurrence in m.py (first at line 5)"
    assert (tmp_path / "m.py").read_text().endswith("return 3\n")


def test_edit_file_missing_text_fails_clearly(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def f():\n    return 1\n")
    out = edit_file.invoke(ctx, {"path": "m.py", "old_text": "return 9", "new_text": "x"})
    assert out.is_error and "old_text not found in m.py" in out.content
    ws = edit_file.invoke(ctx, {"path": "m.py", "old_text": "def f():\n  return 1", "new_text": "x"})
    assert ws.is_error and "matches if whitespace is ignored" in ws.content
    assert (tmp_path / "m.py").read_text() == "def f():\n    return 1\n"


def test_edit_file_ambiguous_text_fails_unless_replace_all(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("x = 1\ny = 1\nz = 1\n")
    out = edit_file.invoke(ctx, {"path": "m.py", "old_text": "= 1", "new_text": "= 2"})
    assert out.is_error and "occurs 3 times in m.py (lines 1, 2, 3)" in out.content
    assert (tmp_path / "m.py").read_text() == "x = 1\ny = 1\nz = 1\n"
    done = edit_file.invoke(ctx, {"path": "m.py", "old_text": "= 1", "new_text": "= 2", "replace_all": True})
    assert done.content == "replaced 3 occurrences in m.py (first at line 1)"
    assert (tmp_path / "m.py").read_text() == "x = 2\ny = 2\nz = 2\n"


def test_edit_file_other_errors(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("a\n")
    assert "no such file: nope.py" in edit_file.invoke(ctx, {"path": "nope.py", "old_text": "a", "new_text": "b"}).content
    assert "old_text is empty" in edit_file.invoke(ctx, {"path": "m.py", "old_text": "", "new_text": "b"}).content
    assert "are the same" in edit_file.invoke(ctx, {"path": "m.py", "old_text": "a", "new_text": "a"}).content


# -- list_dir / submit ------------------------------------------------------------


def test_list_dir(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "src/pkg").mkdir(parents=True)
    (tmp_path / "src/pkg/a.py").write_text("abc")
    (tmp_path / "README").write_text("hello")
    top = list_dir.invoke(ctx, {}).content
    assert top == "./\nsrc/\nREADME  5"
    deep = list_dir.invoke(ctx, {"path": "src", "depth": 3}).content
    assert deep == "src/\npkg/\n  a.py  3"
    assert list_dir.invoke(ctx, {"path": "src/pkg/a.py"}).is_error
    assert "between 1 and 5" in list_dir.invoke(ctx, {"depth": 9}).content
    (tmp_path / "empty").mkdir()
    assert list_dir.invoke(ctx, {"path": "empty"}).content == "empty/ (empty)"


def test_submit_marks_the_end(ctx: ToolContext) -> None:
    out = submit.invoke(ctx, {"answer": "done: 42"})
    assert out.submitted and out.content == "done: 42"
