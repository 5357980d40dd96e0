"""Harbor and Terminal-Bench tasks through the CLI on the real Docker engine: a scripted agent
(partial reward, per-test results), pass policies, resume, replay, and bad input."""

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

FIXTURES = Path(__file__).parent / "fixtures" / "harbor-tasks"
MODEL = ["--model", "openai/gpt-4o-mini"]


def _dataset(root: Path, *names: str) -> Path:
    """Copies of the fixture tasks; the scripted model's actions appended to their instructions."""
    actions = {
        # count right, order wrong: one point of two
        "word-count": testkit.actions_line(testkit.write_file("count.txt", "4\n"), testkit.write_file("sorted.txt", "pear\napple\n")),
        "tb-reverse": testkit.actions_line(testkit.bash("tac lines.txt > reversed.txt")),
        "greeting": testkit.actions_line(testkit.write_file("greet.sh", "echo hi\n")),
    }
    for name in names:
        target = root / name
        shutil.copytree(FIXTURES / name, target)
        if name == "tb-reverse":
            text = (target / "task.yaml").read_text()
            text = text.replace("lines.txt in reverse order.", f"lines.txt in reverse order.\n  {actions[name]}")
            (target / "task.yaml").write_text(text)
        else:
            with open(target / "instruction.md", "a") as handle:
                handle.write(f"\n{actions[name]}\n")
    return root


