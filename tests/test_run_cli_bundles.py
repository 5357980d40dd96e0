"""CLI agents in a task's own container, through their bundles: `agentrig run --agent claude_code` (codex,
opencode, gemini_cli, qwen_code) on a Harbor task whose image is plain Debian (no Node.js, no CLI), a Terminal-Bench task
and a multi-step task, with the real pinned CLIs (packed from npm into the bundle cache) talking to the test
kit's fake model servers on the host (``-c runtime.network=host``); and the one line when the bundle cannot
run in the task's image (busybox: no C library loader)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from agentrig.run.records import CheckpointResultLine

# a CLI's first start in a fresh home (its state, its database) takes long on a loaded machine: the tasks' own
# agent time limits (60-120 s) would make these tests about the machine's load, so the runs give the agent 15 minutes.
# Each agent's tests share a worker (xdist group cli_bundles_<agent>): its bundle is packed once per worker, and the
# agents' groups run side by side.
pytestmark = [pytest.mark.docker, pytest.mark.timeout(3600)]
TIME_LIMIT = ["-c", "cost_limits.time_limit=900"]

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
        call = {
            "claude_code": {"name": "Bash", "arguments": {"command": command}},
            "codex": {"name": "exec_command", "arguments": {"cmd": command}},
            "opencode": {"name": "bash", "arguments": {"command": command, "description": "run it"}},
            "gemini_cli": {"name": "run_shell_command", "arguments": {"command": command}},
            "qwen_code": {"name": "run_shell_command", "arguments": {"command": command}},
        }[self.agent]
        server.add_reply("On it.", tool_calls=[call])
        server.add_reply("Done.")


CASES = {
    "claude_code": CliAgentCase("claude_code", "anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY", "fake_anthropic_server", "claude_cli"),
    "codex": CliAgentCase("codex", "openai/gpt-5", "OPENAI_API_KEY", "fake_openai_server", "codex_cli"),
    "opencode": CliAgentCase("opencode", "openai/gpt-5", "OPENAI_API_KEY", "fake_openai_server", "opencode_cli"),
    "gemini_cli": CliAgentCase("gemini_cli", "gemini/gemini-2.5-pro", "GEMINI_API_KEY", "fake_gemini_server", "gemini_cli"),
    "qwen_code": CliAgentCase("qwen_code", "openai/gpt-5", "OPENAI_API_KEY", "fake_openai_server", "qwen_cli"),
}
API_KEY = "sk-test-bundle-secret-0123456789"
#: The launch record's field naming the CLI session a checkpoint continued (claude_code, gemini_cli; codex; opencode).
RESUMED_FIELDS = ("resumed_session", "resumed_thread", "continued_session")
#: Each agent's tests, marked as needing its CLI.
AGENTS = [
    pytest.param(name, marks=[getattr(pytest.mark, case.marker), pytest.mark.xdist_group(f"cli_bundles_{name}")])
    for name, case in sorted(CASES.items())
]


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
         "--output", str(tmp_path / "run"), *TIME_LIMIT, *extra],
        env=env, capture_output=True, text=True, timeout=1800, cwd=tmp_path,
    )


def _lines(out: Path) -> list[CheckpointResultLine]:
    return [CheckpointResultLine.model_validate_json(x) for x in (out / "results.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("agent", AGENTS)
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


@pytest.mark.claude_cli
@pytest.mark.xdist_group("cli_bundles_claude_code")
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


def _heredoc(script: Path) -> str:
    """A shell command running ``script``'s text with bash (the task's files are not in its container), encoded:
    Gemini CLI refuses a command holding a command substitution (``$(...)``), even in a quoted here-document."""
    return _encoded(script.read_text())


def _encoded(script: str) -> str:
    """A shell command running ``script`` with bash, base64-encoded: no quoting a CLI's shell tool could rewrite."""
    import base64

    return f"echo {base64.b64encode(script.encode()).decode()} | base64 -d | bash"


