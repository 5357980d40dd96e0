"""Helpers of the secret-leak threat tests: every agent run by ``agentrig run`` on a one-checkpoint problem with a
canary secret, against the test kit's fake model servers, and every place a run's records reach searched for it:
each file under the run directory, ``agentrig export --format jsonl`` and the viewer's static report (its search
shards included)."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from agentrig.testing.cli_agents import find_cli_binary

REPO = Path(__file__).resolve().parents[2]
#: The command the model asks the agent's shell tool for: what a model hunting for keys runs; the task is done too.
PRINT_ENV = "env | grep -i api_key; echo done > done.txt"


def canary(agent: str) -> str:
    """A fresh secret for ``agent``'s run, found nowhere else."""
    return f"sk-canary-{agent}-{secrets.token_hex(12)}"


class AgentCase(NamedTuple):
    """One agent as these tests drive it: its model, key variable, fake server, marker, the CLI it runs and how
    its model calls the shell tool (``None``: the agent has no shell tool)."""

    agent: str
    model: str
    key_env: str
    server_fixture: str
    marks: tuple[str, ...] = ()
    binary: str | None = None
    shell: Callable[[str], dict[str, Any]] | None = None
    config: tuple[str, ...] = ()

    def binary_path(self) -> str | None:
        """The pinned CLI (``<repo>/.cache/...``); missing: the test skips (fails under CI)."""
        if self.binary is None:
            return None
        return find_cli_binary(env_var=f"AGENTRIG_TEST_{self.agent.upper()}_BIN", default=REPO / self.binary,
                               cli_name=f"the {self.agent} CLI", install=".ci/run installs it")


def _call(name: str, key: str, **extra: Any) -> Callable[[str], dict[str, Any]]:
    return lambda command: {"name": name, "arguments": {key: command, **extra}}


CASES = {
    "claude_code": AgentCase("claude_code", "anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY", "fake_anthropic_server",
                             ("claude_cli",), ".cache/claude-code/node_modules/.bin/claude",
                             _call("Bash", "command", description="run it")),
    "codex": AgentCase("codex", "openai/gpt-5", "OPENAI_API_KEY", "fake_openai_server", ("codex_cli",),
                       ".cache/codex/node_modules/.bin/codex", _call("exec_command", "cmd")),
    "gemini_cli": AgentCase("gemini_cli", "gemini/gemini-2.5-pro", "GEMINI_API_KEY", "fake_gemini_server", ("gemini_cli",),
                            ".cache/gemini-cli/node_modules/.bin/gemini", _call("run_shell_command", "command")),
    "opencode": AgentCase("opencode", "openai/gpt-5", "OPENAI_API_KEY", "fake_openai_server", ("opencode_cli",),
                          ".cache/opencode/node_modules/.bin/opencode", _call("bash", "command", description="run it")),
    "qwen_code": AgentCase("qwen_code", "openai/gpt-5", "OPENAI_API_KEY", "fake_openai_server", ("qwen_cli",),
                           ".cache/qwen-code/node_modules/.bin/qwen", _call("run_shell_command", "command")),
    "openhands": AgentCase("openhands", "openai/gpt-4o", "OPENAI_API_KEY", "fake_openai_server", ("openhands",),
                           ".cache/openhands-venv/bin/python", _call("terminal", "command"), ("num_retries=0",)),
    "aider": AgentCase("aider", "openai/gpt-4.1", "OPENAI_API_KEY", "fake_openai_server", ("aider_cli",),
                       ".cache/aider-venv/bin/aider", None, ("edit_format=whole",)),
    "react": AgentCase("react", "openai/gpt-4o-mini", "OPENAI_API_KEY", "fake_openai_server", (), None,
                       _call("bash", "command")),
    "miniswe": AgentCase("miniswe", "openai/gpt-4o-mini", "OPENAI_API_KEY", "fake_openai_server", (), None,
                         _call("bash", "command")),
}


def agent_params(names: list[str] | None = None) -> list[Any]:
    """``pytest.param`` per agent, with its CLI's marker."""
    return [pytest.param(name, marks=[getattr(pytest.mark, m) for m in CASES[name].marks], id=name)
            for name in (names or list(CASES))]


def problem(root: Path) -> Path:
    """A one-checkpoint problem solved once ``done.txt`` says ``done``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "task.md").write_text("Write done into done.txt.\n")
    (root / "problem.yaml").write_text(
        "name: leak\ncheckpoints:\n  - name: probe\n    prompt: task.md\n    test: grep -qx done done.txt\n"
    )
    return root


def agentrig(*args: str, env: dict[str, str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``agentrig ARGS...`` as a user runs it, with ``env``."""
    return subprocess.run([str(Path(sys.executable).with_name("agentrig")), *args], env=env, capture_output=True,
                          text=True, timeout=timeout, cwd=cwd)


def run_env(case: AgentCase, key: str, **values: str) -> dict[str, str]:
    """This process's environment without provider and agentrig variables, with the canary as ``case``'s key."""
    drop = ("ANTHROPIC_", "OPENAI_", "GEMINI_", "GOOGLE_", "LLM_", "AGENTRIG_", "MSWEA_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env[case.key_env] = key
    if case.agent == "qwen_code":  # its CLI needs Node.js 22: npm's node package beside it (see .ci/run)
        env["PATH"] = f"{Path(REPO / str(case.binary)).parent}{os.pathsep}{env.get('PATH', os.defpath)}"
    env.update(values)
    return env


def run_agent(case: AgentCase, server: Any, tmp_path: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    """``agentrig run`` of :func:`problem` with ``case``'s agent in the local runtime, output in ``tmp_path/run``."""
    binary = case.binary_path()
    where = ["-c", f"binary={binary}"] if binary else []
    config = [arg for field in case.config for arg in ("-c", field)]
    return agentrig("run", str(problem(tmp_path / "problem")), "--agent", case.agent, "--model", case.model,
                    "--runtime", "local", "-c", f"base_url={server.base_url}", *where, *config,
                    "--output", str(tmp_path / "run"), *extra, env=env, cwd=tmp_path)


def files_holding(root: Path, secret: str) -> list[str]:
    """The files under ``root`` (links not followed) whose bytes hold ``secret``."""
    needle = secret.encode()
    found = []
    for directory, _dirs, names in os.walk(root):
        for name in names:
            path = Path(directory) / name
            if path.is_file() and not path.is_symlink() and needle in path.read_bytes():
                found.append(str(path.relative_to(root)))
    return found


def leaks(run_dir: Path, secret: str, env: dict[str, str], cwd: Path) -> list[str]:
    """Every place ``secret`` reached: files of the run directory, the jsonl export, the static report."""
    found = [f"run directory: {name}" for name in files_holding(run_dir, secret)]
    export = agentrig("export", str(run_dir), "--format", "jsonl", "-o", "-", env=env, cwd=cwd)
    assert export.returncode == 0, export.stderr
    assert export.stdout.strip(), "the export holds the run's steps"
    if secret in export.stdout + export.stderr:
        found.append("export --format jsonl")
    report = cwd / "report"
    view = agentrig("view", str(run_dir), "--out", str(report), env=env, cwd=cwd)
    assert view.returncode == 0, view.stderr
    found += [f"view --out: {name}" for name in files_holding(report, secret)]
    return found