def _agentrig(tmp_path: Path, server, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([testkit.agentrig_bin(), *args], capture_output=True, text=True, timeout=600,
                          env=testkit.cli_env(tmp_path, server.base_url), cwd=tmp_path)


def _lines(out: Path) -> dict[str, CheckpointResultLine]:
    lines = [CheckpointResultLine.model_validate_json(x) for x in (out / "results.jsonl").read_text().splitlines()]
    return {line.problem: line for line in lines}


def _evaluation(out: Path, task: str) -> EvaluationRecord:
    return EvaluationRecord.model_validate_json((out / task / "task" / "evaluation.json").read_bytes())


def test_scripted_agent_on_harbor_and_terminal_bench_tasks(tmp_path: Path, fake_openai_server) -> None:
    fake_openai_server.respond_with(testkit.solver())
    dataset = _dataset(tmp_path / "tasks", "word-count", "tb-reverse")
    out = tmp_path / "run"
    proc = _agentrig(tmp_path, fake_openai_server, "run", str(dataset), "--agent", "scripted", *MODEL,
                     "--runtime", "docker", "--output", str(out))
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = _lines(out)
    assert set(lines) == {"word-count", "tb-reverse"}, proc.stderr

    word = _evaluation(out, "word-count")
    assert (word.passed, word.score, word.policy, word.infrastructure_failure, word.error) == (False, 0.5, "all", False, None)
    assert (word.command, word.exit_code, word.report) == ("bash /tests/test.sh", 0, "verifier/reward.txt")
    assert word.output_tail == "count.txt: ok\nsorted.txt: wrong or missing\n"
    assert (out / "word-count" / "task" / "evaluation" / "verifier" / "reward.txt").read_text() == "0.5\n"
    assert (lines["word-count"].status, lines["word-count"].score) == ("failed", 0.5)
    # the workspace was the image's /app: the snapshot holds it, the diff shows only the agent's files
    files = out / "word-count" / "task" / "snapshot" / "files"
    assert sorted(p.name for p in files.iterdir()) == [".image-marker", "count.txt", "notes.md", "sorted.txt", "words.txt"]
    diff = json.loads((out / "word-count" / "task" / "diff.json").read_text())
    assert [entry["path"] for entry in diff["added"]] == ["count.txt", "sorted.txt"], diff
    assert diff["modified"] == [] and diff["deleted"] == []
    assert not (files / "tests").exists()

    tb = _evaluation(out, "tb-reverse")
    assert (tb.passed, tb.score, tb.exit_code, tb.command) == (True, 1.0, 0, "bash /tests/run-tests.sh")
    assert tb.counts is not None and (tb.counts.total, tb.counts.passed) == (2, 2)
    assert [t.id for t in tb.tests] == ["tests/test_outputs.py::test_file_exists", "tests/test_outputs.py::test_content"]
    assert lines["tb-reverse"].status == "passed"
    assert proc.returncode == 1, proc.stderr  # finished and recorded; word-count failed its verifier

    # resume: nothing to redo
    again = _agentrig(tmp_path, fake_openai_server, "run", str(dataset), "--agent", "scripted", *MODEL,
                      "--runtime", "docker", "--output", str(out), "--resume")
    assert again.returncode == 1, again.stderr  # nothing redone: word-count still failed
    assert len((out / "results.jsonl").read_text().splitlines()) == 2

    # replay: a fresh container from the task's image, the recorded replies, the same verdict
    replay = _agentrig(tmp_path, fake_openai_server, "replay", str(out / "word-count" / "task"))
    assert replay.returncode == 0, replay.stderr
    assert "match" in (replay.stdout + replay.stderr).lower()

    # evaluate: the recorded snapshot in a fresh task container, the verifier again, under another policy
    evaluated = _agentrig(tmp_path, fake_openai_server, "evaluate", str(out), "word-count", "--policy", "score>=0.5")
    assert evaluated.returncode == 0, evaluated.stderr
    assert evaluated.stdout.splitlines() == [
        "word-count/task: failed -> passed (word-count/task/evaluations/1.json; was evaluation.json)",
        "1 checkpoint evaluated again: 1 passed; 1 changed verdict",
    ]
    again = EvaluationRecord.model_validate_json((out / "word-count" / "task" / "evaluations" / "1.json").read_bytes())
    assert (again.passed, again.score, again.policy, again.command) == (True, 0.5, "score>=0.5", "bash /tests/test.sh")
    assert _evaluation(out, "word-count").passed is False  # the recorded evaluation is kept

    # another pass policy decides the same reward differently
    lenient = tmp_path / "lenient"
    proc = _agentrig(tmp_path, fake_openai_server, "run", str(dataset / "word-count"), "--agent", "scripted", *MODEL,
                     "--runtime", "docker", "--output", str(lenient), "--pass-policy", "score>=0.5")
    assert proc.returncode == 0, proc.stderr
    record = _evaluation(lenient, "word-count")
    assert (record.passed, record.score, record.policy) == (True, 0.5, "score>=0.5")


def test_resume_redoes_an_unfinished_task(tmp_path: Path, fake_openai_server) -> None:
    fake_openai_server.respond_with(testkit.solver())
    dataset = _dataset(tmp_path / "tasks", "greeting", "tb-reverse")
    out = tmp_path / "run"
    args = ["run", str(dataset), "--agent", "scripted", *MODEL, "--runtime", "docker", "--output", str(out)]
    assert _agentrig(tmp_path, fake_openai_server, *args).returncode == 1  # greeting fails
    # as if the run had been killed before greeting's result line was written
    kept = [x for x in (out / "results.jsonl").read_text().splitlines() if '"greeting"' not in x]
    (out / "results.jsonl").write_text("\n".join(kept) + "\n")
    before = (out / "tb-reverse" / "task" / "evaluation.json").read_bytes()
    proc = _agentrig(tmp_path, fake_openai_server, *args, "--resume")
    assert proc.returncode == 1, proc.stderr
    lines = _lines(out)
    assert lines["greeting"].status == "failed" and lines["tb-reverse"].status == "passed"
    assert (out / "tb-reverse" / "task" / "evaluation.json").read_bytes() == before  # not redone
    greeting = _evaluation(out, "greeting")
    assert (greeting.score, greeting.report) == (0.0, "verifier/reward.json")
    # the verifier's CTRF report (verifier/ctrf.json) gives the tests; the reward stays the verdict
    assert [(t.id, t.outcome) for t in greeting.tests] == [
        ("test_outputs.py::test_greets_the_world", "failed"), ("test_outputs.py::test_greets_the_name_it_is_given", "failed"),
    ]
    assert greeting.tests[0].message == "AssertionError: greet.sh world printed 'hi'"


def test_bad_input_through_the_cli(tmp_path: Path, fake_openai_server) -> None:
    fake_openai_server.respond_with(testkit.solver())
    dataset = _dataset(tmp_path / "tasks", "word-count")
    task = dataset / "word-count"
    good_toml = (task / "task.toml").read_text()
    (task / "task.toml").write_text(good_toml.replace("cpus = 1", 'cpus = "two"'))
    proc = _agentrig(tmp_path, fake_openai_server, "run", str(task), "--agent", "scripted", *MODEL, "--runtime", "docker",
                     "--output", str(tmp_path / "bad"))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        f"agentrig: error: {task}/task.toml: field `environment.cpus`: Input should be a valid number, "
        "unable to parse string as a number (got 'two')"
    )
    (task / "task.toml").write_text(good_toml)

    # the local runtime cannot run a task built from a Dockerfile: one line naming the option, before anything is made
    out = tmp_path / "local"
    proc = _agentrig(tmp_path, fake_openai_server, "run", str(task), "--agent", "scripted", *MODEL, "--runtime", "local",
                     "--output", str(out))
    assert proc.returncode == 2 and not out.exists()
    assert proc.stderr.strip().splitlines() == [(
        "agentrig: error: harbor problems run in containers of their own images, not on --runtime local: "
        "pass --runtime docker (or leave --runtime out)"
    )]

    # a reward that is not a number: the verifier broke, no verdict on the agent
    (task / "tests" / "test.sh").write_text("#!/bin/bash\necho 'all good' > /logs/verifier/reward.txt\n")
    out = tmp_path / "notanumber"
    proc = _agentrig(tmp_path, fake_openai_server, "run", str(task), "--agent", "scripted", *MODEL, "--runtime", "docker",
                     "--output", str(out))
    assert "Traceback" not in proc.stderr
    record = _evaluation(out, "word-count")
    assert record.infrastructure_failure and record.passed is False and record.score is None
    assert record.error == (
        "/logs/verifier/reward.txt holds 'all good', not a number: the test script must write e.g. 1 or 0.5 "
        "(bash /tests/test.sh: it exited 0)"
    )
    assert _lines(out)["word-count"].status == "error"

    # a test script that crashes before writing a reward
    (task / "tests" / "test.sh").write_text("#!/bin/bash\nset -e\nfalse\necho 1 > /logs/verifier/reward.txt\n")
    out = tmp_path / "crash"
    proc = _agentrig(tmp_path, fake_openai_server, "run", str(task), "--agent", "scripted", *MODEL, "--runtime", "docker",
                     "--output", str(out))
    record = _evaluation(out, "word-count")
    assert record.infrastructure_failure and record.exit_code == 1
    assert record.error is not None and record.error.startswith("the test script wrote no reward")
    assert _lines(out)["word-count"].status == "error"


