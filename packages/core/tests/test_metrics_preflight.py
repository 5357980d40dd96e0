"""Metrics never fail silently (issue 37): a metric asked for whose tool is missing stops ``run`` and
``evaluate --metrics`` before anything is made or measured, in one line naming the tool and its install
command; an unknown metric is named; ``show`` names each failure; ``evaluate --metrics`` exits 3 when a metric
fails and never replaces good figures with a failure.

The tools are really absent (the interpreter's directory and ``PATH`` point at an empty directory, as
``test_metrics.py`` does); the failing metric is a third party's, a plugin module written here."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import agentrig
from agentrig.cli import main
from agentrig.cli.exits import ExitStatus
from agentrig.registry import get_registry

GREETER = Path(__file__).resolve().parents[3] / "examples" / "greeter"

PROBE = '''
from agentrig.metrics.interface import Metric, MetricError


class ProbeMetric(Metric):
    """Counts the snapshot's files; fails while ``broken`` is set."""

    broken = False

    def compute(self, sources):
        if ProbeMetric.broken:
            raise MetricError("the probe broke")
        return {"files": float(len(sources.files))}, {}
'''


@pytest.fixture
def probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[type]:
    """The third-party metric ``probe`` (module ``agentrig_probe_metric``), registered for the test."""
    module_dir = tmp_path / "plugin"
    module_dir.mkdir()
    (module_dir / "agentrig_probe_metric.py").write_text(PROBE)
    monkeypatch.syspath_prepend(str(module_dir))
    import agentrig_probe_metric  # type: ignore[import-not-found]

    class Plugin:
        @agentrig.hookimpl
        def agentrig_metrics(self) -> list[agentrig.MetricSpec]:
            return [agentrig.MetricSpec(name="probe", metric="agentrig_probe_metric:ProbeMetric")]

    name = get_registry().register(Plugin(), "test-probe-metric")
    try:
        yield agentrig_probe_metric.ProbeMetric
    finally:
        get_registry().unregister(name)
        sys.modules.pop("agentrig_probe_metric", None)


def _no_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ruff and ast-grep nowhere: neither beside the interpreter nor on ``PATH``."""
    import agentrig.metrics.tools as tools

    empty = tmp_path / "empty"
    empty.mkdir(exist_ok=True)
    monkeypatch.setattr(tools.sys, "executable", str(empty / "python"))
    monkeypatch.setenv("PATH", str(empty))


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_run_names_a_missing_tool_and_its_install_command_before_anything_is_made(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_tools(tmp_path, monkeypatch)
    out = tmp_path / "run"
    status, _, err = _cli(capsys, "run", str(GREETER), "--agent", "oracle", "-c", "metrics=[size,lint,patterns]", "-o", str(out))
    assert status == ExitStatus.USAGE
    line = _one_line(err)
    assert "-c metrics: lint: ruff is not installed: pip install 'ruff==0.14.1'; " in line
    assert "patterns: ast-grep is not installed: pip install 'ast-grep-cli'" in line
    assert "pip install 'agentrig[metrics]' installs every built-in metric's tool" in line
    assert "size" not in line.split("(pip install 'agentrig")[0]  # radon is here
    assert not out.exists()


def test_an_unknown_metric_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    status, _, err = _cli(capsys, "run", str(GREETER), "--agent", "oracle", "-c", "metrics=[size,bogus]", "-o", str(out))
    assert status == ExitStatus.USAGE
    assert _one_line(err).startswith("agentrig: error: -c metrics: unknown metric 'bogus' (installed: ")
    status, _, err = _cli(capsys, "evaluate", str(out), "--metrics", "size,bogus")
    assert status == ExitStatus.USAGE and "--metrics: unknown metric 'bogus'" in _one_line(err)


def test_evaluate_checks_tools_first_exits_3_on_a_failure_and_keeps_good_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, probe: type
) -> None:
    out = tmp_path / "run"
    status, _, err = _cli(
        capsys, "run", "dataset:starter", "--problem", "roman", "--agent", "oracle", "-c", "metrics=[size,probe]", "-o", str(out), "-q"
    )
    assert status == ExitStatus.OK, err
    files = sorted(out.glob("*/*/quality.json"))
    assert files
    good = {path: path.read_text() for path in files}
    first = json.loads(files[0].read_text())
    assert first["metrics"]["probe"]["status"] == "ok" and first["metrics"]["size"]["status"] == "ok"

    with monkeypatch.context() as patch:  # a missing tool: nothing measured, nothing written
        _no_tools(tmp_path, patch)
        status, stdout, err = _cli(capsys, "evaluate", str(out), "--metrics", "probe,lint")
    assert status == ExitStatus.USAGE and stdout == ""
    assert "--metrics: lint: ruff is not installed: pip install 'ruff==0.14.1'" in _one_line(err)
    assert {path: path.read_text() for path in files} == good

    probe.broken = True  # type: ignore[attr-defined]
    status, stdout, _ = _cli(capsys, "evaluate", str(out), "--metrics", "size,probe")
    assert status == ExitStatus.ERROR
    assert "failed: probe: the probe broke; the figures quality.json had are kept" in stdout
    for path in files:
        record = json.loads(path.read_text())
        before = json.loads(good[path])
        assert record["metrics"]["probe"] == before["metrics"]["probe"]  # the good figures, not the failure
        assert record["metrics"]["size"]["figures"] == before["metrics"]["size"]["figures"]

    # where there were no good figures, the failure is recorded, and `show` names it
    for path in files:
        path.unlink()
    status, stdout, _ = _cli(capsys, "evaluate", str(out), "--metrics", "probe")
    assert status == ExitStatus.ERROR and "failed: probe: the probe broke" in stdout
    assert json.loads(files[0].read_text())["metrics"]["probe"]["status"] == "failed"
    status, stdout, err = _cli(capsys, "show", str(out))
    assert status == ExitStatus.OK
    assert f"metric failed at {len(files)} checkpoints: probe: the probe broke" in err, stdout + err
