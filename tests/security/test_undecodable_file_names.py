"""A file the agent names with bytes that are not UTF-8 (``open(b'bad\\xff.txt', 'wb')``) used to lose
the whole problem: ``PydanticSerializationError ... surrogates not allowed``, no checkpoint recorded
though its evaluation ran. Such a name is recorded quoted as git quotes it (``"bad\\377.txt"``), the
checkpoint is kept, and restoring the snapshot gives back the file under its exact name."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from problem_kit import run_cli

BAD = b"bad\xff.txt"
# the shell's own way to name it, in a problem file (YAML) and a test command
BAD_SH = '"$(printf \'bad\\377.txt\')"'


def _problem(root: Path) -> Path:
    """Setup makes the file in the fresh workspace (as an agent's command would); checkpoint 2's
    reference solution (the oracle's) adds another one; each test checks the exact bytes are there."""
    (root / "solution2").mkdir(parents=True)
    (root / "solution1").mkdir()
    (root / "solution1" / "keep.txt").write_text("one\n")
    (root / "prompt.md").write_text("Keep the files.\n")
    with open(os.fsencode(root / "solution2") + b"/also\xfe.txt", "wb") as handle:
        handle.write(b"two\n")
    (root / "problem.yaml").write_text(
        "name: p\n"
        f"setup:\n  - printf 'hi\\n' > {BAD_SH}\n"
        "checkpoints:\n"
        "  - name: c1\n    prompt: prompt.md\n    solution: solution1\n"
        f"    test: test -f {BAD_SH}\n"
        "  - name: c2\n    prompt: prompt.md\n    solution: solution2\n"
        f"    test: test -f {BAD_SH} && test -f \"$(printf 'also\\376.txt')\"\n"
    )
    return root


@pytest.fixture
def run_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    out = tmp_path / "out"
    status, _, err = run_cli(capsys, "run", str(_problem(tmp_path / "bench")), "--agent", "oracle", "--output", str(out), "--quiet")
    assert status == 0, err
    return out


def test_a_file_name_that_is_not_utf8_keeps_every_checkpoint(run_dir: Path) -> None:
    lines = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert [(line["checkpoint"], line["passed"]) for line in lines] == [("c1", True), ("c2", True)]
    manifest = json.loads((run_dir / "p" / "c1" / "snapshot" / "manifest.json").read_text())
    assert [f["path"] for f in manifest["files"]] == ['"bad\\377.txt"', "keep.txt"]
    diff = json.loads((run_dir / "p" / "c2" / "diff.json").read_text())
    assert [f["path"] for f in diff["added"]] == ['"also\\376.txt"']
    assert '"b/also\\376.txt"' in diff["patch"]
    assert sorted(os.listdir(os.fsencode(run_dir / "p" / "c1" / "snapshot" / "files"))) == [BAD, b"keep.txt"]


def test_the_snapshot_restores_the_exact_name(run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentrig.workspace import restore_snapshot

    target = tmp_path / "restored"
    target.mkdir()
    restore_snapshot(run_dir / "p" / "c2" / "snapshot", target)
    assert sorted(os.listdir(os.fsencode(target))) == [b"also\xfe.txt", BAD, b"keep.txt"]
    assert (Path(os.fsdecode(os.fsencode(target) + b"/" + BAD))).read_bytes() == b"hi\n"
    # `evaluate` restores each snapshot and runs its test again: the test finds the exact bytes
    status, out, err = run_cli(capsys, "evaluate", str(run_dir))
    assert status == 0, err + out
    assert "2 passed" in out


def test_readers_show_the_name_quoted(run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_cli(capsys, "show", str(run_dir), "p/c2")
    assert status == 0, err
    assert '"also\\376.txt"' in out
    status, _, err = run_cli(capsys, "view", str(run_dir), "--out", str(tmp_path / "site"))
    assert status == 0, err
    assert "also\\376.txt" in (tmp_path / "site" / "runs" / "1" / "p" / "c2.html").read_text(encoding="utf-8")
    for fmt in ("jsonl", "atif"):
        status, _, err = run_cli(capsys, "export", str(run_dir), "--format", fmt)
        assert status == 0, err


def test_a_name_starting_with_a_quote_is_not_taken_for_a_quoted_one(tmp_path: Path) -> None:
    from agentrig.workspace import Snapshot, restore_snapshot, take_snapshot

    source = tmp_path / "ws"
    source.mkdir()
    names = [b'"quoted"', b"back\\slash", b"\xc3\xa9t\xc3\xa9", b"nl\nname", BAD]
    for name in names:
        with open(os.fsencode(source) + b"/" + name, "wb") as handle:
            handle.write(name)
    take_snapshot(source, tmp_path / "snap")
    target = tmp_path / "back"
    target.mkdir()
    restore_snapshot(Snapshot.load(tmp_path / "snap"), target)
    assert sorted(os.listdir(os.fsencode(target))) == sorted(names)