def test_oracle_solves_every_fixture_task(tmp_path: Path, fake_openai_server) -> None:
    dataset = tmp_path / "tasks"
    shutil.copytree(FIXTURES, dataset)
    out = tmp_path / "run"
    # no --runtime: tasks that bring their own image run in containers, said in one line
    proc = _agentrig(tmp_path, fake_openai_server, "run", str(dataset), "--agent", "oracle",
                     "--output", str(out), "--jobs", "2")
    assert proc.returncode == 0, proc.stderr
    assert "agentrig: harbor and terminal-bench problems run in their own containers: --runtime docker" in proc.stderr.splitlines()
    lines = _lines(out)
    assert {name: (line.status, line.score) for name, line in lines.items()} == {
        "word-count": ("passed", 1.0), "greeting": ("passed", 1.0), "tb-reverse": ("passed", 1.0),
        "multi-reward": ("passed", 1.0),
    }
    assert lines["multi-reward"].metrics == {"correctness": 1.0, "performance": 1.0}
    assert lines["greeting"].metrics == {"reward": 1.0, "checks": 1.0} and lines["word-count"].metrics == {"reward": 1.0}
    assert _evaluation(out, "greeting").report == "verifier/reward.json"
    greeting = _evaluation(out, "greeting")
    assert [t.outcome for t in greeting.tests] == ["passed", "passed"] and greeting.counts is not None
    assert (greeting.counts.passed, greeting.counts.total) == (2, 2)
    assert (out / "greeting" / "task" / "evaluation" / "verifier" / "ctrf.json").is_file()
    assert (out / "word-count" / "task" / "snapshot" / "files" / "count.txt").read_text() == "4\n"
    assert "4 solved" in proc.stdout