@pytest.mark.parametrize("agent", AGENTS)
def test_cli_agent_solves_a_terminal_bench_task(
    agent: str, tmp_path: Path, request: pytest.FixtureRequest, debian_test_image: str, bundles_root: Path
) -> None:
    case = CASES[agent]
    server = request.getfixturevalue(case.server_fixture)
    task = _task(tmp_path / "tasks", FIXTURES / "harbor-tasks" / "tb-reverse", debian_test_image)
    case.script(server, "tac lines.txt > reversed.txt && pwd > where.txt")
    result = _run(case, tmp_path, server, bundles_root, task)
    assert result.returncode == 0, result.stdout + result.stderr
    (line,) = _lines(tmp_path / "run")
    assert line.status == "passed" and line.steps == 2
    (where,) = (tmp_path / "run" / "tb-reverse").glob("*/snapshot/files/where.txt")
    assert where.read_text().strip() == "/app"  # Terminal-Bench's working directory, the image's WORKDIR


@pytest.mark.parametrize("agent", AGENTS)
def test_cli_agent_solves_every_step_of_a_multi_step_task(
    agent: str, tmp_path: Path, request: pytest.FixtureRequest, debian_test_image: str, bundles_root: Path
) -> None:
    case = CASES[agent]
    server = request.getfixturevalue(case.server_fixture)
    task = _task(tmp_path / "tasks", FIXTURES / "harbor-steps" / "line-counter", debian_test_image)
    for script in ("steps/create/solution/solve.sh", "steps/configure/solution/solve.sh", "solution/solve.sh"):
        case.script(server, _heredoc(task / script))
    result = _run(case, tmp_path, server, bundles_root, task)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = _lines(tmp_path / "run")
    assert [(line.checkpoint, line.status) for line in lines] == [
        ("create", "passed"), ("configure", "passed"), ("document", "passed")
    ]
    assert len(server.model_requests) == 6  # two calls a step, in the same container and the same bundle
    # the CLI's session goes on from step to step (--keep-context): each later step resumes the one before
    for step in ("configure", "document"):
        launch = json.loads(next((tmp_path / "run" / "line-counter" / step / "agent").glob("*_launch.json")).read_text())
        resumed = {key: value for key, value in launch.items() if key in RESUMED_FIELDS}
        assert len(resumed) == 1 and all(resumed.values()), (step, launch)


SERVERS = {
    "fake_anthropic_server": "agentrig.testing.fake_anthropic:FakeAnthropicServer",
    "fake_openai_server": "agentrig.testing.fake_openai:FakeOpenAIServer",
    "fake_gemini_server": "agentrig.testing.fake_gemini:FakeGeminiServer",
}


@pytest.mark.parametrize("agent", AGENTS)
def test_cli_agent_solves_a_compose_task_in_its_main_service(
    agent: str, tmp_path: Path, node_test_image: str, bundles_root: Path, docker_engine: Any
) -> None:
    """The agent runs in the project's ``main`` container, on the project's network (where ``kv`` is), and
    reaches its model on the host's own address (a fake server bound there, not on loopback)."""
    from agentrig.specs import import_object
    from agentrig.testing.fake_server import host_address

    case = CASES[agent]
    server = import_object(SERVERS[case.server_fixture])()
    server.bind_host = host_address()
    task = _task(tmp_path / "tasks", FIXTURES / "harbor-compose" / "kv-store", node_test_image)
    store = (
        "exec 3<>/dev/tcp/kv/6380; echo 'SET answer 42' >&3; read -r ok <&3; "
        "echo 'GET answer' >&3; read -r v <&3; echo \"$v\" > answer.txt"
    )
    case.script(server, _encoded(store))  # Gemini CLI's shell tool rewrites nested quotes
    with server:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "GEMINI_", "AGENTRIG_"))}
        env.update({case.key_env: API_KEY, "AGENTRIG_BUNDLES_DIR": str(bundles_root)})
        result = subprocess.run(
            [str(Path(sys.executable).with_name("agentrig")), "run", str(task), "--agent", case.agent, "--model", case.model,
             "--runtime", "docker", "-c", f"base_url={server.base_url}", "--output", str(tmp_path / "run"), *TIME_LIMIT],
            env=env, capture_output=True, text=True, timeout=1800, cwd=tmp_path,
        )
    assert result.returncode == 0, result.stdout + result.stderr
    (line,) = _lines(tmp_path / "run")
    assert line.status == "passed" and line.steps == 2
    assert (tmp_path / "run" / "kv-store" / "task" / "snapshot" / "files" / "answer.txt").read_text() == "42\n"


