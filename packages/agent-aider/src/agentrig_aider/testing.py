"""Test kit of the aider agent: scripted model replies in aider's SEARCH/REPLACE (``diff``) edit format.

aider's model calls no tool: it answers with edit blocks that aider applies. The conformance plan's
shell solution is turned into such answers by running it in a scratch copy of the sample's
workspace, checkpoint by checkpoint, and writing each changed file whole.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from agentrig.testing.conformance import LATER_REPLY_DELAY, ConformancePlan, ScriptedTurn
from agentrig.testing.fake_server import FakeReply, FakeUsage, Fault
from agentrig.usage import TokenUsage


def replace_block(path: str, old: str, new: str) -> str:
    """One SEARCH/REPLACE block editing ``path`` (``old`` empty: the file is created)."""
    return f"{path}\n```\n<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n```\n"


def _snapshot(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def solved_files(plan: ConformancePlan) -> dict[str, dict[str, tuple[str, str]]]:
    """For each checkpoint of ``plan``: the files its shell solution changes, ``path -> (before, after)``."""
    changes: dict[str, dict[str, tuple[str, str]]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "workspace"
        workspace = plan.problem.workspace
        source = plan.sample.path / workspace if workspace else None
        if source is not None and source.is_dir():
            shutil.copytree(source, root)
        else:
            root.mkdir()
        for checkpoint in plan.selected_checkpoints():
            before = _snapshot(root)
            for command in plan.sample.solution(checkpoint):
                subprocess.run(["sh", "-c", command], cwd=root, check=True, timeout=30)
            after = _snapshot(root)
            changes[checkpoint.name] = {
                path: (before.get(path, ""), text) for path, text in after.items() if before.get(path) != text
            }
    return changes


def conformance_turns(plan: ConformancePlan) -> list[ScriptedTurn]:
    """Two answers per checkpoint: one whose edit does not apply (aider sends the error back: its reflection),
    then one editing every file the solution changes. With ``failure``: none."""
    if plan.failure:
        return []
    turns: list[ScriptedTurn] = []
    for name, files in solved_files(plan).items():
        miss = replace_block(min(files), "a line that is not in the file\n", "anything\n")
        turns.append(
            ScriptedTurn(checkpoint=name, text=f"Running step 1.\n\n{miss}", usage=TokenUsage(input=200, output=40, cache_read=100))
        )
        edits = "".join(replace_block(path, old, new) for path, (old, new) in sorted(files.items()))
        turns.append(
            ScriptedTurn(checkpoint=name, text=f"Done with {name}.\n\n{edits}", usage=TokenUsage(input=300, output=20, cache_read=100))
        )
    return turns


def conformance_script(plan: ConformancePlan) -> list[FakeReply | Fault]:
    """:func:`conformance_turns` as the fake server's script (a 401 with ``failure``; under a step limit every
    reply after the first waits :data:`LATER_REPLY_DELAY`, as in :meth:`ConformancePlan.fake_script`)."""
    if plan.failure:
        return [Fault(status=401, error_type="authentication_error", message="conformance: invalid API key")]
    later = LATER_REPLY_DELAY if plan.cost_limits.step_limit else 0.0
    return [
        FakeReply(text=turn.text, usage=FakeUsage(**turn.usage.model_dump()), model=plan.model_name,
                  delay=later if index else 0.0)
        for index, turn in enumerate(conformance_turns(plan))
    ]