def test_agent_timeout_of_the_task_stops_the_agent_and_the_verifier_still_runs(tmp_path: Path, fake_openai_server) -> None:
    fake_openai_server.respond_with(testkit.solver())
    root = tmp_path / "tasks"
    task = root / "greeting"
    shutil.copytree(FIXTURES / "greeting", task)
    (task / "task.toml").write_text((task / "task.toml").read_text().replace("timeout_sec = 60.0", "timeout_sec = 15.0"))
    with open(task / "instruction.md", "a") as handle:
        handle.write("\n" + testkit.actions_line(testkit.bash("echo 'echo \"hello, $1\"' > greet.sh && sleep 120")) + "\n")
    out = tmp_path / "run"
    proc = _agentrig(tmp_path, fake_openai_server, "run", str(task), "--agent", "scripted", *MODEL, "--runtime", "docker",
                     "--output", str(out))
    assert "Traceback" not in proc.stderr, proc.stderr
    inference = json.loads((out / "greeting" / "task" / "inference_result.json").read_text())
    assert inference["stop_reason"] == "time_limit"
    assert _time_limit_message(out).startswith("time_limit of 15 s reached"), "the task's [agent] timeout_sec is the limit"
    # what the agent wrote before the limit is verified as usual
    record = _evaluation(out, "greeting")
    trajectory = (out / "greeting" / "task" / "trajectory.jsonl").read_text()
    assert (record.passed, record.score, record.infrastructure_failure) == (True, 1.0, False), trajectory

    # an agent config's own time_limit wins over the task's
    out = tmp_path / "own-limit"
    proc = _agentrig(tmp_path, fake_openai_server, "run", str(task), "--agent", "scripted", *MODEL, "--runtime", "docker",
                     "-c", "cost_limits.time_limit=25", "--output", str(out))
    inference = json.loads((out / "greeting" / "task" / "inference_result.json").read_text())
    assert inference["stop_reason"] == "time_limit", proc.stderr
    assert _time_limit_message(out).startswith("time_limit of 25 s reached")


def _time_limit_message(out: Path) -> str:
    """The message of the time-limit step that ended the greeting task's agent (which limit it was)."""
    from agentrig.trajectory import ErrorStep, parse_step

    steps = [parse_step(x) for x in (out / "greeting" / "task" / "trajectory.jsonl").read_text().splitlines()]
    assert isinstance(steps[-1], ErrorStep) and steps[-1].error_type == "time_limit", steps[-1]
    return steps[-1].message


def test_an_agent_with_its_own_image_and_no_bundle_is_refused_on_tasks_that_bring_theirs(tmp_path: Path, fake_openai_server) -> None:
    """An agent whose config has a docker_template and whose class has no bundle (the CLI agents have one:
    tests/test_run_cli_bundles.py) cannot run in a task's image: one line, nothing made."""
    config = tmp_path / "agent.yaml"
    config.write_text(json.dumps({"type": "scripted", "version": "1", "docker_template": "FROM {{ base_image }}\n"}))
    out = tmp_path / "run"
    proc = _agentrig(tmp_path, fake_openai_server, "run", str(FIXTURES), "--agent", str(config), *MODEL,
                     "--runtime", "docker", "--output", str(out))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        ("agentrig: error: agent 'scripted' runs in its own image (docker_template), which is not built over the "
        "images harbor, terminal-bench problems bring: pick an agent that has a bundle or runs in any image")
    ]
    assert not out.exists()
