"""CLI agents in a task's own container, through their bundles: `agentrig run --agent claude_code` (codex,
opencode, gemini_cli) on a Harbor task whose image is plain Debian (no Node.js, no CLI), a Terminal-Bench task
and a multi-step task, with the real pinned CLIs (packed from npm into the bundle cache) talking to the test
kit's fake model servers on the host (``-c runtime.network=host``); and the one line when the bundle cannot
run in the task's image (busybox: no C library loader)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from agentrig.run.records import CheckpointResultLine

pytestmark = [pytest.mark.docker, pytest.mark.xdist_group("cli_bundles")]

FIXTURES = Path(__file__).parent / "fixtures"


class CliAgentCase(NamedTuple):
    """One CLI agent as these tests drive it: its model, the fake server it talks to, how it runs a command."""

    agent: str
    model: str
    key_env: str
    server_fixture: str
    marker: str

    def script(self, server: Any, command: str) -> None:
        """Queue on ``server`` a reply running ``command`` with the CLI's shell tool, then a closing reply."""
        tool = {"claude_code": "Bash"}[self.agent]
        server.add_reply("On it.", tool_calls=[{"name": tool, "arguments": {"command": command}}])
        server.add_reply("Done.")


CASES = {
    "claude_code": CliAgentCase("claude_code", "anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY", "fake_anthropic_server", "claude_cli"),
}
API_KEY = "sk-test-bundle-secret-0123456789"


@pytest.fixture(scope="session")
def bundles_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundle cache these tests share (``AGENTRIG_TEST_BUNDLES_DIR``, else a session directory): each bundle
    is packed from npm once per session (npm's own cache serves the packages again)."""
    given = os.environ.get("AGENTRIG_TEST_BUNDLES_DIR")
    return Path(given) if given else tmp_path_factory.mktemp("bundles")


def _task(root: Path, source: Path, image: str) -> Path:
    """A copy of the fixture task ``source`` running in ``image``, on the network (the CLI reaches its model
    on the host: a task kept off the network keeps its agent from the model too)."""
    target = root / source.name
    shutil.copytree(source, target)
    toml = target / "task.toml"
    if toml.exists():
        text = toml.read_text().replace('docker_image = "agentrig-test/node:bookworm"', f'docker_image = "{image}"')
        toml.write_text(text.replace("allow_internet = false\n", ""))
    for dockerfile in target.rglob("Dockerfile"):
        dockerfile.write_text(dockerfile.read_text().replace("FROM agentrig-test/node:bookworm", f"FROM {image}"))
    return target


def _run(case: CliAgentCase, tmp_path: Path, server: Any, bundles: Path, task: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "GEMINI_", "AGENTRIG_"))}
    env[case.key_env] = API_KEY
    env["AGENTRIG_BUNDLES_DIR"] = str(bundles)
    return subprocess.run(
        [str(Path(sys.executable).with_name("agentrig")), "run", str(task), "--agent", case.agent, "--model", case.model,
         "--runtime", "docker", "-c", "runtime.network=host", "-c", f"base_url={server.base_url}",
         "--output", str(tmp_path / "run"), *extra],
        env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )


def _lines(out: Path) -> list[CheckpointResultLine]:
    return [CheckpointResultLine.model_validate_json(x) for x in (out / "results.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("agent", sorted(CASES))
def test_cli_agent_solves_a_harbor_task_in_plain_debian(
    agent: str, tmp_path: Path, request: pytest.FixtureRequest, debian_test_image: str, bundles_root: Path,
    docker_engine: Any,
) -> None:
    case = CASES[agent]
    server = request.getfixturevalue(case.server_fixture)
    node = docker_engine.containers.run(debian_test_image, ["sh", "-c", "command -v node npm claude codex || true"],
                                        remove=True, network_mode="none")
    assert node.strip() == b""  # nothing of the agent in the task's image
    task = _task(tmp_path / "tasks", FIXTURES / "harbor-tasks" / "greeting", debian_test_image)
    case.script(server, "printf 'echo \"hello, $1\"\\n' > greet.sh; pwd > where.txt; test -f /.dockerenv && echo in >> where.txt")
    result = _run(case, tmp_path, server, bundles_root, task)
    assert result.returncode == 0, result.stdout + result.stderr
    (line,) = _lines(tmp_path / "run")
    assert line.status == "passed" and line.steps == 2
    where = (tmp_path / "run" / "greeting" / "task" / "snapshot" / "files" / "where.txt").read_text().split()
    assert where == ["/workspace", "in"]  # the task's working directory, inside the container
    assert API_KEY not in result.stdout + result.stderr + (tmp_path / "run" / "run.json").read_text()
    launch = next((tmp_path / "run" / "greeting" / "task" / "agent").glob("*_launch.json")).read_text()
    assert "/opt/agentrig/agents/" in launch and API_KEY not in launch
    # prepared once: a second run finds the bundle in the cache and says nothing of preparing it
    case.script(server, "printf 'echo \"hello, $1\"\\n' > greet.sh")
    shutil.rmtree(tmp_path / "run")
    again = _run(case, tmp_path, server, bundles_root, task)
    assert again.returncode == 0 and "preparing" not in again.stderr, again.stderr


def test_bundle_that_cannot_run_in_the_image_is_one_line_and_no_run_directory(
    tmp_path: Path, fake_anthropic_server: Any, docker_test_image: str, bundles_root: Path
) -> None:
    case = CASES["claude_code"]
    task = _task(tmp_path / "tasks", FIXTURES / "harbor-tasks" / "greeting", docker_test_image)
    result = _run(case, tmp_path, fake_anthropic_server, bundles_root, task)
    assert result.returncode == 2, result.stdout + result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("agentrig: error: agent 'claude_code' cannot run in image 'agentrig-test/busybox")
    assert "without glibc's or musl's dynamic loader" in line and "-c bundle=PATH" in line
    assert not (tmp_path / "run").exists()
    assert fake_anthropic_server.model_requests == []
