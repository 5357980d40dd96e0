"""A timeout of ``.inf`` or ``1e300`` in a problem file used to crash the run (native: a raw
``OverflowError`` traceback, "timestamp out of range"; SlopCodeBench: an error checkpoint). Every
time limit read from a problem, task or config file is finite, above 0 and at most 7 days
(:data:`agentrig.boundary.TIMEOUT_MAX_SECONDS`), refused at load in one line, exit 2."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

sys.path.insert(0, str(Path(__file__).parent))

from problem_kit import SLOPCODE_CONFIG, harbor_task, native_problem, one_error_line, run_cli, slopcode_problem

RULE = "must be a finite number above 0, at most 604800 seconds (7 days)"


def _refused_at_load(capsys: pytest.CaptureFixture[str], problem: Path, *where: str) -> None:
    run = ["run", str(problem), "--agent", "oracle", "--output", str(problem.parent / "out")]
    for command in (["problems", "list", str(problem)], run):
        status, _, err = run_cli(capsys, *command)
        line = one_error_line(err)
        assert status == 2, err
        assert RULE in line and all(part in line for part in where), line
        assert not (problem.parent / "out").exists()


@pytest.mark.parametrize("value", [".inf", "1e300", ".nan", "604801"])
def test_native_checkpoint_timeout_cannot_overflow_the_clock(tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str) -> None:
    problem = native_problem(tmp_path / "bench")
    (problem / "problem.yaml").write_text((problem / "problem.yaml").read_text() + f"    timeout: {value}\n")
    _refused_at_load(capsys, problem, str(problem / "problem.yaml"), "checkpoints[0].timeout")


def test_native_checkpoint_timeout_of_seven_days_is_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    problem = native_problem(tmp_path / "bench")
    (problem / "problem.yaml").write_text((problem / "problem.yaml").read_text() + "    timeout: 604800\n")
    status, _, err = run_cli(capsys, "problems", "list", str(problem))
    assert status == 0, err


@pytest.mark.parametrize("where", ["top", "checkpoint"])
def test_slopcode_timeout_inf_is_refused_not_an_error_checkpoint(tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str) -> None:
    config = SLOPCODE_CONFIG.format(name="p", entry="main", assets="{}")
    config = config.replace("timeout: 10", "timeout: .inf") if where == "top" else config + "    timeout: .inf\n"
    problem = slopcode_problem(tmp_path / "bench", config)
    _refused_at_load(capsys, problem, str(problem / "config.yaml"), "timeout")


@pytest.mark.parametrize(
    ("section", "field"),
    [("verifier", "timeout_sec"), ("agent", "timeout_sec"), ("environment", "build_timeout_sec")],
)
def test_harbor_timeouts_are_bounded(tmp_path: Path, capsys: pytest.CaptureFixture[str], section: str, field: str) -> None:
    toml = f"[{section}]\n{field} = inf\n"
    if section == "environment":
        toml += 'docker_image = "agentrig-test/busybox"\n'
    problem = harbor_task(tmp_path / "bench", toml)
    _refused_at_load(capsys, problem, str(problem / "task.toml"), f"{section}.{field}")


@pytest.mark.parametrize("field", ["interval_sec", "start_period_sec", "start_interval_sec", "timeout_sec"])
def test_harbor_step_healthcheck_periods_are_bounded(tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str) -> None:
    problem = harbor_task(tmp_path / "bench", f'[[steps]]\nname = "s1"\n[steps.healthcheck]\ncommand = "true"\n{field} = inf\n')
    status, _, err = run_cli(capsys, "problems", "list", str(problem))
    line = one_error_line(err)
    assert status == 2 and field in line and "7 days" in line, line


@pytest.mark.parametrize("field", ["max_agent_timeout_sec", "max_test_timeout_sec"])
def test_terminal_bench_timeouts_are_bounded(tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str) -> None:
    problem = tmp_path / "bench"
    (problem / "tests").mkdir(parents=True)
    (problem / "task.yaml").write_text(f"instruction: Write done.txt.\n{field}: 1e300\n")
    (problem / "tests" / "run-tests.sh").write_text("exit 0\n")
    (problem / "Dockerfile").write_text("FROM agentrig-test/busybox\n")
    _refused_at_load(capsys, problem, str(problem / "task.yaml"), field)


@pytest.mark.parametrize(
    ("model", "fields"),
    [
        ("agentrig.llm.options:ChatOptions", {"timeout": float("inf")}),
        ("agentrig.agents.mcp:McpStdioServer", {"command": "x", "tool_timeout": 1e300}),
        ("agentrig.agents.mcp:McpStdioServer", {"command": "x", "startup_timeout": float("nan")}),
        ("agentrig_react.config:ReactConfig", {"command_timeout": float("inf")}),
        ("agentrig_miniswe.config:MiniSweConfig", {"command_timeout": 10**12}),
        ("agentrig.usage:AgentCostLimits", {"time_limit": float("inf")}),
    ],
)
def test_config_time_limits_are_bounded(model: str, fields: dict[str, object]) -> None:
    """The time limits of configs (agents' commands, MCP servers, model calls, cost limits) too."""
    import importlib

    module, _, name = model.partition(":")
    cls = getattr(importlib.import_module(module), name)
    with pytest.raises(ValidationError, match=r"604800|finite number"):
        cls(**fields)


def test_command_line_test_timeout_is_bounded(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    problem = native_problem(tmp_path / "bench")
    status, _, err = run_cli(capsys, "run", str(problem), "--agent", "oracle", "--test-timeout", "1e300")
    assert status == 2 and "--test-timeout" in one_error_line(err) and RULE in err
