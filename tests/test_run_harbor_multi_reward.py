"""A Harbor task whose verifier writes several metrics (the cookbook's ``multi-reward`` recipe:
``{"correctness": c, "performance": p}`` in ``/logs/verifier/reward.json``, no ``reward`` key) through the
CLI on the real Docker engine: the oracle, a do-nothing agent and a correct but slow one; every metric
recorded, the headline and the verdict by the documented rule under two pass policies; show and compare."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "scripted-agent" / "src"))

from agentrig_scripted import testkit

from agentrig.evaluation.records import EvaluationRecord
from agentrig.run.records import CheckpointResultLine

pytestmark = pytest.mark.docker

TASK = Path(__file__).parent / "fixtures" / "harbor-tasks" / "multi-reward"
MODEL = ["--model", "openai/gpt-4o-mini"]
SLOW = (  # correct, but it compares every record with every other one: too much work for the performance suite
    "def deduplicate(records):\n"
    "    kept = [r for r in records\n"
    "            if all(o['email'].lower() != r['email'].lower() or o['id'] <= r['id'] for o in records)]\n"
    "    return sorted(kept, key=lambda r: r['id'])\n"
)


def _task(root: Path, actions: str | None) -> Path:
    """A copy of the task; ``actions``: the scripted model's tool calls appended to its instruction (none: it does nothing)."""
    target = root / "multi-reward"
    shutil.copytree(TASK, target)
    if actions is not None:
        with open(target / "instruction.md", "a") as handle:
            handle.write(f"\n{actions}\n")
    return target


def _agentrig(tmp_path: Path, server, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([testkit.agentrig_bin(), *args], capture_output=True, text=True, timeout=600,
                          env=testkit.cli_env(tmp_path, server.base_url), cwd=tmp_path)


def _result(out: Path) -> tuple[CheckpointResultLine, EvaluationRecord]:
    (line,) = [CheckpointResultLine.model_validate_json(x) for x in (out / "results.jsonl").read_text().splitlines()]
    evaluation = EvaluationRecord.model_validate_json((out / "multi-reward" / "task" / "evaluation.json").read_bytes())
    return line, evaluation


def test_multi_reward_task_oracle_nothing_and_slow(tmp_path: Path, fake_openai_server, node_test_image: str) -> None:
    fake_openai_server.respond_with(testkit.solver())

    # the oracle: both suites pass, both metrics 1, the mean 1: passed
    oracle = tmp_path / "oracle"
    proc = _agentrig(tmp_path, fake_openai_server, "run", str(_task(tmp_path / "a", None)), "--agent", "oracle",
                     "--runtime", "docker", "--output", str(oracle))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    line, evaluation = _result(oracle)
    assert (evaluation.metrics, evaluation.score, evaluation.passed, evaluation.infrastructure_failure) == (
        {"correctness": 1.0, "performance": 1.0}, 1.0, True, False)
    assert (evaluation.report, evaluation.error, evaluation.policy) == ("verifier/reward.json", None, "all")
    assert json.loads((oracle / "multi-reward/task/evaluation/verifier/reward.json").read_text()) == {"correctness": 1, "performance": 1}
    assert (line.status, line.score, line.metrics) == ("passed", 1.0, {"correctness": 1.0, "performance": 1.0})

    # a do-nothing agent (the model answers without a tool call): a verdict of 0 on both, not a broken verifier
    nothing = tmp_path / "nothing"
    proc = _agentrig(tmp_path, fake_openai_server, "run", str(_task(tmp_path / "b", None)), "--agent", "scripted", *MODEL,
                     "--runtime", "docker", "--output", str(nothing))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr  # finished, failed
    line, evaluation = _result(nothing)
    assert (evaluation.metrics, evaluation.score, evaluation.passed, evaluation.infrastructure_failure) == (
        {"correctness": 0.0, "performance": 0.0}, 0.0, False, False)
    assert (line.status, line.metrics) == ("failed", {"correctness": 0.0, "performance": 0.0})

    # correct but slow: correctness 1, performance 0; the score is their mean, 0.5: failed under `all` (not every
    # metric at 1), passed under `score>=0.5`
    slow = tmp_path / "slow"
    actions = testkit.actions_line(testkit.write_file("deduplicate.py", SLOW))
    proc = _agentrig(tmp_path, fake_openai_server, "run", str(_task(tmp_path / "c", actions)), "--agent", "scripted", *MODEL,
                     "--runtime", "docker", "--output", str(slow))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr  # failed under `all`
    line, evaluation = _result(slow)
    assert (evaluation.metrics, evaluation.score, evaluation.passed) == ({"correctness": 1.0, "performance": 0.0}, 0.5, False)
    assert "FAILED performance: more than 500000 reads of the records' fields" in evaluation.output_tail
    lenient = _agentrig(tmp_path, fake_openai_server, "evaluate", str(slow), "multi-reward", "--policy", "score>=0.5")
    assert lenient.returncode == 0, lenient.stderr
    assert lenient.stdout.splitlines()[0] == (
        "multi-reward/task: failed -> passed (multi-reward/task/evaluations/1.json; was evaluation.json)"
    )
    again = EvaluationRecord.model_validate_json((slow / "multi-reward/task/evaluations/1.json").read_bytes())
    assert (again.metrics, again.score, again.passed, again.policy) == ({"correctness": 1.0, "performance": 0.0}, 0.5, True, "score>=0.5")

    # show: the metrics beside the score, the headline named on the checkpoint
    shown = _agentrig(tmp_path, fake_openai_server, "show", str(slow))
    assert shown.returncode == 0, shown.stderr
    assert list(shown.stdout.splitlines()[2].split())[:9] == [
        "multi-reward", "task", "failed", "0.50", "correctness", "1", "·", "performance", "0"]
    detail = _agentrig(tmp_path, fake_openai_server, "show", str(slow), "multi-reward/task")
    assert "    metrics: correctness 1 · performance 0 (score = mean of the metrics, each clamped to [0, 1])" in detail.stdout

    # compare: each metric's mean per run
    compared = _agentrig(tmp_path, fake_openai_server, "compare", str(oracle), str(nothing), str(slow), "--json")
    assert compared.returncode == 0, compared.stderr
    data = json.loads(compared.stdout)
    assert data["metrics"] == ["correctness", "performance"]
    assert [run["metric_means"]["means"] for run in data["runs"]] == [
        {"correctness": 1.0, "performance": 1.0}, {"correctness": 0.0, "performance": 0.0}, {"correctness": 1.0, "performance": 0.0}]
    assert [(c["kind"], c["run"]) for c in data["changes"]] == [("regression", 2), ("regression", 3)]
