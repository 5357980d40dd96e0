"""Where agentrig's metrics and SlopCodeBench's `slop-code metrics` use the same tool (radon, ruff), the
figures are equal: checked on a snapshot written for it (tests/fixtures/metrics-snapshot) against the
figures SlopCodeBench's own code printed for it (metrics-snapshot.slopcode.json; how: its produced_by)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentrig.metrics.compute import measure
from agentrig.metrics.interface import MetricError, ToolMissingError
from agentrig.metrics.lint import RUFF_VERSION, pinned_ruff
from agentrig.metrics.tools import executable_candidates

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def ours_and_theirs() -> tuple[dict, dict]:
    record = measure("checkpoint_1", FIXTURES / "metrics-snapshot", ["size", "lint", "complexity"])
    assert all(m.status == "ok" for m in record.metrics.values()), record.metrics
    assert record.unparsable == ["inventory/broken.py"]  # left out of every figure, on both sides
    theirs = json.loads((FIXTURES / "metrics-snapshot.slopcode.json").read_text())
    return record.model_dump(), theirs


def test_line_counts_equal_slopcodebench(ours_and_theirs: tuple[dict, dict]) -> None:
    ours, theirs = ours_and_theirs
    size = ours["metrics"]["size"]["figures"]
    for key in ("total_lines", "loc", "comments", "multi_comment", "single_comment"):
        assert size[key] == theirs["lines"][key], key


def test_ruff_violations_equal_slopcodebench(ours_and_theirs: tuple[dict, dict]) -> None:
    ours, theirs = ours_and_theirs
    lint = ours["metrics"]["lint"]
    assert lint["details"]["by_rule"] == theirs["codes"]
    assert lint["figures"]["violations"] == theirs["lines"]["errors"]
    assert lint["figures"]["fixable"] == theirs["lines"]["fixable"]
    # measured with the ruff the figures are defined by (SlopCodeBench's lock), and recorded so
    assert lint["details"]["ruff_version"] == RUFF_VERSION == "0.14.1"
    assert "PLW0717" not in lint["details"]["by_rule"]  # ruff 0.17's long-try-clause rule: not 0.14.1's


def test_only_the_pinned_ruff_measures(tmp_path: Path) -> None:
    other = tmp_path / "ruff"  # another release of ruff, as a user's PATH may hold one
    other.write_text("#!/bin/sh\necho 'ruff 0.17.6'\n")
    other.chmod(0o755)
    with pytest.raises(MetricError) as refused:
        pinned_ruff([str(other)], tmp_path)
    assert str(refused.value) == (
        f"ruff 0.17.6 ({other}) is not the ruff 0.14.1 the lint figures are defined by:"
        " pip install 'ruff==0.14.1' beside agentrig (or pip install 'agentrig[metrics]')"
    )
    installed = executable_candidates("ruff")  # the test environment's, from agentrig[all]
    assert pinned_ruff([str(other), *installed], tmp_path) == installed[0]
    with pytest.raises(ToolMissingError, match=r"ruff is not installed: pip install 'ruff==0\.14\.1'"):
        pinned_ruff([], tmp_path)


def test_maintainability_index_equals_slopcodebench(ours_and_theirs: tuple[dict, dict]) -> None:
    ours, theirs = ours_and_theirs
    figures = ours["metrics"]["complexity"]["figures"]
    assert figures["mi_sum"] == pytest.approx(theirs["mi_sum"], abs=1e-9)
    assert figures["mi_min"] == pytest.approx(theirs["mi_min"], abs=1e-9)


def test_a_script_at_the_top_of_the_workspace_gets_inp001_as_in_slopcodebench(tmp_path: Path) -> None:
    # SlopCodeBench runs ruff from its own directory, so every script of a snapshot is below ruff's
    # project root, a top-level one included: INP001 when its directory has no __init__.py. A
    # checkpoint's snapshot holds the workspace under files/: the same here.
    files = tmp_path / "snapshot" / "files"
    (files / "pkg").mkdir(parents=True)
    (files / "main.py").write_text("VALUE = 1\n")
    (files / "pkg" / "__init__.py").write_text("")
    (files / "pkg" / "mod.py").write_text("OTHER = 2\n")
    record = measure("checkpoint_1", tmp_path / "snapshot", ["lint"])
    lint = record.metrics["lint"]
    assert lint.status == "ok", lint.error
    assert lint.details["by_rule"] == {"INP001": 1} and lint.details["by_file"] == {"files/main.py": 1}
