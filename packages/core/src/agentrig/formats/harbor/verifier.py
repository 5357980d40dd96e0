"""Harbor's verifier and oracle, run in the task's container after (or as) the agent.

Verifier, as Harbor runs it: ``/logs/verifier`` emptied and made writable,
the task's ``tests/`` uploaded to ``/tests`` (only now: the agent never saw
them), ``bash /tests/test.sh`` run from the working directory with
``[verifier] env`` and ``timeout_sec``; the reward file it wrote is the score
(its exit code is not): every metric of it is recorded and the headline is
the score, as :mod:`agentrig.formats.harbor.reward` reads it. No reward file,
or one that is not numbers, means the verifier broke: an infrastructure
failure, not a failed test. Everything
under ``/logs/verifier`` and the script's output are saved as the raw report.

A step of a multi-step task gets the task's ``tests/`` and its own ``steps/<name>/tests/``
merged into ``/tests`` (its files win), its ``test.sh`` (else the task's) run with the task's
``[verifier] env`` and its ``[steps.verifier] env`` over it, within its own ``timeout_sec``.

Terminal-Bench's ``run-tests.sh`` is uploaded with ``tests/`` and run with
``TEST_DIR=/tests``; its exit code is the verdict (as Harbor's own
conversion of those tasks scores it) and the ``PASSED``/``FAILED`` lines of
a pytest short summary, when it prints one, are the per-test results.

The oracle uploads ``solution/`` to ``/solution`` and runs ``solve.sh`` from
the working directory with ``[solution] env``, its output in
``/logs/agent/oracle.txt``; a step's oracle uses ``steps/<name>/solution/`` when the step has one.
"""

from __future__ import annotations

import logging
import re
import shlex
import time
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentrig.formats.harbor.config import SolutionCommand, TaskConfigError, resolve_env
from agentrig.formats.harbor.reward import RewardError, parse_reward
from agentrig.formats.harbor.task import HarborTask
from agentrig.readback import ReadbackLimits
from agentrig.runtime.interface import Invocation
from agentrig.scratch import temporary_directory

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from docker.models.containers import Container

    from agentrig.evaluation.policy import PassPolicy
    from agentrig.evaluation.records import EvaluationRecord, TestOutcome, TestResult
    from agentrig.problem import Checkpoint
    from agentrig.runtime.interface import Runtime, RuntimeResult

TESTS_DIR = "/tests"
SOLUTION_DIR = "/solution"
VERIFIER_LOGS = "/logs/verifier"
AGENT_LOGS = "/logs/agent"
TEST_OUTPUT = "test-stdout.txt"
_SUMMARY_LINE = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\s+(\S+)(?:\s+-\s+(.*))?$")
_OUTCOMES: dict[str, TestOutcome] = {
    "PASSED": "passed", "XPASS": "passed", "FAILED": "failed", "ERROR": "error", "SKIPPED": "skipped", "XFAIL": "skipped",
}


class HarborRuntimeError(RuntimeError):
    """The task cannot run in this runtime (Harbor tasks need a container); one line."""


def container_of(runtime: Runtime, task: HarborTask) -> Container:
    """The docker container the runtime runs commands in; raises :class:`HarborRuntimeError` otherwise."""
    container = getattr(runtime, "container", None)
    if container is None or not hasattr(container, "put_archive"):
        raise HarborRuntimeError(
            f"task '{task.name}' ({task.kind} format) runs in a container built from its Dockerfile: pass --runtime docker"
        )
    return container


def _wipe(runtime: Runtime, container: Container, *paths: str) -> None:
    """Remove ``paths`` in the container as root (files a previous run left, another user's)."""
    container.exec_run(["rm", "-rf", *paths], user="0:0")


def parse_pytest_summary(output: str) -> list[TestResult]:
    """The tests of a pytest ``short test summary info`` section (``PASSED tests/x.py::test_a``, ...)."""
    from agentrig.evaluation.records import TestResult

    results: dict[str, TestResult] = {}
    in_summary = False
    for line in output.splitlines():
        stripped = line.strip()
        if "short test summary info" in stripped:
            in_summary = True
            continue
        if not in_summary:
            continue
        if stripped.startswith("=") and "short test summary info" not in stripped:
            in_summary = False
            continue
        match = _SUMMARY_LINE.match(stripped)
        if match is not None:
            outcome = _OUTCOMES[match.group(1)]
            message = (match.group(3) or "").strip()[:500] or None
            results[match.group(2)] = TestResult(id=match.group(2), outcome=outcome, message=message)
    return list(results.values())


