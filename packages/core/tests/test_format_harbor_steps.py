"""Multi-step Harbor tasks (``[[steps]]``) without Docker: loading into checkpoints, what each step's
verifier and oracle get, the healthcheck's polling on a real local runtime, ``min_reward`` and the
task's reward by ``multi_step_reward_strategy``; and a broken task beside good ones."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentrig.evaluation.records import EvaluationRecord
from agentrig.formats.harbor.config import HealthcheckSection
from agentrig.formats.harbor.steps import (
    HealthcheckFailed,
    min_reward_failure,
    run_healthcheck,
    stop_after_step,
    task_score,
)
from agentrig.formats.harbor.task import HarborTask
from agentrig.formats.resolve import find_problems, load_found, load_problem
from agentrig.problem import ProblemError
from agentrig.run.problems import load_runnable_problems
from agentrig.run.records import CheckpointResultLine
from agentrig.runtime.local import LocalRuntime

FIXTURE = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "harbor-steps" / "line-counter"


@pytest.fixture
def task_dir(tmp_path: Path) -> Path:
    target = tmp_path / "line-counter"
    shutil.copytree(FIXTURE, target, symlinks=True)
    return target


def _load(path: Path) -> HarborTask:
    task = load_problem(path)
    assert isinstance(task, HarborTask)
    return task


def test_steps_become_checkpoints_in_order_with_their_own_inputs(task_dir: Path) -> None:
    task = _load(task_dir)
    assert [c.name for c in task.checkpoints] == ["create", "configure", "document"]
    assert task.multi_step and task.format == "harbor"
    assert task.prompt_text(task.checkpoints[1]).startswith("A file `limits.conf` has been placed")
    create, configure, document = task.checkpoints
    # the task's tests/ first, the step's own over it (Harbor's Verifier._resolve_tests)
    assert task.test_sources(configure) == ["tests", "steps/configure/tests"]
    # [verifier] env with the step's [steps.verifier] env over it
    assert task.verifier_env(configure) == {"COUNTER": "/app/count.sh", "EXPECTED_LIMITED": "2"}
    assert task.verifier_env(create) == {"COUNTER": "/app/count.sh"}
    assert [task.verifier_timeout(c) for c in task.checkpoints] == [30.0, 30.0, 30.0]
    # a step's own agent timeout, else the task's [agent] timeout_sec
    assert [task.agent_timeout(c) for c in task.checkpoints] == [60.0, 90.0, 120.0]
    # a step without solution/ uses the task's solution/solve.sh (Harbor's oracle)
    assert task.solution_for(create) == ("steps/create/solution", "steps/create/solution/solve.sh")
    assert task.solution_for(document) == ("solution", "solution/solve.sh")
    assert task.config.steps is not None and task.config.steps[1].min_reward == {"reward": 0.5}
    assert task.config.steps[1].healthcheck is not None and task.config.steps[1].healthcheck.retries == 3


def test_a_step_verifier_timeout_defaults_to_harbors_600_and_a_shared_test_script_serves_a_step(task_dir: Path) -> None:
    text = (task_dir / "task.toml").read_text()
    without_timeout = text.replace('[steps.verifier]\ntimeout_sec = 30.0\n\n[steps.verifier.env]', "[steps.verifier.env]")
    (task_dir / "task.toml").write_text(without_timeout)
    (task_dir / "steps" / "document" / "tests" / "test.sh").unlink()
    (task_dir / "tests" / "test.sh").write_text("#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n")
    task = _load(task_dir)
    assert [task.verifier_timeout(c) for c in task.checkpoints] == [30.0, 600.0, 30.0]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: shutil.rmtree(d / "steps" / "configure"), "steps/configure: missing (the directory of the step"),
        (
            lambda d: (d / "steps" / "document" / "instruction.md").unlink(),
            "steps/document/instruction.md: missing (the instruction of step 'document')",
        ),
        (lambda d: (d / "steps" / "create" / "tests" / "test.sh").unlink(),
         "steps/create/tests/test.sh: missing (the verifier of step 'create'; or a shared"),
        (lambda d: (d / "steps" / "create" / "leak").symlink_to("/etc"), "steps/create/leak' is a symbolic link to '/etc'"),
    ],
)
def test_what_a_multi_step_task_must_hold_is_one_line(task_dir: Path, change, message: str) -> None:
    change(task_dir)
    with pytest.raises(ProblemError) as info:
        load_problem(task_dir)
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('name = "document"', 'name = "Create"', "step names must be unique (also ignoring case): 'Create' repeats"),
        ('name = "document"', 'name = "a/b"', "field `steps.2.name`: Value error, invalid step name 'a/b'"),
        ('min_reward = 1.0', 'min_reward = "high"', "field `steps.0.min_reward"),
        ('retries = 3', 'retries = -1', "field `steps.1.healthcheck.retries`"),
        ('schema_version = "1.1"', 'schema_version = "1.1"\nmulti_step_reward_strategy = "max"', "field `multi_step_reward_strategy`"),
    ],
)
def test_bad_steps_configuration_is_one_line_naming_the_field(task_dir: Path, old: str, new: str, message: str) -> None:
    text = (task_dir / "task.toml").read_text()
    assert old in text
    (task_dir / "task.toml").write_text(text.replace(old, new, 1))
    with pytest.raises(ProblemError) as info:
        load_problem(task_dir)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_step_names_that_are_not_checkpoint_names_are_made_so_and_may_not_collide(task_dir: Path) -> None:
    text = (task_dir / "task.toml").read_text()
    (task_dir / "steps" / "document").rename(task_dir / "steps" / "write docs")
    (task_dir / "task.toml").write_text(text.replace('name = "document"', 'name = "write docs"'))
    task = _load(task_dir)
    assert [c.name for c in task.checkpoints] == ["create", "configure", "write-docs"]
    assert task.step_names["write-docs"] == "write docs"
    assert task.prompt_text(task.checkpoints[2]).startswith("Write `/app/README.md`")
    # a step called write-docs beside it: two steps, one checkpoint name
    shutil.copytree(task_dir / "steps" / "configure", task_dir / "steps" / "write-docs")
    text = (task_dir / "task.toml").read_text()
    (task_dir / "task.toml").write_text(text.replace('name = "configure"', 'name = "write-docs"'))
    with pytest.raises(ProblemError, match="its checkpoint name 'write-docs' is the name of step 'write-docs' too"):
        load_problem(task_dir)


def test_min_reward_gates_as_harbor_does() -> None:
    assert min_reward_failure({"reward": 1.0}, 1.0) is None
    assert min_reward_failure({"reward": 0.5}, 1.0) == "reward=0.5 below min_reward 1"
    assert min_reward_failure({"reward": 0.5}, {"reward": 0.5}) is None
    # a table gates every metric it names; a missing one counts as minus infinity
    assert min_reward_failure({"correctness": 1.0}, {"correctness": 0.5, "speed": 0.1}) == "speed=missing below min_reward 0.1"
    assert min_reward_failure(None, 0.0) == "reward=missing below min_reward 0"


def _evaluation(report_dir: Path, reward: str | None, **fields: object) -> EvaluationRecord:
    if reward is not None:
        (report_dir / "verifier").mkdir(parents=True, exist_ok=True)
        (report_dir / "verifier" / "reward.txt").write_text(reward)
    score = float(reward) if reward is not None else None
    defaults: dict[str, object] = {"command": "bash /tests/test.sh", "score": score, "report": "verifier/reward.txt" if reward else None}
    return EvaluationRecord(**{**defaults, **fields})


def test_stop_after_a_step_below_min_reward_or_without_a_reward(task_dir: Path, tmp_path: Path) -> None:
    task = _load(task_dir)
    create, configure, document = task.checkpoints
    report = tmp_path / "report"
    assert stop_after_step(task, create, _evaluation(report, "1"), report) is None
    stop = stop_after_step(task, create, _evaluation(report, "0.5"), report)
    assert stop is not None and (stop.reason, stop.message) == (
        "min_reward", "step 'create': reward=0.5 below min_reward 1: the later steps are not run"
    )
    assert stop_after_step(task, configure, _evaluation(report, "0.5"), report) is None  # 0.5 meets { reward = 0.5 }
    broken = EvaluationRecord(command="bash /tests/test.sh", infrastructure_failure=True, error="the test script wrote no reward")
    stop = stop_after_step(task, configure, broken, report)
    assert stop is not None and stop.reason == "no_reward" and "the test script wrote no reward" in stop.message
    assert stop_after_step(task, document, broken, report) is None  # nothing after the last step


def _line(checkpoint: str, index: int, status: str, score: float | None) -> CheckpointResultLine:
    return CheckpointResultLine(problem="line-counter", checkpoint=checkpoint, index=index, status=status, score=score)


def test_task_reward_by_multi_step_reward_strategy(task_dir: Path) -> None:
    task = _load(task_dir)
    lines = [_line("create", 0, "passed", 1.0), _line("configure", 1, "failed", 0.5), _line("document", 2, "error", None)]
    score = task_score(task, lines)
    # mean (the default): over the steps that have a reward; the one whose verifier broke is left out
    assert score is not None and (score.score, score.rule) == (0.75, "mean of the rewards of 2 of 3 steps")
    skipped = [_line("create", 0, "failed", 0.0), _line("configure", 1, "skipped", None), _line("document", 2, "skipped", None)]
    assert task_score(task, skipped).score == 0.0
    text = (task_dir / "task.toml").read_text()
    (task_dir / "task.toml").write_text(
        text.replace('schema_version = "1.1"', 'schema_version = "1.1"\nmulti_step_reward_strategy = "final"')
    )
    final = _load(task_dir)
    assert task_score(final, lines) is None  # the final step run has no reward
    score = task_score(final, [*lines[:2], _line("document", 2, "skipped", None)])
    assert score is not None and (score.score, score.rule) == (0.5, "the reward of the final step run, 'configure'")


def test_healthcheck_polls_with_docker_semantics_on_a_real_runtime(tmp_path: Path) -> None:
    runtime = LocalRuntime(tmp_path)
    try:
        tries = tmp_path / "tries"
        # passes at its third try: two failures are fewer than three retries
        third = f'echo x >> {tries}; [ "$(wc -l < {tries})" -ge 3 ]'
        run_healthcheck(runtime, HealthcheckSection(command=third, interval_sec=0.05, retries=3))
        assert len(tries.read_text().splitlines()) == 3
        tries.unlink()
        with pytest.raises(HealthcheckFailed) as info:
            run_healthcheck(runtime, HealthcheckSection(command=f"echo x >> {tries}; exit 1", interval_sec=0.05, retries=2))
        assert str(info.value) == f"healthcheck failed after 2 consecutive retries: echo x >> {tries}; exit 1"
        assert len(tries.read_text().splitlines()) == 2
        tries.unlink()
        # failures in the start period do not count: more tries than the 2 retries
        with pytest.raises(HealthcheckFailed):
            run_healthcheck(runtime, HealthcheckSection(
                command=f"echo x >> {tries}; exit 1", interval_sec=0.05, retries=2, start_period_sec=0.6, start_interval_sec=0.1,
            ))
        assert len(tries.read_text().splitlines()) >= 2 + 3
        # a try that outlives its timeout is a failure
        tries.unlink()
        with pytest.raises(HealthcheckFailed):
            run_healthcheck(runtime, HealthcheckSection(command=f"echo x >> {tries}; sleep 5", timeout_sec=0.3, interval_sec=0, retries=1))
        assert len(tries.read_text().splitlines()) == 1
    finally:
        runtime.cleanup()


def _dataset(root: Path) -> Path:
    dataset = root / "tasks"
    shutil.copytree(FIXTURE, dataset / "line-counter", symlinks=True)
    shutil.copytree(FIXTURE, dataset / "broken-steps", symlinks=True)
    (dataset / "broken-steps" / "steps" / "configure" / "instruction.md").unlink()
    return dataset


def test_a_task_that_cannot_be_loaded_is_set_apart_with_its_reason(tmp_path: Path) -> None:
    dataset = _dataset(tmp_path)
    found = find_problems(dataset)
    problems, unloadable = load_found(found)
    assert [p.name for p in problems] == ["line-counter"]
    assert [(u.location.relative, u.requested) for u in unloadable] == [("broken-steps", False)]
    assert unloadable[0].error == (
        f"{dataset / 'broken-steps' / 'steps' / 'configure' / 'instruction.md'}: missing (the instruction of step 'configure')"
    )
    problems, unloadable = load_runnable_problems([dataset])
    assert [p.name for p in problems] == ["line-counter"] and len(unloadable) == 1
    # asked for by its path, or by its exact name: refused with its reason
    with pytest.raises(ProblemError, match="the instruction of step 'configure'"):
        load_runnable_problems([dataset / "broken-steps"])
    with pytest.raises(ProblemError, match="the instruction of step 'configure'"):
        load_runnable_problems([dataset], include=["broken-steps"])
    # a glob selecting it with others runs the others
    problems, unloadable = load_runnable_problems([dataset], include=["*-*"])
    assert [p.name for p in problems] == ["line-counter"] and len(unloadable) == 1
    shutil.rmtree(dataset / "line-counter")
    with pytest.raises(ProblemError, match="the instruction of step 'configure'"):
        load_runnable_problems([dataset])
