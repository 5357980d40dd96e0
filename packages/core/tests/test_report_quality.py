"""Code quality in ``show`` and ``compare`` (text and ``--json``), read from the ``quality.json`` files the real
``agentrig evaluate --metrics`` writes for slopcode-shaped runs (:mod:`agentrig.testing.quality_runs`): per-run totals and
their growth, figures per checkpoint, the functions that grew most; a broken or escaping ``quality.json``
is one warning line naming it; a run without any shows nothing extra."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentrig.cli import main
from agentrig.testing.quality_runs import measured_run


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Run [1] grows ``parse`` by three branches a checkpoint and turns sloppy at the end; run [2] by one."""
    root = tmp_path_factory.mktemp("quality")
    return measured_run(root / "a", 3, sloppy=True), measured_run(root / "b", 1)


def quality(run: Path, problem: str, checkpoint: str) -> dict[str, Any]:
    return json.loads((run / problem / checkpoint / "quality.json").read_text())


def figure(record: dict[str, Any], metric: str, name: str) -> float:
    return record["metrics"][metric]["figures"][name]


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[str, str]:
    capsys.readouterr()
    assert main(list(args)) == 0
    out = capsys.readouterr()
    return out.out, out.err


def test_complexity_records_each_functions_length(runs: tuple[Path, Path]) -> None:
    rows = quality(runs[0], "erosion", "checkpoint_3")["metrics"]["complexity"]["details"]["functions"]
    parse = next(r for r in rows if r["name"] == "parse")
    assert (parse["cc"], parse["lines"]) == (8, 16)  # 7 branches: 7 + 1 decisions, def + 14 + return


