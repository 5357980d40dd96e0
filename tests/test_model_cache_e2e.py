"""``agentrig run --cache``, end to end through the CLI: a run, then the same run again answered from the
cache (same verdicts, zero cost, no request to the fake server), with ``--jobs 2`` writing the cache from
two worker processes; the README's example with the real react and miniswe agents, whose requests hold
their run's own workspace path; and the bad cache options. How much time a cached run saves is measured
by ``bench/bench_model_cache.py``, not here."""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "scripted-agent" / "src"))

from agentrig_scripted import testkit

from agentrig.run.records import CheckpointResultLine, RunRecord
from agentrig.testing.fake_openai import FakeOpenAIServer
from agentrig.testing.fake_server import FakeReply, FakeToolCall, FakeUsage, RecordedRequest
from agentrig.testing.greeter_retries import greeter_script

REPO = Path(__file__).resolve().parents[1]


def agentrig(tmp_path: Path, server_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = testkit.cli_env(tmp_path, server_url)
    return subprocess.run([testkit.agentrig_bin(), *args], env=env, capture_output=True, text=True, timeout=240,
                          cwd=tmp_path)


def problems(root: Path) -> list[Path]:
    made = []
    for name, word in (("greet_a", "hello"), ("greet_b", "goodbye")):
        made.append(testkit.make_problem(root, name, [
            (f"Write {word}.", [testkit.write_file("out.txt", f"{word}\n"), testkit.bash("cat out.txt")],
             f"grep -qx {word} out.txt"),
            ("Shout it.", [testkit.write_file("out.txt", f"{word.upper()}\n")], f"grep -qx {word} out.txt"),
        ]))
    return made


def verdicts(out: Path) -> list[tuple[str, str, str]]:
    lines = [CheckpointResultLine.model_validate_json(x) for x in (out / "results.jsonl").read_text().splitlines()]
    return sorted((x.problem, x.checkpoint, x.status) for x in lines)


def llm_calls(out: Path) -> list[dict[str, object]]:
    steps = [json.loads(line) for path in sorted(out.glob("*/checkpoint_*/trajectory.jsonl"))
             for line in path.read_text().splitlines()]
    return [s for s in steps if s.get("kind") == "llm_call"]


def test_a_cached_rerun_gives_the_same_verdicts_at_no_cost_and_no_requests(tmp_path: Path) -> None:
    made = problems(tmp_path / "problems")
    cache = tmp_path / "model-calls"
    with FakeOpenAIServer() as server:
        server.respond_with(testkit.solver())
        run = ["run", *map(str, made), "--agent", "scripted", "--model", "openai/gpt-4o-mini", "--jobs", "2"]

        first = agentrig(tmp_path, server.base_url, *run, "--output", str(tmp_path / "first"), f"--cache={cache}")
        assert first.returncode == 1, first.stderr  # checkpoint 2 fails by design: a verdict (exit 1), not an error
        calls = len(server.model_requests)
        assert calls == 8

        second = agentrig(tmp_path, server.base_url, *run, "--output", str(tmp_path / "second"), "--cache", str(cache))
        assert second.returncode == 1, second.stderr  # the same verdicts
        assert len(server.model_requests) == calls  # every call answered from the cache

    expected = [("greet_a", "checkpoint_1", "passed"), ("greet_a", "checkpoint_2", "failed"),
                ("greet_b", "checkpoint_1", "passed"), ("greet_b", "checkpoint_2", "failed")]
    assert verdicts(tmp_path / "first") == verdicts(tmp_path / "second") == expected
    before = RunRecord.model_validate_json((tmp_path / "first" / "run.json").read_bytes()).totals
    after = RunRecord.model_validate_json((tmp_path / "second" / "run.json").read_bytes()).totals
    assert before.cost and before.cost > 0 and after.cost == 0.0 and after.tokens == before.tokens
    assert [c["cache_hit"] for c in llm_calls(tmp_path / "first")] == [False] * 8
    assert [c["cache_hit"] for c in llm_calls(tmp_path / "second")] == [True] * 8
    assert all(c["cost"] == 0.0 for c in llm_calls(tmp_path / "second"))
    assert [c["usage"] for c in llm_calls(tmp_path / "second")] == [c["usage"] for c in llm_calls(tmp_path / "first")]
    assert b"sk-test-not-a-secret" not in b"".join(p.read_bytes() for p in cache.rglob("*.json"))


def test_bad_cache_options_are_one_line(tmp_path: Path) -> None:
    [made, _] = problems(tmp_path / "problems")
    base = ["run", str(made), "--agent", "scripted", "--model", "openai/gpt-4o-mini", "--output", str(tmp_path / "o")]
    (tmp_path / "file").write_text("x")
    for extra, says in (
        (["--cache", "--cache-ttl", "soon"], "--cache-ttl soon: a positive duration"),
        (["--cache", "--no-cache"], "--no-cache turns the model-call cache off"),
        (["--cache-policy", "read"], "--cache-policy and --cache-ttl need --cache"),
        ([f"--cache={tmp_path / 'file'}"], "not a directory"),
    ):
        proc = agentrig(tmp_path, "http://127.0.0.1:9", *base, *extra)
        assert proc.returncode == 2 and says in proc.stderr, proc.stderr
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert not (tmp_path / "o").exists()


def entries(cache: Path) -> int:
    return len(list(cache.glob("??/*.json")))


def failing_second_checkpoint(server: FakeOpenAIServer, failing: list[bool]) -> None:
    """The solver, answering checkpoint 2's requests with HTTP 400 while ``failing[0]`` (an error, no verdict)."""
    from agentrig.testing.fake_server import Fault

    solve = testkit.solver()

    def handle(request):
        if failing[0] and "Shout it." in json.dumps(request.body.get("messages", [])):
            return Fault(status=400, message="bad request on purpose")
        return solve(request)

    server.respond_with(handle)


def test_resume_goes_on_with_the_cache_run_json_records(tmp_path: Path) -> None:
    [made, _] = problems(tmp_path / "problems")
    cache = tmp_path / "model-calls"
    out = tmp_path / "run"
    run = ["run", str(made), "--agent", "scripted", "--model", "openai/gpt-4o-mini", "--output", str(out)]
    failing = [True]
    with FakeOpenAIServer() as server:
        failing_second_checkpoint(server, failing)
        first = agentrig(tmp_path, server.base_url, *run, f"--cache={cache}", "--cache-ttl", "2h")
        assert first.returncode == 3, first.stderr  # checkpoint 2: a model error
        recorded = json.loads((out / "run.json").read_text())["cache"]
        assert recorded == {"directory": str(cache.resolve()), "policy": "readwrite", "ttl": 7200.0}
        assert entries(cache) == 2  # checkpoint 1's two calls

        failing[0] = False
        resumed = agentrig(tmp_path, server.base_url, *run, "--resume", "--retry-errors")
        assert resumed.returncode == 1, resumed.stderr  # checkpoint 2 fails its test by design: a verdict
        assert f"resuming with the run's model-call cache {cache.resolve()} (readwrite, entries good for 7200 s)" in resumed.stderr
    assert entries(cache) == 4  # the resumed checkpoint's calls went through the cache too
    assert json.loads((out / "run.json").read_text())["cache"] == recorded
    assert verdicts(out) == [("greet_a", "checkpoint_1", "passed"), ("greet_a", "checkpoint_2", "failed")]


def test_resume_with_no_cache_turns_the_recorded_cache_off(tmp_path: Path) -> None:
    [made, _] = problems(tmp_path / "problems")
    cache = tmp_path / "model-calls"
    out = tmp_path / "run"
    run = ["run", str(made), "--agent", "scripted", "--model", "openai/gpt-4o-mini", "--output", str(out)]
    failing = [True]
    with FakeOpenAIServer() as server:
        failing_second_checkpoint(server, failing)
        assert agentrig(tmp_path, server.base_url, *run, "--cache", str(cache)).returncode == 3
        failing[0] = False
        resumed = agentrig(tmp_path, server.base_url, *run, "--resume", "--retry-errors", "--no-cache")
        assert resumed.returncode == 1, resumed.stderr
    assert "model-call cache" not in resumed.stderr
    assert entries(cache) == 2
    assert "cache" not in json.loads((out / "run.json").read_text())  # the latest start used none


def test_a_recorded_cache_that_is_no_directory_is_one_line(tmp_path: Path) -> None:
    [made, _] = problems(tmp_path / "problems")
    out = tmp_path / "run"
    run = ["run", str(made), "--agent", "scripted", "--model", "openai/gpt-4o-mini", "--output", str(out)]
    failing = [True]
    with FakeOpenAIServer() as server:
        failing_second_checkpoint(server, failing)
        assert agentrig(tmp_path, server.base_url, *run, f"--cache={tmp_path / 'c'}").returncode == 3
        record = json.loads((out / "run.json").read_text())
        record["cache"]["directory"] = "relative/../../etc"  # a run directory read back is untrusted
        (out / "run.json").write_text(json.dumps(record))
        resumed = agentrig(tmp_path, server.base_url, *run, "--resume", "--retry-errors")
    assert resumed.returncode == 2, resumed.stderr
    assert resumed.stderr.count("\n") == 1 and "Traceback" not in resumed.stderr
    assert "cache.directory 'relative/../../etc' is not an absolute path; give --cache DIR or --no-cache" in resumed.stderr


def test_the_command_that_finishes_a_run_gives_its_cache_again() -> None:
    import argparse
    import shlex

    from agentrig.cli import build_parser
    from agentrig.cli.cache import cache_from_args
    from agentrig.cli.run import _resume_command
    from agentrig.llm.cache import ModelCallCache
    from agentrig.run.plan import RunPlan

    parser = build_parser()
    for given in (["--cache=/tmp/x y"], ["--cache=/tmp/c", "--cache-policy", "read", "--cache-ttl", "90m"], []):
        args = parser.parse_args(["run", "p", "--agent", "scripted", *given])
        cache = cache_from_args(args)
        plan = RunPlan(agent_config={"type": "scripted"}, model_cache=cache)
        command = _resume_command(args, plan, Path("/tmp/out"))
        again = parser.parse_args(shlex.split(command)[1:])
        assert isinstance(again, argparse.Namespace) and again.resume
        assert cache_from_args(again) == cache
        if cache is not None:
            assert isinstance(cache, ModelCallCache) and f"--cache={cache.directory}" in shlex.split(command)


@functools.cache
def greeter_code() -> tuple[str, str]:
    """``greet.py`` after checkpoint 1 and after checkpoint 2, as the greeter example's recorded model writes it."""
    script = greeter_script(REPO)
    return script.GREET_1, script.GREET_2


def task_and_turn(request: RecordedRequest) -> tuple[bool, int]:
    """Whether the request is checkpoint 2's (the command line), and how many replies that checkpoint had."""
    messages = request.body["messages"]
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    task = json.dumps(messages[last_user]["content"])
    return "command line" in task, sum(1 for m in messages[last_user:] if m["role"] == "assistant")


def react_greeter(request: RecordedRequest) -> FakeReply:
    """The greeter solved by the react agent, every file named by its absolute path in the workspace the
    system prompt names: a cached reply names the workspace of the run that first received it."""
    first, second = greeter_code()
    workdir = re.search(r"workspace directory \((/[^)]+)\)", request.body["messages"][0]["content"])
    assert workdir is not None, "react's system prompt names its workspace"
    greet = f"{workdir[1]}/greet.py"
    command_line, turn = task_and_turn(request)
    script = [
        ("write_file", {"path": greet, "content": second}), ("bash", {"command": f"python3 {greet} Ada Grace"}),
        ("submit", {"answer": "greet.py prints greetings."}),
    ] if command_line else [
        ("read_file", {"path": greet}), ("write_file", {"path": greet, "content": first}),
        ("bash", {"command": f"cd {workdir[1]} && python3 -c 'from greet import greet; print(greet(\"Ada\"))'"}),
        ("submit", {"answer": "Implemented greet(name)."}),
    ]
    tool, arguments = script[min(turn, len(script) - 1)]
    return FakeReply(text=f"Working in {workdir[1]}.", tool_calls=[FakeToolCall(name=tool, arguments=arguments)],
                     usage=FakeUsage(input=900 + 300 * turn, output=60))


def miniswe_greeter(request: RecordedRequest) -> FakeReply:
    """The greeter solved by mini-swe-agent (``mini.yaml``: one ``bash`` tool): ``pwd`` first, then every file named
    by the absolute path that printed, so a cached reply names the workspace of the run that first received it."""
    first, second = greeter_code()
    command_line, turn = task_and_turn(request)
    printed = re.search(r"(/\S+/workspace)\b", json.dumps(request.body["messages"][2:]))
    workdir = printed[1] if printed else ""
    code = second if command_line else first
    script = [
        "pwd", f"cat > {workdir}/greet.py <<'EOF'\n{code}EOF",
        f"python3 {workdir}/greet.py Ada Grace" if command_line else f"cd {workdir} && python3 -c 'import greet'",
        "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",
    ]
    command = script[min(turn, len(script) - 1)]
    return FakeReply(text="Next step.", tool_calls=[FakeToolCall(name="bash", arguments={"command": command})],
                     usage=FakeUsage(input=900 + 300 * turn, output=60))


SOLVERS: dict[str, Callable[[RecordedRequest], FakeReply]] = {"react": react_greeter, "miniswe": miniswe_greeter}


def steps(out: Path, kind: str) -> list[dict[str, Any]]:
    return [s for path in sorted(out.glob("greeter/*/trajectory.jsonl"))
            for s in map(json.loads, path.read_text().splitlines()) if s.get("kind") == kind]


@pytest.mark.parametrize("agent", ["react", "miniswe"])
def test_the_readme_cache_example_hits_with_a_real_agent(tmp_path: Path, agent: str) -> None:
    """The README's example, as a user runs it (``--cache``: the user's cache directory): the second run's
    requests hold another workspace path, and it still makes no request, pays nothing and passes as the first."""
    env = {k: v for k, v in testkit.cli_env(tmp_path, "").items() if k != "PYTHONPATH"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "user-cache")
    with FakeOpenAIServer() as server:
        server.respond_with(SOLVERS[agent])
        env["OPENAI_BASE_URL"] = server.base_url
        counts = []
        for name in ("first", "second"):
            before = len(server.model_requests)
            proc = subprocess.run(
                [testkit.agentrig_bin(), "run", "examples/greeter", "--agent", agent, "--model", "openai/gpt-4o-mini",
                 "--cache", "--output", str(tmp_path / name)],
                env=env, capture_output=True, text=True, timeout=240, cwd=REPO,
            )
            assert proc.returncode == 0, proc.stdout + proc.stderr
            counts.append(len(server.model_requests) - before)
    first, second = tmp_path / "first", tmp_path / "second"
    assert counts[0] >= 7 and counts[1] == 0
    assert verdicts(first) == verdicts(second) == [("greeter", "command_line", "passed"), ("greeter", "greet_function", "passed")]
    before = RunRecord.model_validate_json((first / "run.json").read_bytes()).totals
    after = RunRecord.model_validate_json((second / "run.json").read_bytes()).totals
    assert before.cost and before.cost > 0 and after.cost == 0.0 and after.tokens == before.tokens
    assert [c["cache_hit"] for c in steps(first, "llm_call")] == [False] * counts[0]
    assert [c["cache_hit"] for c in steps(second, "llm_call")] == [True] * counts[0]
    assert list((tmp_path / "user-cache" / "agentrig" / "model-calls").glob("??/*.json"))
    # each reply that named the first run's workspace names the second's when it comes from the cache
    calls = json.dumps([s["arguments"] for s in steps(second, "tool_use")])
    assert str(second / ".workspaces") in calls and str(first) not in calls
    assert str(first) not in "".join(p.read_text() for p in second.glob("greeter/*/trajectory.jsonl"))
