"""The greeter example solved by ``agentrig run --agent aider``: the real pinned aider, a scripted model
answering in aider's SEARCH/REPLACE format, in both runtimes.

In ``--runtime docker`` the agent's image is built from the package's template over the Debian test
image (the ``aider_image`` fixture builds it first, so the run finds it ready); the container shares the
host's network (``-c runtime.network=host``) to reach the fake server on 127.0.0.1.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentrig.testing.cli_agents import agentrig_executable, cli_run_env, containers_of_process
from agentrig_aider.testing import replace_block

pytestmark = pytest.mark.aider_cli

API_KEY = "sk-test-aider-greeter-0123456789"
IN_DOCKER = [pytest.mark.docker, pytest.mark.xdist_group("aider_image")]

STUB = "def greet(name):\n    raise NotImplementedError\n"
GREET = 'def greet(name):\n    return f"Hello, {name}!"\n'
MAIN = (
    '\n\nif __name__ == "__main__":\n    import sys\n    args = sys.argv[1:]\n'
    '    shout = "--shout" in args\n    for name in [a for a in args if a != "--shout"]:\n'
    "        line = greet(name)\n        print(line.upper() if shout else line)\n"
)


def script_greeter(server: Any) -> None:
    """One answer per checkpoint: the SEARCH/REPLACE edit of ``greet.py``."""
    server.add_reply("Implementing greet().\n\n" + replace_block("greet.py", STUB, GREET),
                     usage={"input": 900, "output": 40, "cache_read": 300})
    server.add_reply("Adding the command line.\n\n" + replace_block("greet.py", GREET, GREET + MAIN),
                     usage={"input": 1100, "output": 90})


@pytest.mark.parametrize("runtime", ["local", pytest.param("docker", marks=IN_DOCKER)])
def test_greeter_passes_both_checkpoints(
    request: pytest.FixtureRequest, runtime: str, fake_openai_server: Any, tmp_path: Path
) -> None:
    server = fake_openai_server
    script_greeter(server)
    repo = Path(request.config.rootpath)
    out = tmp_path / "run"
    if runtime == "local":
        where = ["-c", f"binary={request.getfixturevalue('aider_bin')}"]
    else:
        request.getfixturevalue("aider_image")  # built here, before the run: the run finds it ready
        where = ["--image", request.getfixturevalue("node_test_image"), "-c", "runtime.network=host"]
    argv = [agentrig_executable(), "run", str(repo / "examples" / "greeter"), "--agent", "aider", "--model",
            "openai/gpt-4.1", "--runtime", runtime, *where, "-c", "edit_format=diff", "--output", str(out)]
    env = cli_run_env("OPENAI_", OPENAI_API_KEY=API_KEY, OPENAI_BASE_URL=server.base_url)
    run = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    stdout, stderr = run.communicate(timeout=280)
    assert run.returncode == 0, stdout + stderr
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert [(x["checkpoint"], x["status"]) for x in lines] == [("greet_function", "passed"), ("command_line", "passed")]
    assert [x["steps"] for x in lines] == [1, 1]
    for checkpoint in ("greet_function", "command_line"):
        agent_dir = out / "greeter" / checkpoint / "agent"
        outcome = json.loads((agent_dir / "aider_outcome.json").read_text())
        assert outcome["aider_version"] == "0.86.2" and outcome["edited_files"] == ["greet.py"]
        inference = json.loads((out / "greeter" / checkpoint / "inference_result.json").read_text())
        # the recorded usage is the sum of the endpoint's usage objects, its cost agentrig's prices on exactly it
        assert outcome["cli_usage"] == inference["usage"]["net_tokens"]
        launch = json.loads((agent_dir / "aider_launch.json").read_text())
        assert launch["runtime"] == runtime and "greet.py" in launch["chat_files"]
        assert "Implementing greet()" in (agent_dir / "aider.chat.history.md").read_text() or checkpoint != "greet_function"
        snapshot = out / "greeter" / checkpoint / "snapshot"
        if snapshot.is_dir():  # nothing of aider's own in the workspace: no .git, no .aider* files
            assert sorted(p.name for p in snapshot.iterdir() if p.name.startswith((".git", ".aider"))) == []
    assert lines[0]["cost"] == pytest.approx(900 * 2e-6 + 300 * 0.5e-6 + 40 * 8e-6)
    assert lines[1]["cost"] == pytest.approx(1100 * 2e-6 + 90 * 8e-6)
    everything = "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())
    assert API_KEY not in everything + stdout + stderr
    assert len(server.model_requests) == 2
    assert all(r.headers.get("authorization") == f"Bearer {API_KEY}" for r in server.model_requests)
    if runtime == "docker":
        record = json.loads((out / "run.json").read_text())
        assert record["identity"]["runtime"]["agent_image"] == request.getfixturevalue("aider_image")
        assert "building agent image" not in stderr
        assert containers_of_process(request.getfixturevalue("docker_engine"), run.pid) == []
