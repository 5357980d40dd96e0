"""Test kit: ``--retries`` on two problems run side by side (``--jobs 2``, an executor's workers), through ``agentrig run``.

The greeter example twice under other names (checkpoint 2's prompt tagged, so the fake OpenAI server tells the
copies apart), the react agent against the fake server: in each copy's checkpoint 2 the first call is answered
and the next two (the call and the client's one retry) fail with HTTP 500, so that try ends in a model error
having spent one reply's tokens and money; the retry passes. The local executor's test and the Ray executor's
test play it through :func:`check_retries_side_by_side` with their own options, then check what is their own
on the :class:`RetriedRun` it returns.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from agentrig.testing.cli_agents import agentrig_executable, cli_run_env

if TYPE_CHECKING:
    from agentrig.run.records import CheckpointResultLine, RunRecord
    from agentrig.testing.fake_server import FakeModelServer, RecordedRequest

#: The copies' tags: problems ``greeter_a`` and ``greeter_b``.
TAGS = ("a", "b")
#: Words only checkpoint 2's prompt holds.
SECOND = "command line"
#: The key the run is given (not a secret: the fake server takes any).
API_KEY = "sk-test-not-a-secret"


@dataclass(frozen=True)
class RetriedRun:
    """What :func:`check_retries_side_by_side` ran and found."""

    #: The run's directory and the environment ``agentrig`` ran with.
    out: Path
    env: dict[str, str]
    #: The run's ``results.jsonl`` and ``run.json``.
    lines: list[CheckpointResultLine]
    run: RunRecord
    #: What the failed tries (one per copy) cost.
    spent_cost: float


def greeter_script(repo: Path) -> ModuleType:
    """The greeter example's scripted model, ``examples/greeter/record_replay.py`` (``reply``, and ``GREET_1`` and
    ``GREET_2``: ``greet.py`` after each checkpoint)."""
    path = repo / "examples" / "greeter" / "record_replay.py"
    spec = importlib.util.spec_from_file_location("greeter_record_replay_kit", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def greeter_reply(repo: Path) -> Callable[[RecordedRequest], Any]:
    """The greeter example's scripted model (``examples/greeter/record_replay.py``'s ``reply``)."""
    reply: Callable[[RecordedRequest], Any] = greeter_script(repo).reply
    return reply


def greeter_copies(repo: Path, root: Path, tags: Sequence[str] = TAGS) -> list[Path]:
    """The greeter under the names ``greeter_<tag>``, checkpoint 2's prompt ending with ``(copy <tag>)``."""
    made = []
    for tag in tags:
        copy = root / f"greeter_{tag}"
        shutil.copytree(repo / "examples" / "greeter", copy, ignore=shutil.ignore_patterns("record_replay.py", "replay.jsonl"))
        yaml = copy / "problem.yaml"
        yaml.write_text(yaml.read_text().replace("name: greeter", f"name: greeter_{tag}"))
        prompt = copy / "checkpoint_2.md"
        prompt.write_text(prompt.read_text() + f"\n(copy {tag})\n")
        made.append(copy)
    return made


def fail_after_one_call(server: FakeModelServer, repo: Path, tags: Sequence[str] = TAGS) -> dict[str, int]:
    """Serve the greeter; in each copy's checkpoint 2, answer the first call, then fail the next two with HTTP 500
    (the call and the client's one retry). Returns the count of each copy's checkpoint 2 calls, kept up to date."""
    from agentrig.testing.fake_server import Fault

    reply = greeter_reply(repo)
    seen = dict.fromkeys(tags, 0)
    lock = threading.Lock()

    def handler(request: RecordedRequest) -> Any:
        text = str(request.body["messages"])
        tag = next((t for t in tags if SECOND in text and f"(copy {t})" in text), None)
        if tag is not None:
            with lock:
                seen[tag] += 1
                number = seen[tag]
            if number in (2, 3):
                return Fault(status=500)
        return reply(request)

    server.respond_with(handler)
    return seen


