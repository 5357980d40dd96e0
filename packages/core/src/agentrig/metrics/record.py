"""Writing a checkpoint's ``quality.json`` inside a run directory, after its evaluation."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from agentrig.metrics.compute import QUALITY_FILE, delta, measure, read_quality
from agentrig.metrics.records import QualityRecord


def keep_good_figures(record: QualityRecord, before: QualityRecord | None) -> list[str]:
    """Put back into ``record`` each metric ``before`` measured well and ``record`` failed on (a re-measure
    never replaces good figures with a failure); returns the failures so set aside, one line each."""
    kept: list[str] = []
    if before is None:
        return kept
    for name, result in record.metrics.items():
        good = before.metrics.get(name)
        if result.status == "failed" and good is not None and good.status == "ok":
            kept.append(result.error or f"{name}: failed")
            record.metrics[name] = good
    return kept


def record_quality(
    run_root: Path,
    checkpoint_dir: Path,
    names: Sequence[str],
    previous_dir: Path | None = None,
    on_kept: Callable[[str], None] | None = None,
) -> QualityRecord:
    """Measure ``checkpoint_dir/snapshot`` with the metrics ``names`` and write ``checkpoint_dir/quality.json``
    (atomically, through the run directory's guard). The delta is taken against ``previous_dir``'s
    ``quality.json`` when it holds the same metrics, else against its snapshot measured afresh. With ``on_kept``
    (a re-measure of the same snapshot), a metric that fails where the ``quality.json`` already there has its
    figures keeps them (:func:`keep_good_figures`) and ``on_kept`` gets the failure's line."""
    from agentrig.boundary import guard
    from agentrig.run.atomic import write_model_atomic

    record = measure(checkpoint_dir.name, checkpoint_dir / "snapshot", names)
    if on_kept is not None:
        for line in keep_good_figures(record, read_quality(checkpoint_dir / QUALITY_FILE)):
            on_kept(line)
    if previous_dir is not None and previous_dir.is_dir():
        before = read_quality(previous_dir / QUALITY_FILE)
        if before is None or not set(names) <= set(before.metrics):
            before = measure(previous_dir.name, previous_dir / "snapshot", names)
        record.previous = previous_dir.name
        record.delta = delta(record, before)
    write_model_atomic(guard(run_root, checkpoint_dir / QUALITY_FILE), record)
    return record
