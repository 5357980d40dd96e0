"""Every YAML file or value the CLI reads, nested 30,000 levels deep, is refused with the same line,
exit 2, whichever YAML loader the machine has: libyaml's (PyYAML 6.0.3's crashed with SIGSEGV,
6.0.4's stops at 1,000 levels with an error of its own) or the pure-Python one (RecursionError,
exit 3). Each run is a child process of its own: a crash is then a result, not the test session's end."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent))

from problem_kit import harbor_task, native_problem, one_error_line, run_subprocess, slopcode_problem

REPO = Path(__file__).resolve().parents[2]
GREETER = REPO / "examples" / "greeter"
DEEP = 30_000
NESTED = "nested more than 100 levels deep; not read"


@pytest.fixture(params=["libyaml", "pure-python"])
def loader(request: pytest.FixtureRequest) -> str:
    if request.param == "libyaml" and not getattr(yaml, "__with_libyaml__", False):
        pytest.skip("this PyYAML is built without libyaml")
    return str(request.param)


def refused(cwd: Path, loader: str, *argv: str) -> str:
    """The one error line of ``agentrig ARGV`` run with ``loader``, which must exit with status 2."""
    proc = run_subprocess(cwd, *argv, yaml_loader=loader)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    return one_error_line(proc.stderr)


@pytest.mark.parametrize("shape", ["flow", "block"])
def test_a_deep_problem_yaml(tmp_path: Path, loader: str, shape: str) -> None:
    problem = native_problem(tmp_path / "bench")
    nested = "[" * DEEP + "]" * DEEP if shape == "flow" else "- " * DEEP + "x"
    with open(problem / "problem.yaml", "a") as handle:
        handle.write(f"setup: {nested}\n" if shape == "flow" else f"setup:\n  {nested}\n")
    line = refused(tmp_path, loader, "run", str(problem), "--agent", "oracle")
    assert line.endswith(f"{problem / 'problem.yaml'}: line {7 if shape == 'flow' else 8}: {NESTED}")
    assert not (tmp_path / "runs").exists()


def test_a_deep_model_catalog_file(tmp_path: Path, loader: str) -> None:
    models = tmp_path / "models"
    models.mkdir()
    (models / "deep.yaml").write_text("models: " + "[" * DEEP + "]" * DEEP + "\n")
    line = refused(tmp_path, loader, "run", str(GREETER), "--agent", "oracle", "--models-dir", str(models),
                   "-o", str(tmp_path / "run"))
    assert line == f"agentrig: error: --models-dir {models}: {models / 'deep.yaml'}: line 1: {NESTED}"
    assert not (tmp_path / "run").exists()


def test_a_deep_terminal_bench_task_yaml(tmp_path: Path, loader: str) -> None:
    task = tmp_path / "tasks" / "tb1"
    task.mkdir(parents=True)
    (task / "task.yaml").write_text("instruction: hi\ntags:\n" + "  - " * DEEP + "x\n")
    (task / "Dockerfile").write_text("FROM agentrig-test/node:bookworm\n")
    (task / "run-tests.sh").write_text("true\n")
    line = refused(tmp_path, loader, "problems", "list", str(task))
    assert line.endswith(f"{task / 'task.yaml'}: line 3: {NESTED}")


def test_a_deep_harbor_compose_file(tmp_path: Path, loader: str) -> None:
    task = harbor_task(tmp_path / "tasks" / "t1")
    (task / "environment").mkdir()
    (task / "environment" / "docker-compose.yaml").write_text("services:\n  main: " + "{a: " * DEEP + "1" + "}" * DEEP + "\n")
    line = refused(tmp_path, loader, "problems", "list", str(task))
    assert line.endswith(f"{task / 'environment' / 'docker-compose.yaml'}: line 2: {NESTED}")


def test_a_deep_slopcode_config_yaml(tmp_path: Path, loader: str) -> None:
    problem = slopcode_problem(tmp_path / "p", "name: p\nentry_file: main\ntags: " + "[" * DEEP + "]" * DEEP + "\n")
    line = refused(tmp_path, loader, "problems", "list", str(problem))
    assert line.endswith(f"{problem / 'config.yaml'}: line 3: {NESTED}")


def test_a_deep_agent_config_file(tmp_path: Path, loader: str) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("type: react\nmcp_servers: " + "[" * DEEP + "]" * DEEP + "\n")
    line = refused(tmp_path, loader, "run", str(GREETER), "--agent", str(config), "-o", str(tmp_path / "run"))
    assert line == f"agentrig: error: {config}: line 2: {NESTED}"
    assert not (tmp_path / "run").exists()


def test_a_deep_override_value(tmp_path: Path, loader: str) -> None:
    deep = 20_000  # the whole value is one argument: at most 128 KiB on Linux
    line = refused(tmp_path, loader, "run", str(GREETER), "--agent", "react", "-c", "max_steps=" + "[" * deep + "]" * deep,
                   "-o", str(tmp_path / "run"))
    assert line == f"agentrig: error: -c max_steps: line 1: {NESTED}"
    assert not (tmp_path / "run").exists()
