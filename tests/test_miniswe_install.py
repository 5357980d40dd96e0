"""agentrig-miniswe installed from its wheel alone (its declared dependencies, nothing of the dev
environment): ``model_backend: litellm`` with tool calls (mini.yaml) refuses at set-up without the
``litellm`` extra, naming it, and solves a checkpoint once the extra is installed.

LiteLLM imports ``mcp`` whenever tools are sent, but neither it nor mini-swe-agent installs it;
before the extra existed, every query failed with ``ModuleNotFoundError: mcp`` after about 250 s
of mini-swe-agent's retries.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from agentrig.testing.fake_server import FakeModelServer
from agentrig.testing.packaging import create_venv, pip_install, venv_bin

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900), pytest.mark.xdist_group("wheelhouse")]

KEY = "sk-test-miniswe-install"


def _problem(root: Path) -> Path:
    problem = root / "hi"
    problem.mkdir(parents=True)
    (problem / "task.md").write_text("Write hi into hi.txt, then submit it.\n")
    (problem / "problem.yaml").write_text(
        "name: hi\ncheckpoints:\n  - name: write\n    prompt: task.md\n    test: grep -qx hi hi.txt\n"
    )
    return problem


def _run(python: Path, problem: Path, out: Path, server: FakeModelServer) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "AGENTRIG_", "MSWEA_"))}
    env.update({"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": KEY})
    return subprocess.run(
        [str(venv_bin(python, "agentrig")), "run", str(problem), "--agent", "miniswe", "--model", "openai/gpt-4o-mini",
         "--output", str(out), "-c", "model_backend=litellm"],
        capture_output=True, text=True, env=env, timeout=300, cwd=out.parent,
    )


def test_litellm_tool_calls_from_the_package_alone(
    wheelhouse: dict[str, Path], tmp_path: Path, fake_openai_server: FakeModelServer
) -> None:
    python = create_venv(tmp_path / "env")
    pip_install(python, [wheelhouse["core"], wheelhouse["agent-miniswe"]])
    problem = _problem(tmp_path / "problems")

    # Without the extra: one line at set-up naming it, no model call, no minutes of retries.
    refused = _run(python, problem, tmp_path / "without", fake_openai_server)
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert "pip install 'agentrig-miniswe[litellm]'" in refused.stderr, refused.stderr
    assert fake_openai_server.model_requests == [], "set-up must refuse before any model call"

    # With the extra, as a user installs it.
    pip_install(python, [f"agentrig-miniswe[litellm] @ {wheelhouse['agent-miniswe'].as_uri()}"])
    fake_openai_server.add_reply("", tool_calls=[{"name": "bash", "arguments": {"command": "echo hi > hi.txt"}}])
    fake_openai_server.add_reply(
        "", tool_calls=[{"name": "bash", "arguments": {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}}]
    )
    out = tmp_path / "with"
    solved = _run(python, problem, out, fake_openai_server)
    assert solved.returncode == 0, solved.stderr[-3000:]
    (line,) = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert line["status"] == "passed" and line["stop_reason"] == "submitted"
    requests = fake_openai_server.model_requests
    assert len(requests) == 2 and requests[0].body["tools"][0]["function"]["name"] == "bash"
