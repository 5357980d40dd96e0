"""Helpers of the problem-file threat tests: crafted problems in the shapes of the real formats,
the CLI run on them, and what must hold afterwards (one error line, exit 2, nothing touched)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentrig.cli import main

SECRET = "agentrig-test-secret-7f3a9c"


def native_problem(root: Path, name: str = "p", checkpoint: str = "c1", **fields: str) -> Path:
    """A ``problem.yaml`` problem whose test passes once ``done.txt`` exists; ``fields`` are extra
    top-level or checkpoint fields (``prompt``, ``solution``, ``report``, ``test`` go to the checkpoint)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "prompt.md").write_text("Write done.txt.\n")
    (root / "solution").mkdir(exist_ok=True)
    (root / "solution" / "done.txt").write_text("done\n")
    own = {"prompt": "prompt.md", "solution": "solution", "test": "test -f done.txt"}
    top: dict[str, str] = {}
    for key, value in fields.items():
        (own if key in ("prompt", "solution", "report", "test") else top)[key] = value
    lines = [f"name: {_quote(name)}", *(f"{k}: {_quote(v)}" for k, v in top.items()), "checkpoints:",
             f"  - name: {_quote(checkpoint)}", *(f"    {k}: {_quote(v)}" for k, v in own.items())]
    (root / "problem.yaml").write_text("\n".join(lines) + "\n")
    return root


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def slopcode_problem(root: Path, config: str) -> Path:
    """A SlopCodeBench-shaped problem: ``config.yaml`` (given), ``checkpoint_1.md``, ``tests/``, ``solutions/``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.yaml").write_text(config)
    (root / "checkpoint_1.md").write_text("Write %%%ENTRYPOINT:entry_file%%% printing hi.\n")
    (root / "tests").mkdir(exist_ok=True)
    (root / "tests" / "conftest.py").write_text("")
    (root / "tests" / "test_checkpoint_1.py").write_text("def test_hi():\n    assert True\n")
    (root / "solutions" / "checkpoint_1").mkdir(parents=True, exist_ok=True)
    (root / "solutions" / "checkpoint_1" / "main.py").write_text("print('hi')\n")
    return root


SLOPCODE_CONFIG = """name: {name}
entry_file: {entry}
timeout: 10
static_assets: {assets}
checkpoints:
  checkpoint_1:
    version: 1
    order: 1
"""


def harbor_task(root: Path, toml: str = "", image: str = "agentrig-test/node:bookworm") -> Path:
    """A Harbor-shaped task: ``task.toml`` (``toml`` appended), ``instruction.md``, ``tests/test.sh``, ``solution/solve.sh``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "task.toml").write_text(
        f'version = "1.0"\n{toml}\n[environment]\ndocker_image = "{image}"\nallow_internet = false\n'
        if "[environment]" not in toml else f'version = "1.0"\n{toml}\n'
    )
    (root / "instruction.md").write_text("Write done.txt.\n")
    (root / "tests").mkdir(exist_ok=True)
    (root / "tests" / "test.sh").write_text("#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n")
    (root / "solution").mkdir(exist_ok=True)
    (root / "solution" / "solve.sh").write_text("#!/bin/bash\necho done > done.txt\n")
    return root


def entries(directory: Path) -> set[str]:
    """Every path below ``directory`` (relative), to show nothing was removed or added."""
    return {p.relative_to(directory).as_posix() for p in directory.rglob("*")}


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``agentrig ARGV`` in this process: exit status, stdout, stderr."""
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def run_subprocess(cwd: Path, *argv: str, yaml_loader: str = "libyaml", **env: str) -> subprocess.CompletedProcess[str]:
    """``agentrig ARGV`` in a child process (a crash of the child is then a result, not the test's end);
    ``yaml_loader="pure-python"``: its PyYAML without libyaml, as a build without it would be."""
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    child_env.update(env)
    code = "import sys; from agentrig.cli import main; sys.exit(main(sys.argv[1:]))"
    if yaml_loader == "pure-python":
        code = "import yaml; del yaml.CSafeLoader; yaml.__with_libyaml__ = False; " + code
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=cwd,
                          env=child_env, timeout=120)


def one_error_line(err: str) -> str:
    """The only ``agentrig: error:`` line of ``err`` (and no traceback); short."""
    lines = [line for line in err.splitlines() if line.startswith("agentrig: error:")]
    assert len(lines) == 1, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    assert len(lines[0]) < 600, lines[0][:600]
    return lines[0]
