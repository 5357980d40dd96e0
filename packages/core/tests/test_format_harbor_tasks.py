"""Harbor and Terminal-Bench tasks in-process: loading, the task's container, the verifier's
verdicts (reward, partial reward, broken verifiers) and the oracle, on the real Docker engine."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentrig.formats.harbor.task import HarborTask
from agentrig.formats.interface import SolutionError
from agentrig.formats.resolve import detect_format, get_format, load_problem
from agentrig.problem import ProblemError
from agentrig.run.evaluation import evaluate_checkpoint
from agentrig.run.sessions import open_session
from agentrig.runtime.errors import RuntimeSetupError

FIXTURES = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "harbor-tasks"


def copy_task(tmp_path: Path, name: str) -> Path:
    target = tmp_path / "tasks" / name
    shutil.copytree(FIXTURES / name, target, symlinks=True)
    return target


# -- loading (no engine) -------------------------------------------------------------


def test_fixtures_load_as_one_checkpoint_problems() -> None:
    word = load_problem(FIXTURES / "word-count")
    assert isinstance(word, HarborTask) and word.format == "harbor" and word.kind == "harbor"
    assert [c.name for c in word.checkpoints] == ["task"] and word.checkpoints[0].timeout == 60.0
    assert word.prompt_text(word.checkpoints[0]).startswith("The file `words.txt`")
    assert (word.dockerfile, word.build_context, word.solution_script) == ("environment/Dockerfile", "environment", "solution/solve.sh")
    tb = load_problem(FIXTURES / "tb-reverse")
    assert isinstance(tb, HarborTask) and tb.format == "terminal-bench" and tb.kind == "terminal-bench"
    assert tb.prompt_text(tb.checkpoints[0]).startswith("Write `reversed.txt`")
    assert tb.config.agent.timeout_sec == 120.0 and tb.config.verifier.timeout_sec == 60.0
    assert detect_format(FIXTURES / "greeting").name == "harbor"
    fmt = get_format("harbor")
    assert fmt.has_solution(word, word.checkpoints[0]) and fmt.count_tests(word, word.checkpoints[0]) == 1


def test_malformed_tasks_name_file_and_field(tmp_path: Path) -> None:
    task = copy_task(tmp_path, "word-count")
    (task / "task.toml").write_text("[environment]\nmemory_mb = \"lots\"\n")
    with pytest.raises(ProblemError, match=r"task\.toml: field `environment\.memory_mb`: Input should be a valid integer"):
        load_problem(task)
    (task / "task.toml").write_text("[verifier]\ntimeout_sec = 5\n")
    (task / "tests" / "test.sh").unlink()
    with pytest.raises(ProblemError, match=r"tests/test\.sh: missing \(the verifier"):
        load_problem(task)
    (task / "environment" / "Dockerfile").unlink()
    with pytest.raises(ProblemError, match=r"environment/Dockerfile: missing \(the task's image; or set \[environment\] docker_image"):
        load_problem(task)
    tb = copy_task(tmp_path, "tb-reverse")
    (tb / "task.yaml").write_text("instruction: x\nmax_agent_timeout_sec: forever\n")
    with pytest.raises(ProblemError, match=r"task\.yaml: field `max_agent_timeout_sec`"):
        load_problem(tb)


def test_a_harbor_task_needs_the_docker_runtime(tmp_path: Path) -> None:
    task = load_problem(FIXTURES / "word-count")
    with pytest.raises(RuntimeSetupError, match=r"task 'word-count' \(harbor format\) runs in a container .*: pass --runtime docker"):
        open_session("local", None, None, task.name, tmp_path, {}, problem=task)


# -- in the container ----------------------------------------------------------------------


@pytest.fixture
def session_of(tmp_path: Path, docker_engine: Any) -> Iterator[Any]:
    sessions: list[Any] = []

    def open_for(task_dir: Path) -> tuple[HarborTask, Any]:
        task = load_problem(task_dir)
        assert isinstance(task, HarborTask)
        session = open_session("docker", None, None, task.name, tmp_path / "sessions", {}, problem=task)
        sessions.append(session)
        return task, session

    yield open_for
    for session in sessions:
        session.close()


def _evaluate(task: HarborTask, session: Any, report: Path | None = None) -> Any:
    return evaluate_checkpoint(session.runtime, session.workspace.path, task, task.checkpoints[0], report_dir=report)


@pytest.mark.docker
def test_task_runs_in_its_image_workdir_and_the_oracle_passes(session_of: Any, tmp_path: Path) -> None:
    task, session = session_of(FIXTURES / "word-count")
    runtime = session.runtime
    assert runtime.workdir == "/app" and runtime.config.image.startswith("agentrig-task/word-count:")
    assert (runtime.config.cpus, runtime.config.mem_limit, runtime.config.network) == (1.0, "512m", "none")
    assert sorted(p.name for p in session.workspace.path.iterdir()) == [".image-marker", "notes.md", "words.txt"]
    assert session.seed is not None and (session.seed / "words.txt").is_file()
    assert runtime.exec("test -e /tests || echo hidden").stdout == "hidden\n"  # tests only after the agent
    get_format("harbor").apply_solution(task, task.checkpoints[0], runtime, session.workspace.path)
    assert (session.workspace.path / "count.txt").read_text() == "4\n"
    assert runtime.exec("cat /logs/agent/oracle.txt; ls /solution").stdout == "solve.sh\n"
    record = _evaluate(task, session, tmp_path / "evaluation")
    assert (record.passed, record.score, record.infrastructure_failure, record.policy) == (True, 1.0, False, "all")
    assert record.command == "bash /tests/test.sh" and record.exit_code == 0 and record.report == "verifier/reward.txt"
    assert record.output_tail == "count.txt: ok\nsorted.txt: ok\n"
    assert (tmp_path / "evaluation" / "verifier" / "reward.txt").read_text() == "1\n"
    assert (tmp_path / "evaluation" / "test-stdout.txt").read_text() == "count.txt: ok\nsorted.txt: ok\n"


@pytest.mark.docker
def test_partial_and_no_work(session_of: Any) -> None:
    task, session = session_of(FIXTURES / "word-count")
    record = _evaluate(task, session)
    assert (record.passed, record.score, record.infrastructure_failure, record.error) == (False, 0.0, False, None)
    (session.workspace.path / "count.txt").write_text("4\n")
    record = _evaluate(task, session)  # evaluating again starts from an empty /logs/verifier
    assert (record.passed, record.score) == (False, 0.5)


@pytest.mark.docker
def test_reward_json_and_a_prebuilt_image(session_of: Any) -> None:
    task, session = session_of(FIXTURES / "greeting")
    assert session.runtime.config.image == "agentrig-test/node:bookworm"
    get_format("harbor").apply_solution(task, task.checkpoints[0], session.runtime, session.workspace.path)
    record = _evaluate(task, session)
    assert (record.passed, record.score, record.report) == (True, 1.0, "verifier/reward.json")


@pytest.mark.docker
def test_terminal_bench_task_per_test_results(session_of: Any) -> None:
    task, session = session_of(FIXTURES / "tb-reverse")
    assert session.runtime.workdir == "/app" and (session.workspace.path / "lines.txt").is_file()
    record = _evaluate(task, session)
    assert (record.passed, record.score, record.exit_code) == (False, 0.0, 1)
    assert [(t.id, t.outcome, t.message) for t in record.tests] == [
        ("tests/test_outputs.py::test_file_exists", "failed", "reversed.txt missing"),
        ("tests/test_outputs.py::test_content", "failed", "wrong order"),
    ]
    get_format("terminal-bench").apply_solution(task, task.checkpoints[0], session.runtime, session.workspace.path)
    record = _evaluate(task, session)
    assert (record.passed, record.score, record.counts.total, record.counts.passed) == (True, 1.0, 2, 2)


@pytest.mark.docker
@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("echo high > /logs/verifier/reward.txt\n", r"/logs/verifier/reward\.txt holds 'high', not a number"),
        (
            "echo '{\"score\": \"x\"}' > /logs/verifier/reward.json\n",
            r"/logs/verifier/reward\.json: metric 'score' is a string \(\"x\"\), not a number",
        ),
        (
            "echo about to crash; exit 3\n",
            r"wrote no reward: neither /logs/verifier/reward\.txt nor .*\(bash /tests/test\.sh: exit code 3\)",
        ),
    ],
)
def test_broken_verifier_is_an_infrastructure_failure(session_of: Any, tmp_path: Path, script: str, expected: str) -> None:
    task_dir = copy_task(tmp_path, "word-count")
    (task_dir / "tests" / "test.sh").write_text(script)
    task, session = session_of(task_dir)
    record = _evaluate(task, session)
    assert record.infrastructure_failure and record.passed is False and record.score is None
    assert record.error is not None and "\n" not in record.error
    import re

    assert re.search(expected, record.error), record.error


@pytest.mark.docker
def test_verifier_timeout_and_env(session_of: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task_dir = copy_task(tmp_path, "word-count")
    text = (task_dir / "task.toml").read_text().replace('env = { EXPECTED_WORDS = "4" }', 'env = { EXPECTED_WORDS = "${HOST_WORDS:-9}" }')
    (task_dir / "task.toml").write_text(text.replace("timeout_sec = 60.0", "timeout_sec = 2.0"))
    monkeypatch.setenv("HOST_WORDS", "4")
    task, session = session_of(task_dir)
    (session.workspace.path / "count.txt").write_text("4\n")
    assert _evaluate(task, session).score == 0.5  # ${HOST_WORDS} reached the verifier
    (task_dir / "tests" / "test.sh").write_text("sleep 30\necho 1 > /logs/verifier/reward.txt\n")
    record = _evaluate(task, session)
    assert record.timed_out and record.passed is False and not record.infrastructure_failure
    assert "timed out after 2 s" in (record.error or "")


@pytest.mark.docker
def test_missing_and_failing_solutions(session_of: Any, tmp_path: Path) -> None:
    task_dir = copy_task(tmp_path, "word-count")
    shutil.rmtree(task_dir / "solution")
    task, session = session_of(task_dir)
    fmt = get_format("harbor")
    assert not fmt.has_solution(task, task.checkpoints[0])
    with pytest.raises(SolutionError, match=r"solution/solve\.sh: missing: task 'word-count' has no reference solution"):
        fmt.apply_solution(task, task.checkpoints[0], session.runtime, session.workspace.path)
    broken = copy_task(tmp_path / "b", "word-count")
    (broken / "solution" / "solve.sh").write_text("echo cannot solve it; exit 4\n")
    task, session = session_of(broken)
    with pytest.raises(SolutionError, match=r"solution/solve\.sh of task 'word-count' exited with 4: cannot solve it"):
        fmt.apply_solution(task, task.checkpoints[0], session.runtime, session.workspace.path)
