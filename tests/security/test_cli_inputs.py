"""Command-line values that used to slip past their checks: a time limit of ``nan``, a replay file that is not
one, a ``replay --output`` that is a file or lies in the run it replays, a ``--models-dir`` that is not there.
Each is refused with one line and exit status 2, before anything is created (the real CLI, in this process)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentrig.cli import main

REPO = Path(__file__).resolve().parents[2]
GREETER = REPO / "examples" / "greeter"
REPLIES = GREETER / "replay.jsonl"


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("agentrig: error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err and "Error:" not in err.replace("agentrig: error:", ""), err
    return lines[0]


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The one error line of ``agentrig ARGV``, which must exit with status 2."""
    status = main(list(argv))
    err = capsys.readouterr().err
    assert status == 2, err
    return one_error_line(err)


@pytest.fixture(scope="module")
def recorded_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run of the greeter example (two checkpoints), its model replies replayed."""
    out = tmp_path_factory.mktemp("recorded") / "run"
    assert main(["run", str(GREETER), "--agent", "react", "--model", f"replay/{REPLIES}", "--output", str(out), "-q"]) == 0
    return out


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "1e400"])
def test_test_timeout_that_would_disable_the_limit_is_refused(value: str, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    line = refused(capsys, "run", str(GREETER), "--agent", "oracle", f"--test-timeout={value}", "-o", str(tmp_path / "run"))
    assert "--test-timeout" in line and "must be a finite number above 0, at most 604800 seconds (7 days)" in line
    assert not (tmp_path / "run").exists()


def test_evaluate_test_timeout_nan_is_refused(recorded_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = (recorded_run / "results.jsonl").read_bytes()
    line = refused(capsys, "evaluate", str(recorded_run), "--test-timeout", "nan")
    assert line == "agentrig: error: --test-timeout nan: must be a finite number above 0, at most 604800 seconds (7 days)"
    assert (recorded_run / "results.jsonl").read_bytes() == before


def test_binary_replay_file_is_refused_before_the_run_directory_is_made(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    replies = tmp_path / "replies.jsonl"
    replies.write_bytes(REPLIES.read_bytes().split(b"\n")[0] + b"\n\x89PNG\r\n\x1a\n\x00\xff\xfe binary")
    line = refused(capsys, "run", str(GREETER), "--agent", "react", "--model", f"replay/{replies}", "-o", str(tmp_path / "run"))
    assert f"{replies}:2: not UTF-8 text" in line
    assert not (tmp_path / "run").exists()


def test_replay_file_of_other_records_is_refused_before_the_run_directory_is_made(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    replies = tmp_path / "replies.jsonl"
    first, *_ = REPLIES.read_text().splitlines()
    replies.write_text(first + "\n" + json.dumps({"kind": "llm_call", "model": "x"}) + "\n")
    line = refused(capsys, "run", str(GREETER), "--agent", "react", "--model", f"replay/{replies}", "-o", str(tmp_path / "run"))
    assert f"{replies}:2: not a ChatResponse" in line
    assert not (tmp_path / "run").exists()


def test_oversized_replay_file_is_refused_before_the_run_directory_is_made(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import agentrig.llm.replay

    monkeypatch.setattr(agentrig.llm.replay, "REPLAY_FILE_MAX", 1 << 10)  # the cap, made small for the test
    replies = tmp_path / "replies.jsonl"
    with replies.open("wb") as handle:
        while handle.tell() <= 1 << 10:
            handle.write(REPLIES.read_bytes())
    line = refused(capsys, "run", str(GREETER), "--agent", "react", "--model", f"replay/{replies}", "-o", str(tmp_path / "run"))
    assert f"{replies}: replay file is larger than 1 KB" in line
    assert not (tmp_path / "run").exists()


def test_replay_output_that_is_an_existing_file_is_refused(recorded_run: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    existing = tmp_path / "notes.txt"
    existing.write_text("mine")
    line = refused(capsys, "replay", str(recorded_run / "greeter" / "greet_function"), "--output", str(existing))
    assert line == f"agentrig: error: --output {existing}: exists and is not a directory; give a new or empty directory"
    assert existing.read_text() == "mine"


def test_replay_output_inside_the_replayed_run_is_refused(recorded_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    checkpoint = recorded_run / "greeter" / "greet_function"
    before = {p: p.read_bytes() for p in sorted(recorded_run.rglob("*")) if p.is_file()}
    for output in (checkpoint, recorded_run / "kept", recorded_run):
        line = refused(capsys, "replay", str(checkpoint), "--output", str(output))
        assert f"--output {output}: inside the run directory" in line
    assert {p: p.read_bytes() for p in sorted(recorded_run.rglob("*")) if p.is_file()} == before  # the record is intact
    assert not (recorded_run / "kept").exists()


def test_replay_output_holding_files_is_refused(recorded_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "trajectory.jsonl").write_text("an earlier replay's steps\n")
    line = refused(capsys, "replay", str(recorded_run / "greeter" / "greet_function"), "--output", str(kept))
    assert line == f"agentrig: error: --output {kept}: not empty; give a new or empty directory"
    assert (kept / "trajectory.jsonl").read_text() == "an earlier replay's steps\n"  # not appended to


def test_models_dir_that_does_not_exist_is_refused_for_any_agent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nonexistent"
    line = refused(capsys, "run", str(GREETER), "--agent", "oracle", "--models-dir", str(missing), "-o", str(tmp_path / "run"))
    assert line == f"agentrig: error: --models-dir {missing}: no such directory"
    assert not (tmp_path / "run").exists()


def test_models_dir_that_is_a_file_is_refused_for_any_agent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    afile = tmp_path / "models.yaml"
    shutil.copyfile(REPO / "packages/core/src/agentrig/catalog/data/openai.yaml", afile)
    line = refused(capsys, "run", str(GREETER), "--agent", "oracle", "--models-dir", str(afile), "-o", str(tmp_path / "run"))
    assert line == f"agentrig: error: --models-dir {afile}: not a directory"
    assert not (tmp_path / "run").exists()


def test_models_dir_with_an_invalid_catalog_file_is_refused_for_any_agent(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    models = tmp_path / "models"
    models.mkdir()
    (models / "mine.yaml").write_text("models:\n  - {provider: openai\n")
    line = refused(capsys, "run", str(GREETER), "--agent", "oracle", "--models-dir", str(models), "-o", str(tmp_path / "run"))
    assert f"--models-dir {models}: {models / 'mine.yaml'}: invalid YAML at line" in line
    assert not (tmp_path / "run").exists()


def test_models_dir_with_a_binary_catalog_file_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    models = tmp_path / "models"
    models.mkdir()
    (models / "mine.yaml").write_bytes(b"models: []\n\xff\xfe\x00binary")
    line = refused(capsys, "run", str(GREETER), "--agent", "react", "--model", f"replay/{REPLIES}",
                   "--models-dir", str(models), "-o", str(tmp_path / "run"))
    assert line == f"agentrig: error: --models-dir {models}: {models / 'mine.yaml'}: line 2 is not UTF-8 text"
    assert not (tmp_path / "run").exists()
