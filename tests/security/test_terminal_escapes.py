"""File names, tool output and fields of a run directory used to reach the terminal raw in ``show``
and ``compare``: a file named ``ESC ] 0 ; ...`` retitled the terminal, ``ESC [ 31 m`` coloured it.
Every text that comes from a record is printed through one function
(:func:`agentrig.terminal.terminal_text`) in ``show``, ``compare``, the progress lines and error,
warning and log lines: what a terminal would act on is printed as a visible escape."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from problem_kit import one_error_line, run_cli

ESC = "\x1b"
TITLE = f"{ESC}]0;pwned\x07"
RED = f"{ESC}[31m"
BIDI = "\u202e"


def _has_raw_controls(text: str) -> bool:
    return any(ch in text for ch in (ESC, "\x07", "\x9b", "\r", BIDI))


@pytest.fixture
def run_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A real run whose files, test output and ``run.json`` fields carry escape sequences."""
    problem = tmp_path / "ts"
    (problem / "solution").mkdir(parents=True)
    (problem / "prompt.md").write_text("Write.\n")
    (problem / "solution" / f"{TITLE}title.txt").write_text("x")
    (problem / "solution" / f"{RED}red{BIDI}.txt").write_text("x")
    (problem / "problem.yaml").write_text(
        "name: ts\ncheckpoints:\n  - name: c1\n    prompt: prompt.md\n    solution: solution\n"
        '    test: printf "\\033[31mRED \\033]0;T\\007 \\r"; exit 1\n'
    )
    out = tmp_path / "out"
    status, _, err = run_cli(capsys, "run", str(problem), "--agent", "oracle", "--output", str(out), "--quiet")
    assert status == 1, err
    record = json.loads((out / "run.json").read_text())
    record["identity"]["agent"]["type"] = f"oracle{TITLE}"
    (out / "run.json").write_text(json.dumps(record))
    return out


def test_show_checkpoint_prints_no_raw_escapes(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_cli(capsys, "show", str(run_dir), "ts/c1")
    assert status == 0, err
    assert not _has_raw_controls(out + err), repr(out)
    assert "\\x1b]0;pwned\\x07title.txt" in out and "\\x1b[31mred\\u202e.txt" in out  # shown, escaped
    assert "\\x1b[31mRED" in out


def test_show_run_and_compare_print_no_raw_escapes(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["show", str(run_dir)], ["compare", str(run_dir), str(run_dir)]):
        status, out, err = run_cli(capsys, *argv)
        assert status == 0, err
        assert not _has_raw_controls(out + err), repr(out)
    assert "oracle\\x1b]0;pwned\\x07" in out


def test_error_lines_print_no_raw_escapes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run_cli(capsys, "show", str(tmp_path / f"gone{TITLE}"))
    assert status == 2
    assert not _has_raw_controls(one_error_line(err)), repr(err)


def test_progress_lines_print_no_raw_escapes() -> None:
    from agentrig.run.progress import ProgressDisplay, ProgressEvent

    for live in (False, True):
        stream = io.StringIO()
        display = ProgressDisplay(stream, live=live, verbosity=2)
        display(ProgressEvent(kind="problem_start", problem="p", message=f"image {TITLE}"))
        display(ProgressEvent(kind="log", problem="p", status="error", message=f"agent said {RED}boom"))
        display(ProgressEvent(kind="problem_end", problem="p", status="error", message=f"{TITLE} failed"))
        written = stream.getvalue().replace(f"{ESC}[J", "").replace(f"{ESC}[1F", "").replace(f"{ESC}[2F", "")
        assert "\\x1b" in written or live
        assert not _has_raw_controls(written), repr(written)


def test_logged_errors_print_no_raw_escapes(tmp_path: Path) -> None:
    """An agent's error is logged (``agent raised ...``) with whatever its message quotes; the CLI
    configures no logging, so Python's last-resort handler prints it (in a child: pytest has handlers)."""
    code = (
        "import logging, sys; from agentrig.cli import main; main(['agents', 'list', '--json']);"
        "logging.getLogger('agentrig.agent').error('agent raised AgentError: %s', sys.argv[1])"
    )
    result = subprocess.run([sys.executable, "-c", code, f"output {TITLE}{RED}"], capture_output=True, text=True,
                            cwd=tmp_path, timeout=120)
    assert "agent raised" in result.stderr and not _has_raw_controls(result.stderr), repr(result.stderr)


def test_terminal_text_keeps_lines_and_shows_undecodable_bytes() -> None:
    from agentrig.terminal import terminal_text

    assert terminal_text("a\tb\nc") == "a\tb\nc"
    assert terminal_text(b"bad\xff.txt".decode("utf-8", "surrogateescape")) == "bad\\xff.txt"
    assert terminal_text(f"{RED}x\x9b") == "\\x1b[31mx\\x9b"
