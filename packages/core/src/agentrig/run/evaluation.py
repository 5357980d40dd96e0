"""Evaluating a checkpoint through its problem's format, and the record's verdict.

The run loop, ``agentrig replay`` (and re-evaluation of recorded snapshots)
call :func:`evaluate_checkpoint`; the format decides what runs (see
:mod:`agentrig.formats.interface`), :mod:`agentrig.evaluation.engine` runs it
on a copy of the workspace.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

from agentrig.evaluation.engine import DEFAULT_TEST_TIMEOUT, OUTPUT_TAIL, tail
from agentrig.evaluation.records import EvaluationRecord, utcnow
from agentrig.readback import ReadbackLimits

if TYPE_CHECKING:
    from agentrig.evaluation.policy import PassPolicy
    from agentrig.problem import Checkpoint, Problem
    from agentrig.runtime.interface import Runtime

__all__ = ["DEFAULT_TEST_TIMEOUT", "OUTPUT_TAIL", "REPORT_DIR", "evaluate", "evaluate_checkpoint", "tail"]

#: The directory beside ``evaluation.json`` holding the test runner's raw report.
REPORT_DIR = "evaluation"


def evaluate_checkpoint(
    runtime: Runtime,
    workspace: Path,
    problem: Problem,
    checkpoint: Checkpoint,
    *,
    report_dir: Path | None = None,
    timeout: float = DEFAULT_TEST_TIMEOUT,
    policy: PassPolicy | None = None,
    allow_env: Collection[str] = (),
    session_timeout: float | None = None,
    readback: ReadbackLimits | None = None,
) -> EvaluationRecord:
    """Evaluate the workspace after ``checkpoint`` with ``problem``'s format; never raises for a
    failing test or runtime (an infrastructure failure is recorded as one). ``timeout``: the run's
    ``--test-timeout`` (a test command that sets no limit of its own and does not time each test);
    ``session_timeout``: its ``--test-session-timeout`` (a cap on every test command; a Harbor
    verifier keeps its task's ``timeout_sec``). ``allow_env``: the credential variables a task's
    verifier may take from the host (``-c verifier.allow_env``)."""
    from agentrig.formats.interface import EvaluationContext
    from agentrig.formats.resolve import get_format

    started = utcnow()
    try:
        fmt = get_format(problem.format)
        context = EvaluationContext(
            runtime=runtime,
            workspace=workspace,
            report_dir=report_dir,
            timeout=timeout,
            policy=policy,
            allow_env=frozenset(allow_env),
            session_timeout=session_timeout,
            readback=readback,
        )
        return fmt.evaluate(problem, checkpoint, context)
    except Exception as exc:  # a format's bug is the evaluation's failure, not the run's
        return EvaluationRecord(
            command=checkpoint.test,
            passed=False,
            started=started,
            elapsed=(utcnow() - started).total_seconds(),
            infrastructure_failure=True,
            error=f"{type(exc).__name__}: {exc}",
        )


def evaluate(
    runtime: Runtime,
    workspace: Path,
    problem: Problem,
    checkpoint: Checkpoint,
    *,
    timeout: float = DEFAULT_TEST_TIMEOUT,
) -> EvaluationRecord:
    """:func:`evaluate_checkpoint` without a report directory or policy override (kept for callers of old)."""
    return evaluate_checkpoint(runtime, workspace, problem, checkpoint, timeout=timeout)
