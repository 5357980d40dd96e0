"""Running a checkpoint's test command in the workspace and recording the verdict.

The problem's test files (its ``tests`` directory) are placed into the workspace
only while the test runs and taken out again afterwards, so the agent never
sees them and the snapshot holds only the agent's work. A file the agent wrote
at one of those paths is put back as it was.
"""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from collections.abc import Iterator
from pathlib import Path

from agentrig.problem import Checkpoint, Problem
from agentrig.run.records import EvaluationRecord, utcnow
from agentrig.runtime.interface import Runtime

OUTPUT_TAIL = 4000
DEFAULT_TEST_TIMEOUT = 600.0


@contextmanager
def test_files_in(workspace: Path, source: Path | None) -> Iterator[None]:
    """Copy ``source``'s files into ``workspace`` (same relative name) for the duration."""
    if source is None or not source.is_dir():
        yield
        return
    target_root = workspace / source.name
    saved: dict[Path, bytes | None] = {}
    created_dirs: list[Path] = [] if target_root.exists() else [target_root]
    try:
        for src in sorted(source.rglob("*")):
            dst = target_root / src.relative_to(source)
            if src.is_dir():
                if not dst.exists():
                    dst.mkdir(parents=True)
                    created_dirs.append(dst)
                continue
            if not dst.parent.exists():
                dst.parent.mkdir(parents=True)
                created_dirs.append(dst.parent)
            saved[dst] = dst.read_bytes() if dst.is_file() and not dst.is_symlink() else None
            if dst.is_dir() and not dst.is_symlink():
                shutil.rmtree(dst)
            elif dst.is_symlink():
                dst.unlink()
            shutil.copy2(src, dst)
        yield
    finally:
        for dst, content in saved.items():
            if content is None:
                dst.unlink(missing_ok=True)
            else:
                dst.write_bytes(content)
        for directory in sorted(set(created_dirs), key=lambda p: len(p.parts), reverse=True):
            # only directories we created and that the test left nothing else in
            try:
                os.rmdir(directory)
            except OSError:
                pass


def tail(text: str, limit: int = OUTPUT_TAIL) -> str:
    """The last ``limit`` characters of ``text``, marked when cut."""
    return text if len(text) <= limit else "[...]\n" + text[-limit:]


def evaluate(
    runtime: Runtime,
    workspace: Path,
    problem: Problem,
    checkpoint: Checkpoint,
    *,
    timeout: float = DEFAULT_TEST_TIMEOUT,
) -> EvaluationRecord:
    """Run ``checkpoint.test`` in the runtime (exit 0 = pass); no test: ``passed`` is ``None``."""
    if checkpoint.test is None:
        return EvaluationRecord(command=None)
    started = utcnow()
    try:
        with test_files_in(workspace, problem.path / problem.tests):
            result = runtime.exec(checkpoint.test, timeout=timeout)
    except Exception as exc:  # a runtime failure is the evaluation's error, not the run's
        return EvaluationRecord(
            command=checkpoint.test,
            passed=False,
            started=started,
            elapsed=(utcnow() - started).total_seconds(),
            error=f"{type(exc).__name__}: {exc}",
        )
    output = result.stdout
    if result.stderr:
        output += ("" if not output or output.endswith("\n") else "\n") + result.stderr
    return EvaluationRecord(
        command=checkpoint.test,
        exit_code=result.exit_code,
        passed=result.exit_code == 0 and not result.timed_out,
        timed_out=result.timed_out,
        elapsed=result.elapsed or (utcnow() - started).total_seconds(),
        started=started,
        output_tail=tail(output),
    )
