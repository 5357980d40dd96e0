"""A Harbor task's ``[verifier] env = {X = "${OPENAI_API_KEY}"}`` copied a host secret into the
verifier (and from there into ``evaluation.json``). Host variables are still expanded, as Harbor
does, but never the credentials agentrig holds (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``,
``ANTHROPIC_AUTH_TOKEN``, any ``*_API_KEY``) unless ``-c verifier.allow_env=[NAME,...]`` allows
them; ``agentrig run`` names once the variables the tasks ask for."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agentrig.formats.harbor.config import TaskConfigError, resolve_env

sys.path.insert(0, str(Path(__file__).parent))

from problem_kit import SECRET, harbor_task, one_error_line, run_cli, run_subprocess

VERIFIER = '[verifier]\ntimeout_sec = 60.0\nenv = {LEAK = "${OPENAI_API_KEY}", PLAIN = "${AGENTRIG_TEST_PLAIN}"}\n'
TEST_SH = """#!/bin/bash
echo "leak=$LEAK plain=$PLAIN"
echo "$LEAK" > /logs/verifier/leak.txt
echo 1 > /logs/verifier/reward.txt
"""


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "VLLM_API_KEY", "OPENAI_API_KEY_FILE"])
def test_credentials_agentrig_holds_are_never_expanded_unless_allowed(name: str) -> None:
    environ = {name: SECRET, "PLAIN": "ok"}
    env = {"X": f"${{{name}}}", "Y": "${PLAIN}", "Z": f"${{{name}:-fallback}}"}
    with pytest.raises(TaskConfigError, match=rf"host variable {name} holds a credential.*-c verifier.allow_env=\[{name}\]"):
        resolve_env(env, "task.toml [verifier] env", environ)
    assert resolve_env({"Y": "${PLAIN}", "Z": f"${{{name}:-fallback}}"}, "w", environ) == {"Y": "ok", "Z": "fallback"}
    assert resolve_env(env, "w", environ, allow=[name]) == {"X": SECRET, "Y": "ok", "Z": SECRET}


def test_verifier_allow_env_option_is_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    task = harbor_task(tmp_path / "tasks" / "t1", VERIFIER)
    monkeypatch.chdir(tmp_path)
    for option, message in (
        ("verifier.allow_env=[not a name]", "-c verifier.allow_env: 'not a name' is not an environment variable name"),
        ("verifier.allow=[X]", "-c verifier.allow: unknown verifier option (known: allow_env)"),
    ):
        status, _, err = run_cli(capsys, "run", str(task), "--agent", "oracle", "--runtime", "docker", "-c", option)
        assert status == 2 and message in one_error_line(err)
    assert not (tmp_path / "runs").exists()


@pytest.mark.docker
def test_harbor_verifier_env_cannot_copy_the_api_key_into_the_verifier(tmp_path: Path, node_test_image: str) -> None:
    task = harbor_task(tmp_path / "tasks" / "t1", VERIFIER, image=node_test_image)
    (task / "tests" / "test.sh").write_text(TEST_SH)
    out = tmp_path / "out"
    proc = run_subprocess(tmp_path, "run", str(task), "--agent", "oracle", "--runtime", "docker", "--output", str(out),
                          OPENAI_API_KEY=SECRET, AGENTRIG_TEST_PLAIN="plain-value")
    asked = [line for line in proc.stderr.splitlines() if "ask for host environment variables" in line]
    assert asked == [
        ("agentrig: tasks ask for host environment variables: AGENTRIG_TEST_PLAIN (t1), OPENAI_API_KEY (t1);"
        " credentials withheld: OPENAI_API_KEY (allow with -c verifier.allow_env=[OPENAI_API_KEY])")
    ], proc.stderr[-2000:]
    evaluation = json.loads((out / "t1" / "task" / "evaluation.json").read_text())
    assert evaluation["infrastructure_failure"] is True
    assert "host variable OPENAI_API_KEY holds a credential" in evaluation["error"]
    for path in out.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(errors="replace"), path


@pytest.mark.docker
def test_harbor_verifier_gets_a_credential_the_user_allowed(tmp_path: Path, node_test_image: str) -> None:
    task = harbor_task(tmp_path / "tasks" / "t1", VERIFIER, image=node_test_image)
    (task / "tests" / "test.sh").write_text(TEST_SH)
    out = tmp_path / "out"
    proc = run_subprocess(tmp_path, "run", str(task), "--agent", "oracle", "--runtime", "docker", "--output", str(out),
                          "-c", "verifier.allow_env=[OPENAI_API_KEY]", OPENAI_API_KEY=SECRET, AGENTRIG_TEST_PLAIN="plain-value")
    assert "credentials withheld" not in proc.stderr
    evaluation = json.loads((out / "t1" / "task" / "evaluation.json").read_text())
    assert (evaluation["passed"], evaluation["error"]) == (True, None), proc.stderr[-2000:]
    # the verifier got the value; what it wrote is recorded without it (docs/security.md, Secrets)
    assert (out / "t1" / "task" / "evaluation" / "verifier" / "leak.txt").read_text() == "[redacted]\n"
    assert SECRET not in "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())
    assert "plain=plain-value" in evaluation["output_tail"]