def check_retries_side_by_side(
    server: FakeModelServer,
    repo: Path,
    tmp_path: Path,
    *options: str,
    drop_prefixes: Sequence[str] = (),
    env: dict[str, str] | None = None,
    timeout: float = 240,
) -> RetriedRun:
    """Run the two copies with ``options`` (``--retries N`` and how they run side by side), this process's
    environment less ``OPENAI_``, ``ANTHROPIC_``, ``AGENTRIG_`` and ``drop_prefixes`` variables plus ``env``.

    Each copy's checkpoint 2 passes at its second try; its failed try is kept whole in ``tries/1/`` (the
    reason, the model error, its one paid step, its prompt, result, evaluation and trajectory), counted once
    in the line's ``tries_spent``, and in the run's totals: cost, tokens and tries; steps are the counted tries'.
    """
    from agentrig.run.records import CheckpointResultLine, RunRecord

    made = greeter_copies(repo, tmp_path / "problems")
    seen = fail_after_one_call(server, repo)
    out = tmp_path / "run"
    run_env = cli_run_env("OPENAI_", "ANTHROPIC_", *drop_prefixes, OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY=API_KEY,
                          **(env or {}))
    argv = [agentrig_executable(), "run", *map(str, made), "--agent", "react", "--model", "openai/gpt-4o-mini",
            "-c", "model_options.retry.max_retries=1", "-c", "model_options.retry.initial_delay=0",
            "--retry-backoff", "0.2", "--output", str(out), "-q", *options]
    done = subprocess.run(argv, env=run_env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert all(count >= 4 for count in seen.values()), seen  # each copy: one reply, two failures, the retry's calls
    lines = [CheckpointResultLine.model_validate_json(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert sorted((x.problem, x.checkpoint, x.status, x.tries) for x in lines) == [
        (f"greeter_{t}", c, "passed", tries) for t in TAGS for c, tries in (("command_line", 2), ("greet_function", None))
    ]
    spent_cost, spent_tokens = 0.0, 0
    for tag in TAGS:
        cost, tokens = _check_failed_try(out / f"greeter_{tag}" / "command_line", lines)
        spent_cost += cost
        spent_tokens += tokens
    run = RunRecord.model_validate_json((out / "run.json").read_bytes())
    assert run.status == "completed" and run.totals.passed == 4
    own = sum(x.cost or 0.0 for x in lines)
    assert run.totals.cost is not None and abs(run.totals.cost - (own + spent_cost)) < 1e-12
    assert run.totals.tokens.total == sum(x.tokens.total for x in lines) + spent_tokens
    assert run.totals.tries_spent is not None and run.totals.tries_spent.tries == 2
    assert all(run.problems[f"greeter_{t}"].totals.tries_spent is not None for t in TAGS)
    assert run.totals.steps == sum(x.steps for x in lines)  # steps: the counted tries'
    return RetriedRun(out=out, env=run_env, lines=lines, run=run, spent_cost=spent_cost)


def _check_failed_try(checkpoint: Path, lines: list[CheckpointResultLine]) -> tuple[float, int]:
    """Check the failed try kept under ``checkpoint/tries/1`` and its line's count of it; its cost and tokens."""
    from agentrig.run.records import TryRecord

    kept = TryRecord.model_validate_json((checkpoint / "tries" / "1" / "try.json").read_bytes())
    assert kept.reason == "retries" and kept.cause.startswith("model error: ServerError"), kept.cause
    assert kept.result is not None and kept.result.status == "error"
    assert kept.result.steps == 1 and kept.result.cost and kept.result.cost > 0  # the one reply it got was paid for
    for name in ("prompt.txt", "inference_result.json", "evaluation.json", "trajectory.jsonl"):
        assert (checkpoint / "tries" / "1" / name).is_file(), name
    assert "model call failed" in (checkpoint / "tries" / "1" / "trajectory.jsonl").read_text()
    assert not (checkpoint / "tries" / "2").exists()
    problem = checkpoint.parent.name
    line = next(x for x in lines if x.problem == problem and x.checkpoint == checkpoint.name)
    assert line.tries_spent is not None and line.tries_spent.tries == 1
    assert line.tries_spent.cost == kept.result.cost and line.tries_spent.tokens == kept.result.tokens
    return kept.result.cost, kept.result.tokens.total