#: The verifier's files the verdict is read from (kept in memory; the others go straight to disk).
REWARD_FILES = ("reward.json", "reward.txt")
#: The per-test report Harbor's verifiers write (``pytest --ctrf /logs/verifier/ctrf.json``).
CTRF_FILE = "ctrf.json"


def _save_report(report_dir: Path | None, files: dict[str, bytes], output: str) -> str:
    """Write the verifier's output beside evaluation.json (when there is a place for it; its files
    are written there as they are read); the name of the report the verdict comes from (the reward
    file, else the output)."""
    if report_dir is not None:
        from agentrig.atomic import write_bytes_atomic

        report_dir.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(report_dir / TEST_OUTPUT, output.encode("utf-8", errors="replace"))
    for name in REWARD_FILES:  # the one parse_reward reads
        if name in files:
            return f"verifier/{name}"
    return TEST_OUTPUT


def run_verifier(
    task: HarborTask,
    runtime: Runtime,
    *,
    report_dir: Path | None,
    policy: PassPolicy | None,
    timeout: float | None = None,
    allow_env: Collection[str] = (),
    checkpoint: Checkpoint | None = None,
    readback: ReadbackLimits | None = None,
) -> EvaluationRecord:
    """Verify the agent's work on ``task`` (on ``checkpoint``'s step of a multi-step task) in
    ``runtime``'s container; never raises for a broken verifier.

    ``allow_env`` names the credentials (``OPENAI_API_KEY``, ...) the task's ``[verifier] env``
    may take from the host (``-c verifier.allow_env=[...]``); others are never expanded.
    ``readback``: how much of ``/logs/verifier`` is copied back (``-c readback.*``); what is left
    out is said in the record's ``left_out``.
    """
    from agentrig.evaluation.engine import attach_tests, finish, tail
    from agentrig.evaluation.policy import deciding_policy
    from agentrig.evaluation.records import EvaluationRecord, utcnow

    command = f"bash {TESTS_DIR}/{Path(task.test_script).name}"
    started = utcnow()
    clock = time.monotonic()
    record = EvaluationRecord(command=command, started=started)
    decide = deciding_policy(policy)
    try:
        container, env = _upload_tests(task, runtime, allow_env, checkpoint)
        limit = timeout or task.verifier_timeout(checkpoint)
        result, output = _run_tests(runtime, command, env, limit, record)
        files = _collect_report(container, report_dir, output, record, readback)
        record.elapsed = time.monotonic() - clock
        if task.kind == "terminal-bench":
            tests, score = _terminal_bench_verdict(task, command, result, output)
            return finish(record, tests, score, decide)
        finish(record, [], _reward_score(files, command, result, output, limit, record), decide)
        return attach_tests(record, _ctrf_tests(files))  # the reward decided; the tests say which passed
    except _Broken as exc:
        record.error = str(exc)
        record.infrastructure_failure = True
        record.passed = False
        record.output_tail = tail(exc.output)
        record.elapsed = time.monotonic() - clock
        return finish(record, [], None, decide)


class _Broken(Exception):
    """The verifier broke (an infrastructure failure, not a failed test); ``output``: what it printed."""

    def __init__(self, message: str, output: str = "") -> None:
        super().__init__(message)
        self.output = output


