"""Discovery from built wheels installed into a fresh virtual environment."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from agentrig.testing.packaging import pip_install, venv_bin

# The wheels and the venv are session fixtures: built once on the one worker that runs these.
pytestmark = pytest.mark.xdist_group("wheelhouse")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    env.update(extra)
    return env


def _agentrig(python: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(venv_bin(python, "agentrig")), *args], capture_output=True, text=True,
                          env=_env(**env), timeout=60)


def test_agents_from_wheels_with_distribution_and_version(fresh_venv):
    result = _agentrig(fresh_venv, "agents", "list", "--json")
    assert result.returncode == 0, result.stderr
    agents = {a["name"]: a for a in json.loads(result.stdout)}
    assert {n: (a["distribution"], a["version"]) for n, a in agents.items()} == {
        "claude_code": ("agentrig-claude-code", "0.1.0"),
        "codex": ("agentrig-codex", "0.1.0"),
        "opencode": ("agentrig-opencode", "0.1.0"),
        "gemini_cli": ("agentrig-gemini-cli", "0.1.0"),
        "qwen_code": ("agentrig-qwen-code", "0.1.0"),
        "aider": ("agentrig-aider", "0.1.0"),
        "openhands": ("agentrig-openhands", "0.1.0"),
        "miniswe": ("agentrig-miniswe", "0.1.0"),
        "react": ("agentrig-react", "0.1.0"),
        "echo": ("thirdparty-echo-agent", "4.2.0"),
        "oracle": ("agentrig", "0.1.0"),  # the core's own, needs no model
    }
    location = subprocess.run([str(fresh_venv), "-c", "import agentrig_react; print(agentrig_react.__file__)"],
                              capture_output=True, text=True, check=True).stdout
    assert str(fresh_venv.parent.parent) in location  # installed from the wheel, not the source tree
    assert result.stderr == ""


def test_listing_does_not_import_agent_implementations(fresh_venv):
    # pydantic too: its model machinery alone costs more than the listing's whole budget
    probe = (
        "import sys, io, contextlib\n"
        "from agentrig.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['agents', 'list'])\n"
        "heavy = ['agentrig_react.agent', 'agentrig_miniswe.agent', 'agentrig_claude_code.agent',\n"
        "         'agentrig_react.config', 'agentrig_miniswe.config', 'agentrig_claude_code.config',\n"
        "         'agentrig_codex.agent', 'agentrig_codex.config', 'agentrig_codex.exec_json',\n"
        "         'agentrig_opencode.agent', 'agentrig_opencode.config', 'agentrig_opencode.run_json',\n"
        "         'agentrig_gemini_cli.agent', 'agentrig_gemini_cli.config', 'agentrig_gemini_cli.stream_json',\n"
        "         'agentrig_qwen_code.agent', 'agentrig_qwen_code.config', 'agentrig_qwen_code.stream_json',\n"
        "         'agentrig_aider.agent', 'agentrig_aider.config', 'agentrig_aider.events', 'aider',\n"
        "         'agentrig_openhands.agent', 'agentrig_openhands.config', 'agentrig_openhands.events', 'openhands',\n"
        "         'thirdparty_agent.agent', 'minisweagent', 'litellm', 'openai', 'anthropic', 'docker',\n"
        "         'pydantic', 'ray', 'agentrig_ray.executor']\n"
        "print([m for m in heavy if m in sys.modules])\n"
    )
    result = subprocess.run([str(fresh_venv), "-c", probe], capture_output=True, text=True, env=_env(), timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_third_party_agent_is_constructed_with_no_change_to_the_core(fresh_venv, tmp_path):
    script = (
        "from types import SimpleNamespace\n"
        "import agentrig\n"
        "from pathlib import Path\n"
        "cfg = agentrig.get_agent_config_cls('echo')(type='echo')\n"
        "model = agentrig.ModelDefinition(provider='openai', name='none')\n"
        f"ws = Path({str(tmp_path)!r})\n"
        "agent = agentrig.Agent.from_config(cfg, model, None, 'demo', False, None)\n"
        "agent.setup(SimpleNamespace(workspace=SimpleNamespace(path=ws), runtime=None))\n"
        "result = agent.run_checkpoint('hello from a third party')\n"
        "print(type(agent).__module__, result.stop_reason, (ws / 'ECHO.txt').read_text())\n"
    )
    result = subprocess.run([str(fresh_venv), "-c", script], capture_output=True, text=True, env=_env(), timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "thirdparty_agent.agent submitted hello from a third party"


def test_agents_show_from_wheel(fresh_venv):
    result = _agentrig(fresh_venv, "agents", "show", "echo", "--json")
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert shown["distribution"] == "thirdparty-echo-agent"
    assert shown["schema"]["properties"]["filename"]["default"] == "ECHO.txt"


def test_broken_installed_plugin_warns_and_strict_fails(fresh_venv, wheelhouse, tmp_path):
    # a separate target so the shared venv stays healthy for the other tests
    target = tmp_path / "site"
    pip_install(fresh_venv, [wheelhouse["broken-plugin"]], no_deps=True, extra_args=["--target", str(target)])
    env = {"PYTHONPATH": str(target)}
    result = _agentrig(fresh_venv, "agents", "list", "--json", **env)
    assert result.returncode == 0
    # every agent is still listed (ours, the third party's echo and the core's oracle): the broken plugin costs nothing else
    assert json.loads(result.stdout) == json.loads(_agentrig(fresh_venv, "agents", "list", "--json").stdout)
    assert result.stderr.splitlines() == [
        ("agentrig: warning: plugin 'broken' (broken-plugin 0.0.1): failed to import 'broken_plugin.plugin': "
        "ImportError: broken_plugin needs a library that is not installed")
    ]
    plugins = {p["name"]: p for p in json.loads(_agentrig(fresh_venv, "plugins", "--json", **env).stdout)}
    assert plugins["broken"]["error"].startswith("failed to import")
    assert plugins["react"]["error"] is None and plugins["react"]["hooks"] == ["agentrig_agents"]
    assert plugins["ray"]["error"] is None and plugins["ray"]["hooks"] == ["agentrig_executors"]
    strict = _agentrig(fresh_venv, "agents", "list", AGENTRIG_STRICT_PLUGINS="1", **env)
    assert strict.returncode == 3 and "plugin 'broken'" in strict.stderr
    disabled = _agentrig(fresh_venv, "agents", "list", AGENTRIG_DISABLE_PLUGINS="broken", **env)
    assert disabled.returncode == 0 and disabled.stderr == ""


def test_third_party_model_provider_from_a_wheel_runs_an_agent(fresh_venv, tmp_path):
    problem = tmp_path / "hello"
    problem.mkdir()
    (problem / "problem.yaml").write_text(
        "name: hello\ncheckpoints:\n  - name: checkpoint_1\n    prompt: one.md\n"
        "    test: grep -q 'scripted/echo-1 with a credential from SCRIPTED_TOKEN' proof.txt\n"
    )
    (problem / "one.md").write_text("Write the proof.\n")
    secret = "tok-third-party-0123456789"
    base = ["run", str(problem), "--agent", "react", "--model", "scripted/echo-1", "-q"]
    # discovery and the credential variable the provider declares, checked before anything runs
    missing = _agentrig(fresh_venv, *base, "--output", str(tmp_path / "none"))
    assert missing.returncode == 2 and "no credential for scripted: set SCRIPTED_TOKEN" in missing.stderr
    assert not (tmp_path / "none").exists()
    out = tmp_path / "run"
    result = _agentrig(fresh_venv, *base, "--output", str(out), SCRIPTED_TOKEN=secret)
    assert result.returncode == 0, result.stderr
    line = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    assert line["passed"] is True
    checkpoint = out / "hello" / "checkpoint_1"
    assert (checkpoint / "snapshot" / "files" / "proof.txt").read_text() == (
        "scripted/echo-1 with a credential from SCRIPTED_TOKEN\n"
    )
    assert f"done ({len(secret)}-character credential)" in (checkpoint / "trajectory.jsonl").read_text()
    assert not [p for p in out.rglob("*") if p.is_file() and secret in p.read_text(errors="replace")]
    plugins = {p["name"]: p for p in json.loads(_agentrig(fresh_venv, "plugins", "--json").stdout)}
    assert plugins["scripted"]["distribution"] == "thirdparty-scripted-provider"
    assert plugins["scripted"]["hooks"] == ["agentrig_commands", "agentrig_model_providers"]
    assert plugins["scripted"]["error"] is None


def test_a_plugin_from_a_wheel_adds_a_command(fresh_venv):
    result = _agentrig(fresh_venv, "scripted-proof", "scripted/echo-1")
    assert (result.returncode, result.stdout, result.stderr) == (
        0, "scripted/echo-1 with a credential from SCRIPTED_TOKEN\n", ""
    )
    assert "Print what the scripted client writes" in _agentrig(fresh_venv, "--help").stdout


def test_agent_of_the_former_form_runs_end_to_end_from_its_wheel(fresh_venv, tmp_path):
    # thirdparty-echo-agent implements the former _from_config(config, model, credential, problem_name,
    # verbose, image, thinking_preset, thinking_max_tokens) and is installed unchanged from its wheel
    problem = tmp_path / "shout"
    (problem / "tests").mkdir(parents=True)
    (problem / "problem.yaml").write_text(
        "name: shout\ncheckpoints:\n  - name: checkpoint_1\n    prompt: checkpoint_1.md\n    test: sh tests/check_1.sh\n"
    )
    (problem / "checkpoint_1.md").write_text("say hello")
    (problem / "tests" / "check_1.sh").write_text('grep -qx "say hello" ECHO.txt\n')
    out = tmp_path / "run"
    # the deprecation is shown when asked for, as Python shows it to a plugin's own tests
    warn = {"PYTHONWARNINGS": "always:agent class:DeprecationWarning"}
    result = _agentrig(fresh_venv, "run", str(problem), "--agent", "echo", "--model", "openai/gpt-4o-mini",
                       "--output", str(out), "--quiet", **warn)
    assert result.returncode == 0, result.stderr
    deprecations = [line for line in result.stderr.splitlines() if "DeprecationWarning" in line]
    assert len(deprecations) == 1, result.stderr  # one, for the preflight and the problem run alike
    assert "thirdparty_agent.agent.EchoAgent implements _from_config(config, model, credential" in deprecations[0]
    assert "implement _from_config(cls, config, context)" in deprecations[0]
    line = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    assert (line["checkpoint"], line["status"], line["stop_reason"]) == ("checkpoint_1", "passed", "submitted")
    assert (out / "shout" / "checkpoint_1" / "agent" / "echo.log").read_text() == "echoed\n"
    quiet = _agentrig(fresh_venv, "run", str(problem), "--agent", "echo", "--model", "openai/gpt-4o-mini",
                      "--output", str(tmp_path / "again"), "--quiet")
    assert quiet.returncode == 0 and "Deprecation" not in quiet.stderr, quiet.stderr  # silent unless asked
