"""A SlopCodeBench problem as its agent sees it: the static assets in the workspace where the
benchmark puts them (and left out of the snapshots, as its snapshots leave them out), and the
oracle's workspace equal to each checkpoint's reference solution.

The fixture is the wordcount problem (agentrig's own, in the benchmark's format) with its asset
saved under ``inputs/samples`` and a file only the first checkpoint's solution has.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES / "scripted-agent" / "src"))

from agentrig_scripted import testkit  # noqa: E402

from agentrig.agents.session import Session  # noqa: E402
from agentrig.formats.interface import CheckpointSetupError  # noqa: E402
from agentrig.formats.resolve import get_format, load_problem  # noqa: E402

pytest.importorskip("pytest_jsonreport", reason="the slopcode tests run pytest with pytest-json-report")

WORDCOUNT = FIXTURES / "slopcode" / "wordcount"
SAMPLE = (WORDCOUNT / "files" / "sample.txt").read_text()


def wordcount_copy(root: Path) -> Path:
    """wordcount with its asset saved at ``inputs/samples`` and an extra file in checkpoint 1's solution."""
    problem = root / "wordcount"
    shutil.copytree(WORDCOUNT, problem)
    config = problem / "config.yaml"
    config.write_text(config.read_text().replace("    path: files\n", "    path: files\n    save_path: inputs/samples\n"))
    (problem / "solutions" / "checkpoint_1" / "draft.py").write_text("def draft():\n    return 1\n")
    return problem


def agentrig(tmp_path: Path, server_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = testkit.cli_env(tmp_path, server_url, AGENTRIG_SLOPCODE_PYTHON=sys.executable)
    return subprocess.run([testkit.agentrig_bin(), *args], env=env, capture_output=True, text=True, timeout=240,
                          cwd=tmp_path)


def snapshot_files(out: Path, checkpoint: str) -> list[str]:
    root = out / "wordcount" / checkpoint / "snapshot" / "files"
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_the_agent_finds_the_static_assets_where_the_benchmark_puts_them(tmp_path: Path, fake_openai_server) -> None:
    fake_openai_server.respond_with(testkit.solver())
    problem = wordcount_copy(tmp_path / "problems")
    scripts = {
        1: testkit.bash("cat inputs/samples/sample.txt > seen_1.txt && echo mine > inputs/samples/extra.txt"),
        2: testkit.bash("ls inputs/samples > seen_2.txt"),
    }
    for index, action in scripts.items():
        spec = problem / f"checkpoint_{index}.md"
        spec.write_text(spec.read_text() + "\n" + testkit.actions_line(action) + "\n")
    out = tmp_path / "run"
    proc = agentrig(tmp_path, fake_openai_server.base_url, "run", str(problem), "--agent", "scripted",
                    "--model", "openai/gpt-4o-mini", "--output", str(out))
    assert proc.returncode == 1, proc.stderr  # no wordcount.py: the tests fail, and they ran
    # before the first checkpoint, the asset is in the workspace at its save_path
    assert snapshot_files(out, "checkpoint_1") == ["seen_1.txt"]  # the snapshot leaves it out, as the benchmark's does
    assert (out / "wordcount" / "checkpoint_1" / "snapshot" / "files" / "seen_1.txt").read_text() == SAMPLE
    # the next checkpoint works on the same workspace: what the agent did to the assets is kept
    seen = out / "wordcount" / "checkpoint_2" / "snapshot" / "files" / "seen_2.txt"
    assert seen.read_text().split() == ["extra.txt", "sample.txt"]

    # resumed at checkpoint 2 (restored from checkpoint 1's snapshot): the assets are put back
    lines = (out / "results.jsonl").read_text().splitlines()
    (out / "results.jsonl").write_text(lines[0] + "\n")
    proc = agentrig(tmp_path, fake_openai_server.base_url, "run", str(problem), "--agent", "scripted",
                    "--model", "openai/gpt-4o-mini", "--output", str(out), "--resume")
    assert proc.returncode == 1, proc.stderr
    assert seen.read_text().split() == ["sample.txt"]


def test_the_oracle_workspace_equals_each_solution(tmp_path: Path) -> None:
    problem = wordcount_copy(tmp_path / "problems")
    out = tmp_path / "run"
    proc = agentrig(tmp_path, "http://127.0.0.1:9", "run", str(problem), "--agent", "oracle", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    assert snapshot_files(out, "checkpoint_1") == ["draft.py", "requirements.txt", "wordcount.py"]
    # checkpoint 1's draft.py is not in checkpoint 2's solution: not in its snapshot either
    assert snapshot_files(out, "checkpoint_2") == ["requirements.txt", "wordcount.py"]


def test_apply_solution_replaces_the_workspace_and_keeps_the_assets(tmp_path: Path) -> None:
    problem = load_problem(wordcount_copy(tmp_path / "problems"))
    fmt = get_format("slopcode")
    with Session.create(runtime="local", base_dir=tmp_path / "sessions") as session:
        workspace = Path(session.workspace.path)
        (workspace / "leftover").mkdir()
        (workspace / "leftover" / "old.py").write_text("x = 1\n")
        (workspace / ".hidden").write_text("agent's\n")
        fmt.apply_solution(problem, problem.checkpoints[1], session.runtime, workspace)
        found = sorted(p.relative_to(workspace).as_posix() for p in workspace.rglob("*") if p.is_file())
        assert found == ["inputs/samples/sample.txt", "requirements.txt", "wordcount.py"]
        assert (workspace / "inputs" / "samples" / "sample.txt").read_text() == SAMPLE


def test_an_asset_is_never_copied_through_a_link_the_agent_left(tmp_path: Path) -> None:
    problem = load_problem(wordcount_copy(tmp_path / "problems"))
    fmt = get_format("slopcode")
    outside = tmp_path / "outside"
    outside.mkdir()
    with Session.create(runtime="local", base_dir=tmp_path / "sessions") as session:
        workspace = Path(session.workspace.path)
        (workspace / "inputs").symlink_to(outside)
        with pytest.raises(CheckpointSetupError, match="'inputs' in the workspace is a symbolic link"):
            fmt.prepare_checkpoint(problem, problem.checkpoints[1], session.runtime, workspace)
    assert list(outside.iterdir()) == []
