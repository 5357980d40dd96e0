"""Issue 20, section 2: ``view``, ``show`` and the exports followed symbolic links inside a run
directory someone sent (a ``prompt.txt`` linked to a secret file showed the secret). Now a link
that leaves the run directory is never followed: the file is left out with one warning line
naming it, and the secret appears nowhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentrig.cli import main
from agentrig.testing.runs import outcome_run

SECRET = "OPENAI_API_KEY=sk-this-must-not-be-shown"


def _secret_file(tmp_path: Path) -> Path:
    secret = tmp_path / "home" / ".secrets"
    secret.parent.mkdir(parents=True)
    secret.write_text(SECRET + "\n")
    return secret


def _secret_trajectory(tmp_path: Path) -> Path:
    """A file outside the run that reads as a trajectory: a user step holding the secret."""
    path = tmp_path / "home" / "trajectory.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    step = {"kind": "user", "content": SECRET, "timestamp": "2026-01-02T03:04:05Z"}
    path.write_text(json.dumps(step) + "\n")
    return path


def _replace_with_link(path: Path, target: Path) -> None:
    path.unlink()
    path.symlink_to(target)


def _everything(root: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in root.rglob("*") if p.is_file())


def test_show_does_not_follow_a_prompt_linked_to_a_secret(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = outcome_run(tmp_path / "sent")
    _replace_with_link(run / "alpha" / "first" / "prompt.txt", _secret_file(tmp_path))

    assert main(["show", str(run), "alpha/first"]) == 0
    captured = capsys.readouterr()
    assert "sk-this-must-not-be-shown" not in captured.out + captured.err
    assert f"{run / 'alpha' / 'first' / 'prompt.txt'}: a symbolic link leading outside" in captured.out + captured.err
    assert main(["show", str(run), "alpha/first", "--json"]) == 0
    assert "sk-this-must-not-be-shown" not in capsys.readouterr().out


def test_show_does_not_follow_a_checkpoint_directory_linked_outside(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = outcome_run(tmp_path / "sent")
    elsewhere = tmp_path / "home" / "elsewhere"
    elsewhere.mkdir(parents=True)
    (elsewhere / "prompt.txt").write_text(SECRET)
    (elsewhere / "trajectory.jsonl").write_text(_secret_trajectory(tmp_path).read_text())
    target = run / "alpha" / "first"
    os.rename(target, tmp_path / "moved")
    target.symlink_to(elsewhere, target_is_directory=True)

    assert main(["show", str(run), "alpha/first"]) == 0
    captured = capsys.readouterr()
    assert "sk-this-must-not-be-shown" not in captured.out + captured.err
    assert "a symbolic link leading outside" in captured.out + captured.err


@pytest.mark.parametrize("linked", ["prompt.txt", "trajectory.jsonl"])
def test_view_out_does_not_follow_links_to_secrets(tmp_path: Path, capsys: pytest.CaptureFixture[str], linked: str) -> None:
    run = outcome_run(tmp_path / "sent")
    target = _secret_file(tmp_path) if linked == "prompt.txt" else _secret_trajectory(tmp_path)
    _replace_with_link(run / "alpha" / "first" / linked, target)
    out = tmp_path / "report"

    assert main(["view", str(run), "--out", str(out)]) == 0
    capsys.readouterr()
    assert "sk-this-must-not-be-shown" not in _everything(out)
    page = (out / "runs" / "1" / "alpha" / "first.html").read_text()
    assert "a symbolic link leading outside" in page


@pytest.mark.parametrize("format", ["atif", "jsonl"])
def test_export_does_not_follow_a_trajectory_linked_to_a_secret(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], format: str
) -> None:
    run = outcome_run(tmp_path / "sent")
    _replace_with_link(run / "alpha" / "first" / "trajectory.jsonl", _secret_trajectory(tmp_path))
    out = tmp_path / "export"

    assert main(["export", str(run), "--format", format, "-o", str(out if format == "atif" else out / "steps.jsonl")]) == 0
    err = capsys.readouterr().err
    assert "sk-this-must-not-be-shown" not in _everything(out)
    warnings = [line for line in err.splitlines() if "symbolic link" in line]
    assert warnings == [
        f"agentrig: warning: {run / 'alpha' / 'first' / 'trajectory.jsonl'}: a symbolic link leading outside {run}; not read"
    ]


def test_run_records_linked_outside_are_not_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = outcome_run(tmp_path / "sent")
    outside = tmp_path / "home" / "results.jsonl"
    outside.parent.mkdir(parents=True)
    os.rename(run / "results.jsonl", outside)
    (run / "results.jsonl").symlink_to(outside)

    assert main(["show", str(run), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["checkpoints"] == [] or all(c["status"] != "passed" for c in summary["checkpoints"])
    assert any("results.jsonl: a symbolic link leading outside" in n for n in summary["notices"])


def test_show_does_not_hang_on_a_fifo_in_place_of_the_prompt(tmp_path: Path) -> None:
    run = outcome_run(tmp_path / "sent")
    prompt = run / "alpha" / "first" / "prompt.txt"
    prompt.unlink()
    os.mkfifo(prompt)
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from agentrig.cli import main; sys.exit(main(sys.argv[1:]))", "show", str(run), "alpha/first"],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert f"{prompt}: not a regular file; not read" in done.stdout + done.stderr
