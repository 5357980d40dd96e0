"""Issue 20, section 2: names read back from a run directory someone sent (``results.jsonl``,
``problem.json``, ``run.json``) are checked with the rule of load time. ``view --out`` and
``export`` wrote ``/tmp/x.html`` and ``/tmp/x.json`` for a checkpoint named ``/tmp/x`` or
``../../../../tmp/x``; now such a record is left out with one warning line naming the file and
the name, the rest of the report is written, and nothing lands outside the output directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentrig.cli import main
from agentrig.testing.runs import outcome_run


def _warnings(err: str) -> list[str]:
    assert "Traceback" not in err and "agentrig: error" not in err, err
    return [line for line in err.splitlines() if line.startswith("agentrig: warning:")]


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _add_result(run: Path, problem: str, checkpoint: str) -> None:
    """One more ``results.jsonl`` line, a copy of the first with the names replaced."""
    first = json.loads((run / "results.jsonl").read_text().splitlines()[0])
    first.update(problem=problem, checkpoint=checkpoint)
    with open(run / "results.jsonl", "a") as handle:
        handle.write(json.dumps(first) + "\n")


def _crafted_names(tmp_path: Path, out: Path) -> list[str]:
    """An absolute name, and a relative one that climbs from a page (``runs/1/alpha/X``) or an
    export (``alpha/X``) under ``out`` to ``tmp_path/escaped``."""
    up = "../" * (len(out.relative_to(tmp_path).parts) + 3)
    return [str(tmp_path / "abs"), f"{up}escaped"]


@pytest.mark.parametrize("command", ["view", "export-atif"])
def test_checkpoint_names_in_results_jsonl_cannot_place_files_outside_the_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    run = outcome_run(tmp_path / "sent" / "run")
    out = tmp_path / "mine" / "report"
    out.parent.mkdir()
    names = _crafted_names(tmp_path, out)
    for name in names:
        _add_result(run, "alpha", name)
    before = _files(tmp_path)
    args = ["view", str(run), "--out", str(out)] if command == "view" else ["export", str(run), "--format", "atif", "-o", str(out)]

    assert main(args) == 0
    warnings = _warnings(capsys.readouterr().err)
    new_outside = {f for f in _files(tmp_path) - before if not (tmp_path / f).is_relative_to(out)}
    assert new_outside == set(), "written outside the output directory"
    assert len([w for w in warnings if "results.jsonl line" in w]) == 1, warnings
    first = next(w for w in warnings if "results.jsonl line" in w)
    assert "results.jsonl line 7" in first and names[0] in first and "not a valid name" in first
    assert any("2 lines left out" in w for w in warnings)
    # the rest of the report is there
    written = _files(out)
    if command == "view":
        assert "index.html" in written and "runs/1/alpha/first.html" in written and "runs/1/beta/only.html" in written
    else:
        assert {"alpha/first.json", "beta/only.json", "gamma/free.json"} <= written


@pytest.mark.parametrize("command", ["view", "export-atif", "export-jsonl"])
def test_checkpoint_names_in_problem_json_cannot_place_files_outside_the_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    run = outcome_run(tmp_path / "sent" / "run")
    out = tmp_path / "mine" / "report"
    out.parent.mkdir()
    name = _crafted_names(tmp_path, out)[1]
    problem = json.loads((run / "run.json").read_text())["problems"]["alpha"]  # a worker's problem.json
    problem["checkpoints"].append(name)
    (run / "alpha" / "problem.json").write_text(json.dumps(problem))
    # a started checkpoint of that name: its directory exists where the name leads
    (run / "alpha" / name).mkdir(parents=True, exist_ok=True)
    before = _files(tmp_path)
    args = {
        "view": ["view", str(run), "--out", str(out)],
        "export-atif": ["export", str(run), "--format", "atif", "-o", str(out)],
        "export-jsonl": ["export", str(run), "--format", "jsonl", "-o", str(out / "steps.jsonl")],
    }[command]

    assert main(args) == 0
    warnings = _warnings(capsys.readouterr().err)
    new_outside = {f for f in _files(tmp_path) - before if not (tmp_path / f).is_relative_to(out)}
    assert new_outside == set()
    assert len([w for w in warnings if "problem.json" in w]) == 1
    warning = next(w for w in warnings if "problem.json" in w)
    assert str(run / "alpha" / "problem.json") in warning and name in warning and "not a valid name" in warning
    if command == "export-jsonl":
        assert name not in (out / "steps.jsonl").read_text()
    assert _files(out), "the rest of the report was not written"


def test_problem_names_in_run_json_are_left_out_with_a_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = outcome_run(tmp_path / "sent" / "run")
    record = json.loads((run / "run.json").read_text())
    record["problems"]["/etc"] = dict(record["problems"]["alpha"], name="/etc")
    (run / "run.json").write_text(json.dumps(record))
    out = tmp_path / "report"

    assert main(["view", str(run), "--out", str(out)]) == 0
    warnings = _warnings(capsys.readouterr().err)
    assert any("run.json: problem '/etc' is not a valid name; left out" in w for w in warnings), warnings
    assert ">/etc<" not in (out / "index.html").read_text() and not (out / "runs" / "1" / "etc").exists()
    assert main(["show", str(run), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert "/etc" not in {p["name"] for p in summary["problems"]} | {c["problem"] for c in summary["checkpoints"]}
    assert any("run.json: problem '/etc' is not a valid name" in n for n in summary["notices"])


@pytest.mark.parametrize("format", ["atif", "jsonl"])
def test_export_default_output_is_not_written_through_a_link_out_of_the_sent_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], format: str
) -> None:
    run = outcome_run(tmp_path / "sent" / "run")
    elsewhere = tmp_path / "home" / ".config"
    elsewhere.mkdir(parents=True)
    (run / "exports").symlink_to(elsewhere, target_is_directory=True)  # planted by whoever sent the run

    assert main(["export", str(run), "--format", format]) == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("agentrig: error:")]
    assert len(errors) == 1 and "Traceback" not in err, err
    assert "refusing to write" in errors[0] and f"not inside {run}" in errors[0]
    assert list(elsewhere.iterdir()) == []