def _upload_tests(
    task: HarborTask, runtime: Runtime, allow_env: Collection[str], checkpoint: Checkpoint | None
) -> tuple[Any, dict[str, str]]:
    """``/logs/verifier`` emptied, the tests (the step's merged over the task's) uploaded to ``/tests``;
    the container and the verifier's environment."""
    from agentrig.formats.harbor.container import make_directories, put_directory

    try:
        container = container_of(runtime, task)
        env = resolve_env(task.verifier_env(checkpoint), f"{task.path / 'task.toml'} [verifier] env", allow=allow_env)
        if task.kind == "terminal-bench":
            env = {"TEST_DIR": TESTS_DIR, **env}
        _wipe(runtime, container, VERIFIER_LOGS, TESTS_DIR)
        make_directories(container, VERIFIER_LOGS, AGENT_LOGS)
        with temporary_directory("agentrig-harbor-tests-") as staging:
            bundle = Path(staging)
            for rel in task.test_sources(checkpoint):
                source = task.path / rel
                if source.is_dir():
                    _copy_tree(source, bundle)
                elif source.is_file():
                    (bundle / source.name).write_bytes(source.read_bytes())
                    (bundle / source.name).chmod(source.stat().st_mode & 0o777)
            put_directory(container, bundle, TESTS_DIR, user=getattr(runtime, "user", None))
    except (HarborRuntimeError, TaskConfigError) as exc:
        raise _Broken(str(exc)) from None
    except Exception as exc:
        raise _Broken(
            f"uploading the tests to {TESTS_DIR} failed: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
        ) from None
    return container, env


def _run_tests(
    runtime: Runtime, command: str, env: dict[str, str], limit: float, record: EvaluationRecord
) -> tuple[RuntimeResult, str]:
    """The test script within ``limit`` seconds, its exit code and output's tail recorded; its result and output."""
    from agentrig.evaluation.engine import tail

    try:
        result = runtime.exec(Invocation(command, env=env, timeout=limit))
    except Exception as exc:
        raise _Broken(f"running {command} failed: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}") from None
    output = result.stdout + (("\n" if result.stdout and not result.stdout.endswith("\n") else "") + result.stderr if result.stderr else "")
    record.exit_code = result.exit_code
    record.timed_out = result.timed_out
    record.test_elapsed = result.elapsed
    record.output_tail = tail(output)
    return result, output


def _collect_report(
    container: Any, report_dir: Path | None, output: str, record: EvaluationRecord, readback: ReadbackLimits | None
) -> dict[str, bytes]:
    """What the verifier wrote under ``/logs/verifier`` (within the read-back limits), saved with its
    output as the raw report; the reward files."""
    from agentrig.formats.harbor.container import read_directory
    from agentrig.readback import ReadbackBudget

    budget = ReadbackBudget(readback, f"the verifier's {VERIFIER_LOGS}")
    try:
        if report_dir is not None:
            report_dir.mkdir(parents=True, exist_ok=True)
        dest = report_dir / "verifier" if report_dir is not None else None
        files = read_directory(container, VERIFIER_LOGS, budget=budget, dest=dest, keep=(*REWARD_FILES, CTRF_FILE))
        record.left_out = budget.left_out()
    except Exception as exc:
        raise _Broken(f"reading {VERIFIER_LOGS} failed: {type(exc).__name__}: {exc}", output) from None
    try:
        record.report = _save_report(report_dir, files, output)
    except OSError as exc:
        raise _Broken(f"saving the verifier's report failed: {exc}", output) from None
    return files


def _ctrf_tests(files: dict[str, bytes]) -> list[TestResult]:
    """The tests of the verifier's CTRF report, when it wrote one (a broken one is logged and left out:
    the reward is the verdict)."""
    from agentrig.evaluation.parsers import ReportError, parse_ctrf

    data = files.get(CTRF_FILE)
    if data is None:
        return []
    try:
        return parse_ctrf(data, f"{VERIFIER_LOGS}/{CTRF_FILE}")
    except ReportError as exc:
        log.warning("%s; its tests are not recorded", exc)
        return []


def _terminal_bench_verdict(task: HarborTask, command: str, result: RuntimeResult, output: str) -> tuple[list[TestResult], float | None]:
    """A Terminal-Bench task's tests (its pytest summary) and score: the exit code decides, unless the
    summary lists tests (they then decide); a timeout scores 0."""
    tests = parse_pytest_summary(output) if task.config.metadata.get("parser_name", "pytest") == "pytest" else []
    if result.timed_out:
        return tests, 0.0
    if result.exit_code is None:
        raise _Broken(f"{command} was killed before it reported an exit code", output)
    score = 1.0 if result.exit_code == 0 else 0.0
    if tests and result.exit_code == 0 and any(t.outcome in ("failed", "error") for t in tests):
        score = 0.0  # a runner that swallows pytest's exit code
    return tests, score if not tests else None


