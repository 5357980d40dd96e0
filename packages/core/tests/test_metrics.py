"""Code-quality metrics: the hook and registry kind, each built-in metric on a snapshot written here with
radon, ruff and ast-grep really run, quality.json with its delta, failures recorded, and the run and
``agentrig evaluate --metrics`` writing them."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import agentrig
from agentrig.boundary import BoundaryError
from agentrig.metrics.compute import measure, metric_names
from agentrig.metrics.record import record_quality
from agentrig.metrics.records import QualityRecord
from agentrig.registry import get_registry

ALL = ["size", "lint", "complexity", "patterns", "waste", "duplication", "slopcode"]

FIRST = '''\
import os


def branchy(items, flag, table=[]):
    """Three decisions and a loop."""
    total = 0
    for item in items:
        if flag:
            if item > 2:
                total += item
        elif item:
            total -= 1
    return total


def wrapper(a, b):
    return branchy(a, b)


def helper():
    return 1


def main():
    # the only call of helper
    return helper() + wrapper([1], True)
'''

BLOCK = '''
def copy_{n}(values):
    out = []
    for value in values:
        if value % 2:
            out.append(value * 3)
        else:
            out.append(value - 1)
    return out
'''


def _snapshot(root: Path, files: dict[str, str]) -> Path:
    snap = root / "snapshot"
    for name, text in files.items():
        (snap / name).parent.mkdir(parents=True, exist_ok=True)
        (snap / name).write_text(textwrap.dedent(text))
    return snap


def test_builtin_metrics_come_through_the_hook_and_listing_imports_no_tool() -> None:
    assert list(get_registry().metric_specs()) == ALL
    spec = get_registry().lookup("metrics", "complexity")
    assert isinstance(spec, agentrig.MetricSpec) and spec.languages == ("python",)
    code = ("import sys; from agentrig.registry import get_registry; get_registry().metric_specs();"
            "print(sorted(m for m in ('radon', 'ruff', 'agentrig.metrics.size') if m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"


def test_a_third_party_metric_registers_and_a_broken_one_is_recorded_not_fatal(tmp_path: Path) -> None:
    class Plugin:
        @agentrig.hookimpl
        def agentrig_metrics(self) -> list[agentrig.MetricSpec]:
            return [agentrig.MetricSpec(name="broken", metric="agentrig.metrics.interface:MetricError")]

    name = get_registry().register(Plugin(), "test-metrics-plugin")
    try:
        assert "broken" in metric_names(None)
        record = measure("c1", _snapshot(tmp_path, {"a.py": "x = 1\n"}), ["size", "broken"])
        assert record.metrics["size"].status == "ok"
        assert record.metrics["broken"].status == "failed"
        assert "does not make an agentrig.Metric" in (record.metrics["broken"].error or "")
    finally:
        get_registry().unregister(name)


CLASSES = """
class Store:
    def get(self, key):
        if key:
            return 1
        return 0

    def put(self, key, value):
        def check(v):
            if v:
                return v
            return None
        return check(value)

    class Cursor:
        def step(self):
            for _ in range(3):
                if _:
                    return 1
            return 0


def top(x):
    return x