def _native_problem(root: Path) -> Path:
    """A problem of agentrig's own format (no image of its own): make done.txt."""
    problem = root / "touch"
    (problem / "tests").mkdir(parents=True)
    (problem / "task.md").write_text("Create done.txt containing ok.\n")
    (problem / "tests" / "check.sh").write_text('test "$(cat done.txt)" = ok\n')
    (problem / "problem.yaml").write_text("name: touch\ncheckpoints:\n  - name: make\n    prompt: task.md\n    test: sh tests/check.sh\n")
    return problem


@pytest.mark.claude_cli
@pytest.mark.xdist_group("cli_bundles_claude_code")
def test_a_native_problem_runs_the_bundle_in_the_given_image_and_a_bundle_of_one_s_own(
    tmp_path: Path, fake_anthropic_server: Any, debian_test_image: str, bundles_root: Path
) -> None:
    """``--image`` with ``-c docker_template=``: the bundle in that image (no agent image built); ``-c bundle=PATH``:
    one's own bundle (here a hard-linked copy of the prepared one) bound in its place."""
    case = CASES["claude_code"]
    server = fake_anthropic_server
    problem = _native_problem(tmp_path / "problems")
    case.script(server, "echo ok > done.txt")
    result = _run(case, tmp_path, server, bundles_root, problem, "--image", debian_test_image, "-c", "docker_template=")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "building agent image" not in result.stderr
    (line,) = _lines(tmp_path / "run")
    assert line.status == "passed"
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["identity"]["runtime"]["agent_image"] is None
    (mount,) = run["identity"]["runtime"]["options"]["mounts"]
    assert mount["target"] == "/opt/agentrig/agents/claude_code-2.1.330" and mount["read_only"] is True

    prepared = next((bundles_root / "claude_code-2.1.330").glob("linux-x64-*"))
    own = tmp_path / "my-bundle"
    shutil.copytree(prepared, own, symlinks=True, copy_function=os.link)
    shutil.rmtree(tmp_path / "run")
    case.script(server, "echo ok > done.txt")
    result = _run(case, tmp_path, server, bundles_root, problem, "--image", debian_test_image, "-c", f"bundle={own}")
    assert result.returncode == 0, result.stdout + result.stderr
    launch = json.loads(next((tmp_path / "run" / "touch" / "make" / "agent").glob("*_launch.json")).read_text())
    assert launch["argv"][0] == "/opt/agentrig/agents/claude_code-own/bin/claude"
    missing = _run(case, tmp_path, server, bundles_root, problem, "--image", debian_test_image, "-c", f"bundle={tmp_path}",
                   "--output", str(tmp_path / "other"))
    assert missing.returncode == 2 and missing.stderr.strip().splitlines() == [
        f"agentrig: error: -c bundle={tmp_path}: no executable bin/claude in it"
    ]


@pytest.mark.claude_cli
@pytest.mark.xdist_group("cli_bundles_claude_code")
def test_a_time_limit_kills_the_cli_s_process_tree_in_the_task_s_container(
    tmp_path: Path, fake_anthropic_server: Any, debian_test_image: str, bundles_root: Path
) -> None:
    from agentrig.testing.cli_agents import live_processes

    case = CASES["claude_code"]
    tag = f"agentrig-sleeper-{os.getpid()}-{tmp_path.name}"
    task = _task(tmp_path / "tasks", FIXTURES / "harbor-tasks" / "greeting", debian_test_image)
    case.script(fake_anthropic_server, f"bash -c 'tail -f /dev/null; echo late > late.txt' {tag}")
    result = _run(case, tmp_path, fake_anthropic_server, bundles_root, task, "-c", "cost_limits.time_limit=40")
    assert result.returncode == 1, result.stdout + result.stderr
    (line,) = _lines(tmp_path / "run")
    assert line.stop_reason == "time_limit"
    assert live_processes(tag) == []  # the CLI and the command it ran, in the container, are gone
    assert not (tmp_path / "run" / "greeting" / "task" / "snapshot" / "files" / "late.txt").exists()