def _reward_score(
    files: dict[str, bytes], command: str, result: RuntimeResult, output: str, limit: float, record: EvaluationRecord
) -> float:
    """The reward file's headline, its metrics recorded; a verifier whose time was up before it wrote one
    scores 0, any other without a readable one broke."""
    try:
        reward = parse_reward(files, VERIFIER_LOGS)
    except RewardError as exc:
        if result.timed_out:
            record.error = f"{command} timed out after {limit:g} s (task.toml [verifier] timeout_sec) before writing a reward"
            return 0.0
        why = f"exit code {result.exit_code}" if result.exit_code not in (0, None) else "it exited 0"
        raise _Broken(f"{exc} ({command}: {why})", output) from None
    record.metrics = reward.rewards
    return reward.score


def _copy_tree(source: Path, target: Path) -> None:
    import shutil

    shutil.copytree(source, target, dirs_exist_ok=True, symlinks=True)


def solution_command(task: HarborTask, checkpoint: Checkpoint | None = None) -> str:
    """The shell command that runs the reference solution once ``solution/`` is in ``/solution``."""
    solution = task.solution_for(checkpoint)
    if solution is None:
        raise FileNotFoundError(task.name)
    script = f"{SOLUTION_DIR}/{Path(solution[1]).name}"
    if solution[1].endswith(".yaml"):
        script = f"{SOLUTION_DIR}/solve.sh"
    return f"chmod +x {shlex.quote(script)} && {shlex.quote(script)} > {AGENT_LOGS}/oracle.txt 2>&1"


def solution_bundle(task: HarborTask, staging: Path, checkpoint: Checkpoint | None = None) -> Path:
    """The directory uploaded to ``/solution``: ``solution/`` (a step's own ``steps/<name>/solution/``),
    or the Terminal-Bench script (a ``solution.yaml``'s commands written out as ``solve.sh``)."""
    from agentrig.boundary import BoundaryError, read_problem_text
    from agentrig.yaml_loader import YamlError, load_yaml

    solution = task.solution_for(checkpoint)
    if solution is not None and task.step(checkpoint) is not None:
        return task.path / solution[0]
    if task.solution_dir is not None:
        return task.path / task.solution_dir
    assert task.solution_script is not None
    source = task.path / task.solution_script
    if source.suffix == ".yaml":
        try:
            document = load_yaml(read_problem_text(source, "solution file"), str(source))
        except (YamlError, BoundaryError) as exc:
            raise ValueError(str(exc)) from None
        try:
            steps = [SolutionCommand.model_validate(item) for item in document or []]
        except Exception as exc:
            raise ValueError(f"{source}: expected a list of {{command: ...}} entries ({' '.join(str(exc).split())[:200]})") from None
        (staging / "solve.sh").write_text("#!/bin/bash\n" + "".join(step.command.rstrip("\n") + "\n" for step in steps))
        (staging / "solve.sh").chmod(0o755)
    else:
        (staging / source.name).write_bytes(source.read_bytes())
        (staging / source.name).chmod(0o755)
    return staging


def run_solution(task: HarborTask, runtime: Runtime, checkpoint: Checkpoint | None = None) -> tuple[int | None, str]:
    """Upload and run the reference solution (of ``checkpoint``'s step); returns its exit code and
    output (``/logs/agent/oracle.txt``)."""
    from agentrig.formats.harbor.container import make_directories, put_directory, read_directory

    container = container_of(runtime, task)
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    env.update(resolve_env(task.config.solution.env, f"{task.path / 'task.toml'} [solution] env"))
    _wipe(runtime, container, SOLUTION_DIR)
    make_directories(container, AGENT_LOGS)
    with temporary_directory("agentrig-harbor-solution-") as staging:
        put_directory(container, solution_bundle(task, Path(staging), checkpoint), SOLUTION_DIR, user=getattr(runtime, "user", None))
    timeout = task.agent_timeout(checkpoint)
    result = runtime.exec(Invocation(solution_command(task, checkpoint), env=env, timeout=timeout))
    log = read_directory(container, f"{AGENT_LOGS}/oracle.txt").get("oracle.txt", b"").decode("utf-8", errors="replace")
    return (None if result.timed_out else result.exit_code), log or (result.stdout + result.stderr)