"""


def test_complexity_counts_each_method_once(tmp_path: Path) -> None:
    # radon's cc_visit lists a class's methods after the class: they are counted once, not twice;
    # a nested class's methods and a method's closure are counted too
    record = measure("checkpoint_1", _snapshot(tmp_path, {"store.py": CLASSES}), ["complexity"])
    complexity = record.metrics["complexity"]
    rows = sorted((f["name"], f["cc"]) for f in complexity.details["functions"])
    assert rows == [("Cursor.step", 3), ("Store.get", 2), ("Store.put", 1), ("check", 2), ("top", 1)]
    assert complexity.figures["functions"] == 5 and complexity.figures["cc_sum"] == 9
    assert complexity.figures["cc_max"] == 3 and complexity.figures["rank.A"] == 5


def test_figures_of_a_snapshot(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path, {"app.py": FIRST, "pkg/dup.py": BLOCK.format(n=1) + BLOCK.format(n=2), "bad.py": "def (:\n"})
    record = measure("checkpoint_1", snap, ALL)
    assert {n: m.status for n, m in record.metrics.items()} == dict.fromkeys(ALL, "ok"), record.metrics
    assert record.unparsable == ["bad.py"] and record.files == 2
    size = record.metrics["size"].figures
    assert size["files"] == 2 and size["comments"] == 1  # radon counts the one-line docstring as a single_comment too
    complexity = record.metrics["complexity"]
    branchy = next(f for f in complexity.details["functions"] if f["name"] == "branchy")
    assert (branchy["cc"], branchy["rank"], branchy["nesting"]) == (5, "A", 3)  # for, if, if, elif (+1); elif not deeper
    assert complexity.figures["max_nesting"] == 3 and complexity.figures["rank.A"] == complexity.figures["functions"] == 6
    lint = record.metrics["lint"]
    assert lint.details["by_rule"].get("F401") == 1  # import os, unused
    assert lint.figures["family.F"] >= 1 and lint.figures["violations"] == sum(lint.details["by_rule"].values())
    patterns = record.metrics["patterns"].figures
    assert patterns["rule.mutable-default-argument"] == 1 and patterns["violations"] >= 1
    waste = record.metrics["waste"].details
    assert [w["name"] for w in waste["passthrough_wrappers"]] == ["wrapper"]
    assert {w["name"] for w in waste["single_reference_functions"]} >= {"helper", "wrapper"}
    duplication = record.metrics["duplication"].figures
    assert duplication["clone_groups"] == 1 and duplication["cloned_blocks"] == 2 and duplication["cloned_lines"] == 16


def test_quality_json_has_the_delta_and_stays_inside_the_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    first, second = run / "p" / "checkpoint_1", run / "p" / "checkpoint_2"
    _snapshot(first, {"app.py": FIRST})
    _snapshot(second, {"app.py": FIRST, "more.py": BLOCK.format(n=1)})
    record_quality(run, first, ["size", "complexity"])
    record = record_quality(run, second, ["size", "complexity"], first)
    on_disk = QualityRecord.model_validate_json((second / "quality.json").read_text())
    assert on_disk == record and on_disk.previous == "checkpoint_1"
    assert on_disk.delta is not None and on_disk.delta["size"]["files"] == 1 and on_disk.delta["complexity"]["functions"] == 1
    with pytest.raises(BoundaryError):
        record_quality(tmp_path / "elsewhere", second, ["size"])


def test_a_missing_tool_names_its_package_and_the_others_go_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import agentrig.metrics.tools as tools

    monkeypatch.setattr(tools.sys, "executable", str(tmp_path / "nowhere" / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    record = measure("c", _snapshot(tmp_path, {"a.py": "import os\n"}), ["lint", "patterns", "size"])
    assert record.metrics["lint"].error == (
        "lint: ruff is not installed: pip install 'ruff==0.14.1' (or pip install 'agentrig[metrics]' for every built-in metric)")
    assert "pip install 'ast-grep-cli'" in (record.metrics["patterns"].error or "")
    assert record.metrics["size"].status == "ok"


def _agentrig(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).parent / "agentrig"), *args], capture_output=True, text=True, timeout=300)


def test_a_run_records_quality_per_checkpoint_and_evaluate_remeasures(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = _agentrig("run", "dataset:starter", "--agent", "oracle", "-c", "metrics=[size,waste]", "--output", str(out))
    assert done.returncode == 0, done.stderr
    found = sorted(out.glob("*/*/quality.json"))
    assert len(found) == 5
    records = {p.parent.parent.name + "/" + p.parent.name: json.loads(p.read_text()) for p in found}
    assert set(records["roman/from_roman"]["metrics"]) == {"size", "waste"}
    assert records["roman/from_roman"]["previous"] == "to_roman" and records["roman/to_roman"]["delta"] is None
    (out / "roman" / "from_roman" / "quality.json").unlink()
    again = _agentrig("evaluate", str(out), "roman", "--metrics", "complexity")
    assert again.returncode == 0, again.stderr
    assert "roman/from_roman: 1 files, 1 metrics" in again.stdout
    remeasured = json.loads((out / "roman" / "from_roman" / "quality.json").read_text())
    assert list(remeasured["metrics"]) == ["complexity"] and remeasured["delta"] is not None


@pytest.mark.parametrize("args", [["run", "dataset:starter", "--agent", "oracle", "-c", "metrics=[nope]"],
                                  ["run", "dataset:starter", "--agent", "oracle", "-c", "metrics={a: 1}"]])
def test_bad_metric_names_are_one_line_and_exit_2(tmp_path: Path, args: list[str]) -> None:
    done = _agentrig(*args, "--output", str(tmp_path / "r"))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "metrics" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "r").exists()
