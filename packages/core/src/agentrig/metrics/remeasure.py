"""``agentrig evaluate --metrics``: ``quality.json`` for the recorded snapshots of a finished run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from agentrig.metrics.records import QualityRecord


def remeasure(
    run_root: Path,
    target: str | None,
    names: Sequence[str],
    on_result: Callable[[str, QualityRecord], None] | None = None,
    on_notice: Callable[[str], None] | None = None,
    on_kept: Callable[[str, str], None] | None = None,
) -> list[QualityRecord]:
    """Measure the selected finished checkpoints' snapshots with the metrics ``names`` and write each
    one's ``quality.json`` (the delta against the checkpoint before it in ``results.jsonl``). Holds the
    run directory's lock; raises :class:`~agentrig.run.reevaluate.EvaluateError` for a directory that
    holds no run or an unknown problem or checkpoint. A metric that fails where the checkpoint's ``quality.json``
    has its figures keeps them: ``on_kept(checkpoint, failure)`` is told."""
    from agentrig.metrics.record import record_quality
    from agentrig.run.layout import RunDirectory, RunDirectoryError
    from agentrig.run.reevaluate import EvaluateError, select

    directory = RunDirectory(Path(run_root))
    if not directory.run_file.is_file():
        raise EvaluateError(f"{directory.root} is not a run directory (run.json missing); pass the directory `agentrig run` printed")
    try:
        record = directory.read_run()
        lines = directory.results_read_back([], on_notice)
        chosen = select(record, lines, target, directory.run_file)
        lock = directory.lock()
    except RunDirectoryError as exc:
        raise EvaluateError(str(exc)) from None
    before: dict[tuple[str, str], str] = {}
    last: dict[str, str] = {}
    for line in lines:
        if line.unit in last:
            before[(line.unit, line.checkpoint)] = last[line.unit]
        last[line.unit] = line.checkpoint
    measured = []
    try:
        for line in chosen:
            paths = directory.checkpoint(line.unit, line.checkpoint)
            previous = before.get((line.unit, line.checkpoint))
            previous_dir = directory.checkpoint(line.unit, previous).root if previous else None
            where = f"{line.unit}/{line.checkpoint}"
            kept: list[str] = []
            quality = record_quality(directory.root, paths.root, names, previous_dir, on_kept=kept.append)
            if on_result is not None:
                on_result(where, quality)
            if on_kept is not None:
                for failure in kept:
                    on_kept(where, failure)
            measured.append(quality)
    finally:
        directory.unlock(lock)
    return measured
