"""``agentrig run PROBLEM --from RUN/PROBLEM/CHECKPOINT``: a fork starts at the next checkpoint in the workspace
another run recorded, optionally with its conversation (``--keep-context``).

The scripted agent (and the react agent) play the actions each prompt names, through the fake OpenAI
server, in this process.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "scripted-agent" / "src"))

from agentrig_scripted import testkit

from agentrig.cli import main
from agentrig.run.layout import RunDirectory
from agentrig.run.records import ProblemRecord, RunRecord

FIRST, SECOND, THIRD = "First part.", "Second part.", "Third part."


@pytest.fixture
def server(plugin_registry, fake_openai_server, monkeypatch):
    from agentrig_scripted import plugin

    plugin_registry.register(plugin, "scripted")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    fake_openai_server.respond_with(testkit.solver())
    return fake_openai_server


def make_steps(root: Path, checkpoints: int = 3, name: str = "steps") -> Path:
    """Three checkpoints, each writing one file; each test needs every file written so far."""
    parts = [
        (FIRST, [testkit.write_file("a.txt", "written by the first run\n")], "grep -qx 'written by the first run' a.txt\n"),
        (SECOND, [testkit.write_file("b.txt", "b\n")], "test -f a.txt && grep -qx b b.txt\n"),
        (THIRD, [testkit.write_file("c.txt", "c\n")], "test -f a.txt && test -f b.txt && grep -qx c c.txt\n"),
    ]
    return testkit.make_problem(root, name, parts[:checkpoints])


def run(problem: Path, out: Path, *extra: str, agent: str = "scripted") -> int:
    return main(["run", str(problem), "--agent", agent, "--model", "openai/gpt-4o-mini", "--output", str(out), "-q", *extra])


def tasks_seen(server: Any) -> list[str]:
    """The last user message of each model request (the task, or a tool result)."""
    out = []
    for request in server.model_requests:
        last = request.body["messages"][-1]
        out.append(last["content"] if isinstance(last.get("content"), str) else json.dumps(last))
    return out


@pytest.fixture
def source(server, tmp_path: Path) -> tuple[Path, Path]:
    """A finished run of ``steps``; the problem and the run directory."""
    problem = make_steps(tmp_path / "problems")
    out = tmp_path / "source"
    assert run(problem, out) == 0
    server.clear()
    server.respond_with(testkit.solver())
    return problem, out


def test_a_fork_runs_only_the_checkpoints_after_the_fork_point_in_the_recorded_workspace(server, source, tmp_path: Path) -> None:
    problem, origin = source
    # the source's workspace file is what the fork must inherit: make it unlike what this run's agent would write
    out = tmp_path / "fork"
    assert run(problem, out, "--from", str(origin / "steps" / "checkpoint_1")) == 0

    lines = RunDirectory(out).results()
    assert [(x.checkpoint, x.status) for x in lines] == [("checkpoint_2", "passed"), ("checkpoint_3", "passed")]
    seen = " ".join(tasks_seen(server))
    assert FIRST not in seen and SECOND in seen and THIRD in seen  # checkpoint_1 was not run again
    assert not (out / "steps" / "checkpoint_1").exists()
    snapshot = out / "steps" / "checkpoint_2" / "snapshot" / "files"
    assert (snapshot / "a.txt").read_text() == "written by the first run\n"
    diff = json.loads((out / "steps" / "checkpoint_2" / "diff.json").read_text())
    assert diff["base"] == "checkpoint_1" and [f["path"] for f in diff["added"]] == ["b.txt"] and not diff["modified"]

    record = RunRecord.model_validate_json((out / "run.json").read_bytes())
    source_record = RunRecord.model_validate_json((origin / "run.json").read_bytes())
    fork = record.identity.forked_from
    assert fork is not None
    assert (fork.run, fork.run_id, fork.problem, fork.checkpoint, fork.keep_context) == (
        str(origin.resolve()), source_record.run_id, "steps", "checkpoint_1", False
    )
    assert record.problems["steps"].checkpoints == ["checkpoint_2", "checkpoint_3"]
    assert (record.totals.checkpoints, record.totals.passed, record.totals.problems_solved) == (2, 2, 1)
    assert ProblemRecord.model_validate_json((out / "steps" / "problem.json").read_bytes()).status == "completed"
    # a run that is no fork records no forked_from at all
    assert "forked_from" not in json.loads((origin / "run.json").read_text())["identity"]


def test_a_forked_run_resumes_with_its_from_and_refuses_without(server, source, tmp_path: Path, capsys) -> None:
    problem, origin = source
    out = tmp_path / "fork"
    where = str(origin / "steps" / "checkpoint_1")
    assert run(problem, out, "--from", where) == 0
    results = out / "results.jsonl"
    results.write_text(results.read_text().splitlines()[0] + "\n")  # killed after checkpoint_2
    capsys.readouterr()

    assert run(problem, out, "--resume") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--from 'none' vs 'source/steps/checkpoint_1'" in err

    server.clear()
    server.respond_with(testkit.solver())
    assert run(problem, out, "--from", where, "--resume") == 0
    assert [(x.checkpoint, x.status) for x in RunDirectory(out).results()] == [("checkpoint_2", "passed"), ("checkpoint_3", "passed")]
    seen = " ".join(tasks_seen(server))
    assert THIRD in seen and SECOND not in seen and FIRST not in seen
    assert (out / "steps" / "checkpoint_3" / "snapshot" / "files" / "a.txt").read_text() == "written by the first run\n"


def _other_checkpoints(tmp_path: Path) -> Path:
    return make_steps(tmp_path / "two", checkpoints=2)


def _other_name(tmp_path: Path) -> Path:
    return make_steps(tmp_path / "renamed", name="other")


@pytest.mark.parametrize(
    ("given", "problem_of", "expected"),
    [
        ("{tmp}/nowhere/steps/checkpoint_1", None, "nowhere is not a directory"),
        ("{origin}/steps/checkpoint_9", None, "has no checkpoint 'checkpoint_9' (it has: checkpoint_1, checkpoint_2, checkpoint_3)"),
        ("{origin}/nope/checkpoint_1", None, "has no problem 'nope' (it has: steps)"),
        ("{origin}/steps/checkpoint_3", None, "'checkpoint_3' is the problem's last checkpoint"),
        ("{origin}/steps/..", None, "checkpoint: '..' is not a valid name"),
        ("{origin}/../checkpoint_1", None, "problem: '..' is not a valid name"),
        ("{origin}/steps", None, "is not a run directory (no run.json): expected RUN/PROBLEM/CHECKPOINT"),
        ("steps", None, "expected RUN/PROBLEM/CHECKPOINT (a run directory"),
        ("{origin}/steps/checkpoint_1", _other_name, "the run's problem is 'steps', not 'other'"),
        ("{origin}/steps/checkpoint_1", _other_checkpoints, "has other checkpoints than the run recorded: only in the run: checkpoint_3"),
    ],
)
def test_bad_from_values_are_one_line_and_exit_2(
    server, source, tmp_path: Path, capsys, given: str, problem_of: Any, expected: str
) -> None:
    problem, origin = source
    if problem_of is not None:
        problem = problem_of(tmp_path)
    capsys.readouterr()
    out = tmp_path / "fork"
    assert run(problem, out, "--from", given.format(tmp=tmp_path, origin=origin)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err, err
    assert not out.exists()  # nothing was written
    assert server.model_requests == []


def test_a_snapshot_leading_outside_its_run_is_refused(server, source, tmp_path: Path, capsys) -> None:
    problem, origin = source
    planted = tmp_path / "planted"
    shutil.copytree(origin, planted, symlinks=True)
    snapshot = planted / "steps" / "checkpoint_1" / "snapshot"
    shutil.rmtree(snapshot)
    snapshot.symlink_to(origin / "steps" / "checkpoint_1" / "snapshot")  # outside the run named
    capsys.readouterr()
    assert run(problem, tmp_path / "fork", "--from", str(planted / "steps" / "checkpoint_1")) == 2
    assert "leads outside" in capsys.readouterr().err

    shutil.rmtree(planted)
    shutil.copytree(origin, planted, symlinks=True)
    manifest = planted / "steps" / "checkpoint_1" / "snapshot" / "manifest.json"
    data = json.loads(manifest.read_text())
    data["files"][0]["path"] = "../../../escaped.txt"
    manifest.write_text(json.dumps(data))
    assert run(problem, tmp_path / "fork", "--from", str(planted / "steps" / "checkpoint_1")) == 2
    err = capsys.readouterr().err
    assert "'../../../escaped.txt' leads outside its directory" in err and err.count("\n") == 1
    assert not (tmp_path / "escaped.txt").exists() and not (tmp_path / "fork").exists()


def test_keep_context_is_refused_for_an_agent_that_cannot_restore_one(server, source, tmp_path: Path, capsys) -> None:
    problem, origin = source
    capsys.readouterr()
    out = tmp_path / "fork"
    assert run(problem, out, "--from", str(origin / "steps" / "checkpoint_1"), "--keep-context") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "agent 'scripted' cannot take up a recorded conversation" in err
    assert not out.exists()


def test_keep_context_with_react_continues_the_recorded_conversation(server, tmp_path: Path) -> None:
    problem = make_steps(tmp_path / "problems")
    origin = tmp_path / "source"
    assert run(problem, origin, agent="react") == 0
    where = str(origin / "steps" / "checkpoint_1")

    def first_request_after(*extra: str) -> list[dict[str, Any]]:
        server.clear()
        server.respond_with(testkit.solver())
        out = tmp_path / f"fork{len(extra)}"
        assert run(problem, out, "--from", where, *extra, agent="react") == 0
        assert [x.checkpoint for x in RunDirectory(out).results()] == ["checkpoint_2", "checkpoint_3"]
        return server.model_requests[0].body["messages"]

    fresh = first_request_after()
    assert FIRST not in json.dumps(fresh) and SECOND in json.dumps(fresh)
    kept = first_request_after("--keep-context")
    recorded = [json.loads(x) for x in (origin / "steps" / "checkpoint_1" / "agent" / "messages.jsonl").read_text().splitlines()]
    # the recorded conversation, as it was at checkpoint_1's end, then checkpoint_2's task
    assert len(kept) == len(recorded) + 1
    assert [m["role"] for m in kept[: len(recorded)]] == [m["role"] for m in recorded]
    assert FIRST in json.dumps(kept[1]) and SECOND in json.dumps(kept[-1])
    record = RunRecord.model_validate_json((tmp_path / "fork1" / "run.json").read_bytes())
    assert record.identity.forked_from is not None and record.identity.forked_from.keep_context


def test_keep_context_with_a_broken_recorded_conversation_is_one_line(server, tmp_path: Path, capsys) -> None:
    problem = make_steps(tmp_path / "problems")
    origin = tmp_path / "source"
    assert run(problem, origin, agent="react") == 0
    messages = origin / "steps" / "checkpoint_1" / "agent" / "messages.jsonl"
    messages.write_text(messages.read_text().splitlines()[0] + "\n{not json\n")
    capsys.readouterr()
    assert run(problem, tmp_path / "fork", "--from", str(origin / "steps" / "checkpoint_1"), "--keep-context", agent="react") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "messages.jsonl line 2: not a recorded message" in err


def test_the_view_says_forked_from_and_links_the_source_when_it_is_in_the_report(server, source, tmp_path: Path) -> None:
    from agentrig.view.render import Report

    problem, origin = source
    out = tmp_path / "fork"
    assert run(problem, out, "--from", str(origin / "steps" / "checkpoint_1")) == 0

    both = Report([origin, out])
    index = both.render("/index.html").body.decode()
    assert index.count("forked from") == 1
    assert '<a href="runs/1/steps/checkpoint_1.html">source/steps/checkpoint_1</a>' in index
    assert both.render("/runs/1/steps/checkpoint_1.html") is not None
    page = both.render("/runs/2/steps.html").body.decode()
    assert "forked from" in page and 'href="../../runs/1/steps/checkpoint_1.html"' in page
    assert "checkpoint_1" not in page.replace("source/steps/checkpoint_1", "").replace("runs/1/steps/checkpoint_1.html", "")

    alone = Report([out]).render("/index.html").body.decode()
    assert "forked from source/steps/checkpoint_1" in alone and "checkpoint_1.html" not in alone  # not in the report: no link


def test_show_says_forked_from_in_text_and_json(server, source, tmp_path: Path, capsys) -> None:
    problem, origin = source
    out = tmp_path / "fork"
    assert run(problem, out, "--from", str(origin / "steps" / "checkpoint_1")) == 0
    capsys.readouterr()
    assert main(["show", str(out)]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[1] == "forked from source/steps/checkpoint_1"
    assert main(["show", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["forked_from"]["run"] == str(origin.resolve())
    assert (data["forked_from"]["problem"], data["forked_from"]["checkpoint"]) == ("steps", "checkpoint_1")
    assert data["forked_from"]["keep_context"] is False
    # a run that is no fork says nothing of one
    assert main(["show", str(origin)]) == 0
    assert "forked from" not in capsys.readouterr().out
    assert main(["show", str(origin), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["forked_from"] is None


def test_show_says_a_fork_kept_its_conversation(server, tmp_path: Path, capsys) -> None:
    problem = make_steps(tmp_path / "problems")
    origin = tmp_path / "source"
    assert run(problem, origin, agent="react") == 0
    out = tmp_path / "fork"
    assert run(problem, out, "--from", str(origin / "steps" / "checkpoint_1"), "--keep-context", agent="react") == 0
    capsys.readouterr()
    assert main(["show", str(out)]) == 0
    assert "forked from source/steps/checkpoint_1 (with its conversation)" in capsys.readouterr().out.splitlines()
