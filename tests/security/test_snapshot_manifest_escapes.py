"""Issue 32, section 1: a run directory someone sent restores a checkpoint's snapshot from its
``snapshot/manifest.json``. ``evaluate`` and ``replay`` restored it unchecked: a manifest listing
a link ``esc -> /some/dir`` and a file ``esc/x.txt`` wrote into that directory, and a path
``../../../../tmp/victim/file`` (or ``/tmp/victim/file``) truncated that file, before the restore
failed with ``WorkspaceError ... corrupt``; ``--from`` refused those but restored a lone link
leading out, and ``--resume`` of a sent run restored anything.

Now every restore of a snapshot read back (``evaluate``, ``replay``, ``run --from``, ``run
--resume``) goes through one check, before anything is written: an entry whose path is
absolute, has ``..`` or lies below a link entry is refused, and so is a link leading out of the
snapshot; the command ends with one line naming the manifest and the entry."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from agentrig.cli import main

REPO = Path(__file__).resolve().parents[2]
GREETER = REPO / "examples" / "greeter"
REPLIES = f"replay/{GREETER / 'replay.jsonl'}"
PLANTED = b"planted by a sent run\n"


def _file_entry(snapshot: Path, path: str, source: str, data: bytes) -> dict[str, object]:
    """A manifest entry for ``path`` whose content (stored at ``files/<source>``) matches it."""
    stored = snapshot / "files" / source
    stored.parent.mkdir(parents=True, exist_ok=True)
    stored.write_bytes(data)
    return {"path": path, "kind": "file", "size": len(data), "sha256": hashlib.sha256(data).hexdigest(), "mode": 0o644}


def _link_below(snapshot: Path, victim: Path) -> list[dict[str, object]]:
    return [
        {"path": "esc", "kind": "symlink", "target": str(victim.parent), "mode": 0o777},
        _file_entry(snapshot, "esc/planted.txt", "esc_dir/planted.txt", PLANTED),
    ]


def _climbing(snapshot: Path, victim: Path) -> list[dict[str, object]]:
    return [_file_entry(snapshot, "../" * 30 + str(victim).lstrip("/"), "climb.txt", PLANTED)]


def _absolute(snapshot: Path, victim: Path) -> list[dict[str, object]]:
    return [_file_entry(snapshot, str(victim), "absolute.txt", PLANTED)]


def _link_out(snapshot: Path, victim: Path) -> list[dict[str, object]]:
    # alone, a link writes nothing; but whatever follows it later (the tests, the next copy) leaves the snapshot
    return [{"path": "sub/up", "kind": "symlink", "target": "../" * 12 + str(victim.parent).lstrip("/"), "mode": 0o777}]


def _link_chain_out(snapshot: Path, victim: Path) -> list[dict[str, object]]:
    # each target stays inside by its text, yet ``a`` resolves through ``x/c`` (the snapshot's root) to its parent
    return [
        {"path": "x/c", "kind": "symlink", "target": "..", "mode": 0o777},
        {"path": "a", "kind": "symlink", "target": "x/c/..", "mode": 0o777},
    ]


CRAFTED: dict[str, Callable[[Path, Path], list[dict[str, object]]]] = {
    "file_below_a_link_out": _link_below,
    "climbing_path": _climbing,
    "absolute_path": _absolute,
    "link_out": _link_out,
    "link_chain_out": _link_chain_out,
}
#: What the one line names, per crafted manifest.
NAMED = {
    "file_below_a_link_out": "'esc",
    "climbing_path": "../../",
    "absolute_path": "is an absolute path",
    "link_out": "sub/up",
    "link_chain_out": "'a'",
}


def _plant(snapshot: Path, crafted: str, victim: Path) -> None:
    manifest_file = snapshot / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    entries = CRAFTED[crafted](snapshot, victim)
    manifest["files"] = entries + manifest["files"]  # first: written before any honest file fails
    manifest_file.write_text(json.dumps(manifest))


def _victim(tmp_path: Path) -> tuple[Path, Path]:
    directory = tmp_path / "victim"
    directory.mkdir()
    victim = directory / "file"
    victim.write_text("the user's data\n")
    return directory, victim


def _check_untouched(directory: Path, victim: Path) -> None:
    assert victim.read_text() == "the user's data\n", "the victim file was written"
    assert sorted(p.name for p in directory.iterdir()) == ["file"], "a file was written into the victim directory"


def _one_error(err: str, crafted: str) -> str:
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if "manifest.json" in line]
    assert lines, err
    assert NAMED[crafted] in lines[0], lines
    return lines[0]


def _sent(greeter_run: Path, tmp_path: Path) -> Path:
    sent = tmp_path / "sent"
    shutil.copytree(greeter_run, sent, symlinks=True)
    return sent


@pytest.mark.parametrize("command", ["evaluate", "replay", "fork"])
@pytest.mark.parametrize("crafted", sorted(CRAFTED))
def test_a_snapshot_manifest_that_writes_outside_is_refused_before_anything_is_written(
    greeter_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], crafted: str, command: str
) -> None:
    sent = _sent(greeter_run, tmp_path)
    directory, victim = _victim(tmp_path)
    # evaluate restores this snapshot, replay of command_line starts from it, a fork starts from it
    _plant(sent / "greeter" / "greet_function" / "snapshot", crafted, victim)
    args = {
        "evaluate": ["evaluate", str(sent), "greeter/greet_function"],
        "replay": ["replay", str(sent / "greeter" / "command_line")],
        "fork": ["run", str(GREETER), "--agent", "react", "--model", REPLIES, "--output", str(tmp_path / "fork"),
                 "--from", str(sent / "greeter" / "greet_function"), "-q"],
    }[command]

    assert main(args) == 2
    _check_untouched(directory, victim)
    _one_error(capsys.readouterr().err, crafted)
    assert not (sent / "greeter" / "greet_function" / "evaluations").exists()


@pytest.mark.parametrize("crafted", sorted(CRAFTED))
def test_resume_refuses_a_snapshot_manifest_that_writes_outside(
    greeter_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], crafted: str
) -> None:
    sent = _sent(greeter_run, tmp_path)
    directory, victim = _victim(tmp_path)
    _plant(sent / "greeter" / "greet_function" / "snapshot", crafted, victim)
    results = sent / "results.jsonl"
    lines = results.read_text().splitlines()
    results.write_text("\n".join(line for line in lines if json.loads(line)["checkpoint"] != "command_line") + "\n")

    status = main(["run", str(GREETER), "--agent", "react", "--model", REPLIES, "--output", str(sent), "--resume"])
    assert status == 3
    _check_untouched(directory, victim)
    line = _one_error(capsys.readouterr().err, crafted)
    assert line.startswith("greeter: failed: ProblemRunError: cannot resume greeter: "), line
    assert "command_line" not in results.read_text(), "the checkpoint after a refused restore was run"