def test_show_prints_totals_with_growth_and_the_worst_growing_functions(runs: tuple[Path, Path],
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    a = runs[0]
    last, first = quality(a, "erosion", "checkpoint_3"), quality(a, "erosion", "checkpoint_1")
    steady = quality(a, "steady", "checkpoint_2")
    loc = figure(last, "size", "loc") + figure(steady, "size", "loc")
    loc_growth = figure(last, "size", "loc") - figure(first, "size", "loc")  # steady did not change
    lint = figure(last, "lint", "violations") + figure(steady, "lint", "violations")
    assert last["metrics"]["lint"]["details"]["by_rule"]["F401"] == 1  # the unused import of checkpoint 3
    out, err = cli(capsys, "show", str(a))
    line = next(x for x in out.splitlines() if x.startswith("code quality"))
    assert line.startswith("code quality at the last checkpoint of 2 problems (change over the run): ")
    assert f"lines of code: {loc:,.0f} (+{loc_growth:.0f})" in line
    assert f"lint violations: {lint:.0f} (+{figure(last, 'lint', 'violations') - figure(first, 'lint', 'violations'):.0f})" in line
    assert "max CC: 8 (+5)" in line  # parse's 8 at the last checkpoint; at the first, steady's 3 was the largest
    assert "duplicated lines: 16 (+16)" in line  # the two copies of checkpoint 3, 8 lines each
    cc_sum = sum(figure(q, "complexity", "cc_sum") for q in (last, steady))
    functions = sum(figure(q, "complexity", "functions") for q in (last, steady))
    assert f"mean CC: {cc_sum / functions:.2f}" in line
    growing = out.split("functions that grew most since their previous checkpoint:\n")[1].splitlines()
    assert growing[:2] == ["  erosion/checkpoint_2 (since checkpoint_1): app.py:parse  CC 2 -> 5 (+3), 4 -> 10 lines (+6)",
                           "  erosion/checkpoint_3 (since checkpoint_2): app.py:parse  CC 5 -> 8 (+3), 10 -> 16 lines (+6)"]
    assert "per checkpoint" not in out and err == ""


def test_show_json_holds_the_totals_points_and_growth(runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    a = runs[0]
    summary = json.loads(cli(capsys, "show", str(a), "--json")[0])["quality"]
    assert summary["totals"]["problems"] == 2
    assert summary["totals"]["final"]["cc_max"] == 8 and summary["totals"]["growth"]["cc_max"] == 5
    assert summary["totals"]["final"]["duplicated"] == 16
    erosion = next(p for p in summary["problems"] if p["problem"] == "erosion")
    assert [c["checkpoint"] for c in erosion["checkpoints"]] == ["checkpoint_1", "checkpoint_2", "checkpoint_3"]
    third = erosion["checkpoints"][2]
    assert third["previous"] == "checkpoint_2" and third["delta"]["cc_max"] == 3
    assert third["figures"]["loc"] == figure(quality(a, "erosion", "checkpoint_3"), "size", "loc")
    worst = summary["worst_growing"][0]
    assert {k: worst[k] for k in ("problem", "file", "function", "cc_before", "cc_after", "lines_before", "lines_after")} == {
        "problem": "erosion", "file": "app.py", "function": "parse", "cc_before": 2, "cc_after": 5,
        "lines_before": 4, "lines_after": 10}
    assert summary["notices"] == []


def test_show_problem_has_a_row_per_checkpoint(runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    a = runs[0]
    out, _ = cli(capsys, "show", str(a), "erosion")
    table = out.split("code quality per checkpoint (change since the previous one):\n")[1].splitlines()
    assert table[0].split()[:6] == ["CHECKPOINT", "LOC", "LINT", "FUNCTIONS", "CC", "MEAN"]
    loc = [figure(quality(a, "erosion", f"checkpoint_{i}"), "size", "loc") for i in (1, 2, 3)]
    assert table[1].split()[:2] == ["checkpoint_1", f"{loc[0]:.0f}"]
    assert table[3].split()[:3] == ["checkpoint_3", f"{loc[2]:.0f}", f"(+{loc[2] - loc[1]:.0f})"]
    assert "code quality at the last checkpoint of 1 problem" in out  # steady is not this problem's


def test_show_checkpoint_text_and_json(runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    a = runs[0]
    text, _ = cli(capsys, "show", str(a), "erosion/checkpoint_3")
    section = text.split("== code quality (change since checkpoint_2)\n")[1].split("\n\n")[0].splitlines()
    assert "max CC: 8 (+3)" in section[0] and "duplicated lines: 16 (+16)" in section[0]
    assert section[1:] == ["    functions that grew most since checkpoint_2:",
                           "      app.py:parse  CC 5 -> 8 (+3), 10 -> 16 lines (+6)"]
    report = json.loads(cli(capsys, "show", str(a), "erosion/checkpoint_3", "--json")[0])
    assert report["quality"]["figures"]["cc_max"] == 8 and report["quality"]["growing"][0]["function"] == "parse"
    first = json.loads(cli(capsys, "show", str(a), "erosion/checkpoint_1", "--json")[0])["quality"]
    assert first["delta"] is None and first["growing"] == [] and first["previous"] is None


def test_compare_puts_the_runs_side_by_side_with_the_difference(runs: tuple[Path, Path],
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    a, b = runs
    out, err = cli(capsys, "compare", str(a), str(b))
    lines = out.split("code quality at the last checkpoint of the 2 problems every measured run has"
                      " (change over each run):\n")[1].splitlines()
    assert lines[0].split() == ["FIGURE", "[1]", "[2]", "[2]", "-", "[1]"]
    rows = {line[:24].strip(): line[24:].split() for line in lines[1:12]}
    assert rows["max CC"] == ["8", "(+5)", "4", "(+1)", "-4"]  # b: parse has 3 branches at the end; steady's is 3
    assert rows["duplicated lines"] == ["16", "(+16)", "0", "(±0)", "-16"]
    loc = [figure(quality(r, "erosion", "checkpoint_3"), "size", "loc") + figure(quality(r, "steady", "checkpoint_2"), "size", "loc")
           for r in runs]
    assert rows["lines of code"][0] == f"{loc[0]:.0f}" and rows["lines of code"][-1] == f"{loc[1] - loc[0]:.0f}"
    assert err == ""
    result = json.loads(cli(capsys, "compare", str(a), str(b), "--json")[0])["quality"]
    assert result["problems"] == ["erosion", "steady"]
    assert result["runs"][0]["final"]["cc_max"] == 8 and result["runs"][1]["final"]["cc_max"] == 4
    assert result["difference"] == [{k: v - result["runs"][0]["final"][k] for k, v in result["runs"][1]["final"].items()}]
    assert result["difference"][0]["duplicated"] == -16


def test_compare_counts_only_the_problems_every_measured_run_has(runs: tuple[Path, Path], tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    lone = measured_run(tmp_path / "lone", 3, sloppy=True, steady=False)
    result = json.loads(cli(capsys, "compare", str(runs[0]), str(lone), "--json")[0])["quality"]
    assert result["problems"] == ["erosion"]
    assert result["difference"][0]["loc"] == 0 and result["runs"][0]["problems"] == 1  # the same erosion: no difference


def test_a_run_without_quality_shows_nothing_extra(runs: tuple[Path, Path], tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    bare = measured_run(tmp_path / "bare", 3, measure=False)
    out, err = cli(capsys, "show", str(bare))
    assert "code quality" not in out and "grew most" not in out and err == ""
    assert json.loads(cli(capsys, "show", str(bare), "--json")[0])["quality"] is None
    assert "code quality" not in cli(capsys, "show", str(bare), "erosion/checkpoint_2")[0]
    compared, _ = cli(capsys, "compare", str(bare), str(bare))
    assert "code quality" not in compared
    assert json.loads(cli(capsys, "compare", str(bare), str(bare), "--json")[0])["quality"] is None
    with_one, _ = cli(capsys, "compare", str(runs[0]), str(bare))
    assert "code quality at the last checkpoint of the 2 problems every measured run has" in with_one


def test_a_broken_quality_json_is_one_warning_line_naming_it(runs: tuple[Path, Path], tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    run = measured_run(tmp_path / "broken", 3)
    broken = run / "erosion" / "checkpoint_2" / "quality.json"
    broken.write_text('{"checkpoint": "checkpoint_2", "metrics": {"size": ')  # cut short
    outside = tmp_path / "outside.json"
    outside.write_text(broken.read_text())
    escaping = run / "steady" / "checkpoint_2" / "quality.json"
    escaping.unlink()
    escaping.symlink_to(outside)
    out, err = cli(capsys, "show", str(run))
    warnings = err.strip().splitlines()
    assert len(warnings) == 2 and "Traceback" not in err
    assert str(broken) in warnings[0] and "not valid JSON" in warnings[0] and "code-quality figures are left out" in warnings[0]
    assert str(escaping) in warnings[1] and "outside" in warnings[1]
    line = next(x for x in out.splitlines() if x.startswith("code quality"))
    assert "max CC: 8 (+5)" in line  # the readable checkpoints still count
    growing = out.split("grew most since their previous checkpoint:\n")[1].splitlines()
    # checkpoint_3 against the last checkpoint that could be read, and saying which
    assert growing[:-1] == ["  erosion/checkpoint_3 (since checkpoint_1): app.py:parse  CC 2 -> 8 (+6), 4 -> 16 lines (+12)"]
    text, err = cli(capsys, "show", str(run), "erosion/checkpoint_2")
    assert "== code quality" not in text and str(broken) in err and len(err.strip().splitlines()) == 1
    compared, err = cli(capsys, "compare", str(run), str(runs[1]))
    assert "code quality at the last checkpoint" in compared and len(err.strip().splitlines()) == 2


def test_records_without_function_lengths_compare_complexity_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = measured_run(tmp_path / "old", 3, steady=False)
    for path in run.glob("erosion/*/quality.json"):  # as written before `lines` was recorded per function
        record = json.loads(path.read_text())
        for row in record["metrics"]["complexity"]["details"]["functions"]:
            del row["lines"]
        path.write_text(json.dumps(record))
    out, err = cli(capsys, "show", str(run))
    growing = out.split("grew most since their previous checkpoint:\n")[1].splitlines()
    assert growing[0] == "  erosion/checkpoint_2 (since checkpoint_1): app.py:parse  CC 2 -> 5 (+3)" and err == ""


class _CountingList(list[Any]):
    """A list that counts the passes made over it."""

    passes = 0

    def __iter__(self) -> Iterator[Any]:
        type(self).passes += 1
        return super().__iter__()


def test_a_report_finds_each_problem_s_quality_by_the_run_s_index(runs: tuple[Path, Path]) -> None:
    """A page per problem and per checkpoint: one pass over the run's problems, not one per page (quadratic at
    thousands of problem runs)."""
    from agentrig.report.quality import checkpoint_quality, run_quality
    from agentrig.report.reader import open_run

    run = open_run(runs[0])
    run.problems = _CountingList(run.problems)
    _CountingList.passes = 0
    for problem in run.problems:
        assert run_quality(run, problem.name) is not None
        for entry in problem.checkpoints:
            point, notices = checkpoint_quality(run, entry)
            assert point is not None and point.checkpoint == entry.checkpoint and notices == []
    assert _CountingList.passes <= 2  # this loop's own pass and the index's


def test_slopcode_scores_are_averaged_over_problems_and_shown_per_checkpoint(runs: tuple[Path, Path],
                                                                             capsys: pytest.CaptureFixture[str]) -> None:
    a = runs[0]
    last = [figure(quality(a, "erosion", "checkpoint_3"), "slopcode", "erosion"),
            figure(quality(a, "steady", "checkpoint_2"), "slopcode", "erosion")]
    first = [figure(quality(a, "erosion", "checkpoint_1"), "slopcode", "erosion"),
             figure(quality(a, "steady", "checkpoint_1"), "slopcode", "erosion")]
    totals = json.loads(cli(capsys, "show", str(a), "--json")[0])["quality"]["totals"]
    assert totals["final"]["erosion"] == pytest.approx(sum(last) / 2)  # each problem alike, as SlopCodeBench averages
    assert totals["growth"]["erosion"] == pytest.approx((sum(last) - sum(first)) / 2)
    assert "verbosity" not in totals["final"]  # no ast-grep rules named: the benchmark's verbosity is not computed
    out, _ = cli(capsys, "show", str(a))
    assert f"erosion (SlopCodeBench): {sum(last) / 2:.2f}" in next(x for x in out.splitlines() if x.startswith("code quality"))
    table = cli(capsys, "show", str(a), "erosion")[0].split("code quality per checkpoint (change since the previous one):\n")[1]
    assert "EROSION" in table.splitlines()[0]
    erosion = [figure(quality(a, "erosion", f"checkpoint_{i}"), "slopcode", "erosion") for i in (1, 2, 3)]
    assert f"{erosion[2]:.2f}" in table.splitlines()[3]


def test_records_written_before_the_waste_rename_still_show_their_wrappers() -> None:
    from agentrig.metrics.records import MetricResult, QualityRecord
    from agentrig.report.quality import headline_figures

    old = QualityRecord(checkpoint="checkpoint_1", files=1, metrics={"waste": MetricResult(
        status="ok", figures={"trivial_wrappers": 2.0, "single_use_functions": 3.0, "unused_functions": 0.0})})
    new = QualityRecord(checkpoint="checkpoint_1", files=1, metrics={"waste": MetricResult(
        status="ok", figures={"passthrough_wrappers": 1.0, "single_reference_functions": 4.0, "trivial_wrappers": 9.0})})
    assert headline_figures(old) == {"wrappers": 2.0, "single_use": 3.0}
    assert headline_figures(new) == {"wrappers": 1.0, "single_use": 4.0}  # the current name wins
