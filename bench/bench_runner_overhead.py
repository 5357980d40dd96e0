"""Runner overhead per checkpoint on a 2,000-file workspace.

Overhead = a checkpoint's wall time minus the agent's own time (``elapsed -
agent_elapsed`` of each ``results.jsonl`` line): prompt and records, the test,
the snapshot with its hashes, ``diff.json``. The peer it is compared with is
the floor of any snapshot: ``shutil.copytree`` of the same workspace, timed in
the same process run, paired per round. Medians of ROUNDS rounds.

    python bench/bench_runner_overhead.py
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "scripted-agent" / "src"))

from agentrig_scripted import testkit  # noqa: E402

from agentrig.run.records import CheckpointResultLine  # noqa: E402
from agentrig.testing.fake_openai import FakeOpenAIServer  # noqa: E402

FILES = 2000
CHECKPOINTS = 3
ROUNDS = 5


def workspace_files() -> dict[str, str]:
    return {f"pkg{i // 100}/mod{i}.py": f"# module {i}\n" + "x = 1\n" * 40 for i in range(FILES)}


def main() -> int:
    overheads: list[float] = []
    copies: list[float] = []
    with FakeOpenAIServer() as server, tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        server.respond_with(testkit.solver())
        checkpoints = [
            (f"Step {i}.", [testkit.write_file(f"pkg0/mod{i}.py", f"changed {i}\n")], "test -f pkg0/mod0.py\n")
            for i in range(CHECKPOINTS)
        ]
        problem = testkit.make_problem(root / "problems", "big", checkpoints, files=workspace_files())
        for round_ in range(ROUNDS):
            out = root / f"run{round_}"
            subprocess.run(
                [testkit.agentrig_bin(), "run", str(problem), "--agent", "scripted", "--model", "openai/gpt-4o-mini",
                 "--output", str(out), "-q"],
                env=testkit.cli_env(root, server.base_url), check=True, capture_output=True,
            )
            for text in (out / "results.jsonl").read_text().splitlines():
                line = CheckpointResultLine.model_validate_json(text)
                overheads.append(line.elapsed - line.agent_elapsed)
            start = time.perf_counter()
            shutil.copytree(problem / "files", root / f"copy{round_}")
            copies.append(time.perf_counter() - start)
    overhead, copy = statistics.median(overheads), statistics.median(copies)
    print(f"workspace: {FILES} files; {ROUNDS} runs x {CHECKPOINTS} checkpoints")
    print(f"runner overhead per checkpoint (median): {overhead * 1000:.0f} ms")
    print(f"shutil.copytree of the workspace (median): {copy * 1000:.0f} ms")
    print(f"ratio overhead / copytree: {overhead / copy:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
