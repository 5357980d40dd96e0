"""Reducers over attempts (pass@k, pass^k, majority, mean and max score) per checkpoint, problem and run,
in ``show --json`` and ``show --reduce``, on a multi-attempt run directory written by hand."""

from __future__ import annotations

import json
from math import comb
from pathlib import Path

import pytest

from agentrig.cli import main
from agentrig.testing.runs import CheckpointPlan as C, write_run

K = 3
TESTS = 6  # a failed checkpoint fails a third of its tests: score 4/6, a passed one 1


def plans(outcomes: str) -> list[C]:
    kinds = {"P": "passed", "F": "failed", "-": "pending"}
    return [C(f"c{i}", kinds[o], tests=TESTS) for i, o in enumerate(outcomes, 1)]


ATTEMPTS = {
    "p": ["PP", "PF", "FF"],   # c1 2/3 passed, c2 1/3; solved 1/3
    "q": ["PP", "PP", "PP"],   # everything
    "r": ["FP", "PP", "--"],   # attempt 3 not finished: n = 2, the estimators take k = 2
}


def score(outcome: str) -> float:
    return 1.0 if outcome == "P" else 4 / 6


def expected(outcomes: list[str]) -> dict[str, float | None]:
    """Every reducer over ``outcomes`` (one verdict letter per finished attempt), from the definitions."""
    n, c = len(outcomes), outcomes.count("P")
    k = min(K, n)
    scores = [score(o) for o in outcomes]
    return {
        "n": n, "c": c,
        "pass_at_1": c / n,
        "pass_at_k": 1 - comb(n - c, k) / comb(n, k),
        "pass_hat_k": comb(c, k) / comb(n, k),
        "majority": 1.0 if c > n / 2 else 0.0,
        "mean_score": sum(scores) / n,
        "max_score": max(scores),
    }


@pytest.fixture
def attempts_run(tmp_path: Path) -> Path:
    return write_run(tmp_path / "run", {
        f"{problem}/attempt_{i}": plans(row) for problem, rows in ATTEMPTS.items() for i, row in enumerate(rows, 1)
    })


def show(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["show", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_every_reducer_per_checkpoint_problem_and_run(attempts_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = show(capsys, str(attempts_run), "--json")
    assert status == 0
    summary = json.loads(out)["pass_at_k"]
    assert summary["k"] == K
    solved_by_problem = {}
    for problem, rows in ATTEMPTS.items():
        finished = [row for row in rows if "-" not in row]
        entry = summary["problems"][problem]
        for index, name in enumerate(("c1", "c2")):
            assert entry["checkpoints"][name] == pytest.approx(expected([row[index] for row in finished])), (problem, name)
        solved = ["P" if row == "PP" else "F" for row in finished]
        want = expected(solved)
        # a problem's attempt scores the mean of its checkpoints' scores
        attempt_scores = [(score(row[0]) + score(row[1])) / 2 for row in finished]
        want["mean_score"], want["max_score"] = sum(attempt_scores) / len(attempt_scores), max(attempt_scores)
        assert entry["solved"] == pytest.approx(want), problem
        solved_by_problem[problem] = want
    run = summary["run"]
    for field in ("pass_at_1", "pass_at_k", "pass_hat_k", "majority", "mean_score", "max_score"):
        assert run[field] == pytest.approx(sum(w[field] for w in solved_by_problem.values()) / 3), field
    assert (run["n"], run["c"]) == (8, 5)  # solved: p 1 of 3, q 3 of 3, r 1 of 2
    # the means over problems per checkpoint name
    c2 = [expected([row[1] for row in rows if "-" not in row]) for rows in ATTEMPTS.values()]
    assert summary["checkpoints"]["c2"]["pass_hat_k"] == pytest.approx(sum(e["pass_hat_k"] for e in c2) / 3)


def test_reduce_chooses_what_the_summary_leads_with(attempts_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, default, _ = show(capsys, str(attempts_run))
    assert status == 0
    # pass@1 (1/3 + 1 + 1/2) / 3; pass@3 1 for each; pass^3 only q; majority only q
    assert "pass@1 0.611 | pass@3 1.000 over 3 problems, 3 attempts each (8 finished, 5 solved) | pass^3 0.333 | majority 0.333" in default
    assert "  p: 1/3 attempts solved, pass@1 0.333, pass@3 1.000, pass^3 0.000, majority 0.000, mean score " in default

    status, out, _ = show(capsys, str(attempts_run), "--reduce", "majority")
    assert status == 0
    assert "\nmajority 0.333 over 3 problems, 3 attempts each (8 finished, 5 solved) | pass@1 0.611 | pass@3 1.000 | pass^3 0.333" in out
    assert "  p: 1/3 attempts solved, majority 0.000, pass@1 0.333, " in out
    assert "    c1: 2/3 passed, majority 1.000, pass@1 0.667, " in out

    status, out, _ = show(capsys, str(attempts_run), "--reduce", "max")
    assert "\nmax score 1.000 over 3 problems" in out  # every problem has an attempt that passed everything
    status, out, _ = show(capsys, str(attempts_run), "--reduce", "mean")
    # attempt scores: p 1, 5/6, 4/6; q 1, 1, 1; r 5/6, 1
    assert "\nmean score 0.917 over 3 problems" in out
    status, out, _ = show(capsys, str(attempts_run), "--reduce", "pass^k", "--json")
    data = json.loads(out)
    assert data["reduce"] == "pass^k" and data["pass_at_k"]["run"]["pass_hat_k"] == pytest.approx(1 / 3)

    status, _, err = show(capsys, str(attempts_run), "--reduce", "median")
    assert status == 2
    assert err.strip() == "agentrig: error: --reduce median: not a reducer (one of pass@1, pass@k, pass^k, majority, mean, max)"


def test_reduce_on_compare_and_without_attempts(attempts_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["compare", str(attempts_run), str(attempts_run), "--reduce", "pass^k"])
    out = capsys.readouterr().out
    assert status == 0 and "[1] pass^3 0.333 over 3 problems" in out and "[2] pass^3 0.333 over 3 problems" in out
    single = write_run(tmp_path / "single", {"p": plans("PF")})
    status, out, err = show(capsys, str(single), "--reduce", "majority", "--json")
    # nothing to reduce: said, not silently ignored (issue 37)
    assert status == 2 and out == "" and "--reduce majority: the run was not run with --attempts K" in err


def test_the_help_names_every_reducer(capsys: pytest.CaptureFixture[str]) -> None:
    from agentrig.report.passk import REDUCERS

    with pytest.raises(SystemExit):
        main(["show", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "one of " + ", ".join(REDUCERS) + " (" in text
