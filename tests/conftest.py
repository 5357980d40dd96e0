"""Fixtures of the cross-package tests: our wheels and a third party's, in a fresh venv."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.testing.packaging import build_wheel, create_venv, pip_install

REPO = Path(__file__).resolve().parents[1]

# Benchmark problems under fixtures/ carry test suites of their own (a SlopCodeBench-style
# problem's tests/): agentrig runs them on an agent's work, this test run must not collect them.
collect_ignore_glob = ["fixtures/*"]
OUR_PACKAGES = [
    "core", "agent-claude-code", "agent-codex", "agent-gemini-cli", "agent-opencode", "agent-miniswe", "agent-react",
    "agent-qwen-code", "agent-aider", "agent-openhands", "executor-ray",
]


@pytest.fixture(scope="module")
def greeter_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The README's greeter example run once per module (react on its recorded replies, offline): a finished
    run directory of two checkpoints, to copy and tamper with."""
    from agentrig.cli import main

    greeter = REPO / "examples" / "greeter"
    out = tmp_path_factory.mktemp("greeter") / "run"
    status = main(["run", str(greeter), "--agent", "react", "--model", f"replay/{greeter / 'replay.jsonl'}",
                   "--output", str(out), "-q"])
    assert status == 0
    return out


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Wheels of our four packages and of the fixture packages under tests/fixtures."""
    dest = tmp_path_factory.mktemp("wheels")
    wheels = {name: build_wheel(REPO / "packages" / name, dest) for name in OUR_PACKAGES}
    for fixture in ("thirdparty-agent", "thirdparty-provider", "broken-plugin"):
        wheels[fixture] = build_wheel(REPO / "tests" / "fixtures" / fixture, dest)
    return wheels


@pytest.fixture(scope="session")
def fresh_venv(tmp_path_factory: pytest.TempPathFactory, wheelhouse: dict[str, Path]) -> Path:
    """A new virtual environment with our wheels (not editable), the third-party agent and model provider.

    Agent packages go in without their heavy dependencies (SDKs, mini-swe-agent):
    listing must not need them.
    """
    python = create_venv(tmp_path_factory.mktemp("venv") / "env")
    pip_install(python, ["pluggy>=1.5", "pydantic>=2.7", "pyyaml>=6"])
    pip_install(python, [wheelhouse[n] for n in (*OUR_PACKAGES, "thirdparty-agent", "thirdparty-provider")], no_deps=True)
    return python
