"""A SlopCodeBench problem run on a machine without ``uv`` used to record every checkpoint as an
``error`` with ``sh: 1: uvx: not found`` buried in its ``evaluation.json``. A format's tools are
checked before the first checkpoint: one line saying what to install (``pip install uv``), exit 2,
nothing run and no run directory made."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from problem_kit import SLOPCODE_CONFIG, one_error_line, run_subprocess, slopcode_problem


def _path_without_uv(tmp_path: Path) -> str:
    """A PATH with the shell and the system's tools but no ``uv`` or ``uvx`` (the host's own PATH minus
    every directory holding them)."""
    keep = [d for d in os.environ["PATH"].split(os.pathsep) if d and not any((Path(d) / t).exists() for t in ("uv", "uvx"))]
    assert keep, "no PATH entry without uv"
    return os.pathsep.join(keep)


CONFTEST = """def pytest_addoption(parser):
    parser.addoption("--entrypoint", required=True)
    parser.addoption("--checkpoint", required=True)
"""


def _problem(tmp_path: Path) -> Path:
    problem = slopcode_problem(tmp_path / "bench", SLOPCODE_CONFIG.format(name="p", entry="main", assets="{}"))
    (problem / "tests" / "conftest.py").write_text(CONFTEST)
    return problem


def test_slopcode_without_uvx_is_refused_before_any_checkpoint(tmp_path: Path) -> None:
    problem = _problem(tmp_path)
    out = tmp_path / "out"
    result = run_subprocess(tmp_path, "run", str(problem), "--agent", "oracle", "--output", str(out),
                            PATH=_path_without_uv(tmp_path))
    line = one_error_line(result.stderr)
    assert result.returncode == 2, result.stderr[-2000:]
    assert "uvx" in line and "pip install uv" in line and "slopcode" in line and "--runtime local" in line, line
    assert not out.exists()


def test_slopcode_without_uvx_runs_with_its_own_python(tmp_path: Path) -> None:
    """``AGENTRIG_SLOPCODE_PYTHON`` runs the tests without uv: then nothing is missing."""
    problem = _problem(tmp_path)
    out = tmp_path / "out"
    result = run_subprocess(tmp_path, "run", str(problem), "--agent", "oracle", "--output", str(out),
                            PATH=_path_without_uv(tmp_path), AGENTRIG_SLOPCODE_PYTHON=sys.executable)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [line["passed"] for line in lines] == [True]
