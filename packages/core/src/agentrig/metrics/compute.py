"""Computing ``quality.json`` for one checkpoint: the asked metrics on its snapshot, a failing metric
recorded with its one line, and the delta from the previous checkpoint."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from agentrig.metrics.interface import Metric, MetricError, SnapshotSources
from agentrig.metrics.records import MetricResult, QualityRecord
from agentrig.metrics.sources import read_sources

#: The file a checkpoint's metrics are written to, beside ``evaluation.json``.
QUALITY_FILE = "quality.json"
#: A ``quality.json`` read back larger than this is not trusted (recomputed instead).
_MAX_RECORD_BYTES = 20_000_000


def metric_names(names: Sequence[str] | None, source: str = "-c metrics") -> list[str]:
    """The metrics to compute: ``names`` checked against the installed ones (``None``: every installed
    metric, the core's first). Raises :class:`~agentrig.errors.UnknownPluginError` naming the installed ones."""
    from agentrig.registry import get_registry

    registry = get_registry()
    if names is None:
        return list(registry.metric_specs())
    for name in names:
        registry.lookup("metrics", name, source=source)
    return list(dict.fromkeys(names))


def one_line(exc: BaseException) -> str:
    """A metric's failure in one line: its own message, or the exception's type and message."""
    text = " ".join(str(exc).split())
    return text if isinstance(exc, MetricError) and text else f"{type(exc).__name__}: {text}".rstrip(": ")


def run_metric(name: str, sources: SnapshotSources) -> MetricResult:
    """One metric on ``sources``; any failure (a missing tool, a bug in a plugin) becomes a failed result."""
    from agentrig.registry import get_registry
    from agentrig.specs import import_object

    clock = time.monotonic()
    try:
        spec = get_registry().lookup("metrics", name)
        metric = import_object(spec.metric)()
        if not isinstance(metric, Metric):
            raise MetricError(f"'{spec.metric}' does not make an agentrig.Metric")
        figures, details = metric.compute(sources)
        result = MetricResult(status="ok", figures=figures, details=details)
    except Exception as exc:  # a metric never stops the run: its failure is its record
        result = MetricResult(status="failed", error=f"{name}: {one_line(exc)}")
    result.seconds = round(time.monotonic() - clock, 4)
    return result


def delta(current: QualityRecord, previous: QualityRecord) -> dict[str, dict[str, float]]:
    """Per metric computed on both sides, each figure's change (a figure absent on one side counts as 0)."""
    change: dict[str, dict[str, float]] = {}
    for name, now in current.metrics.items():
        before = previous.metrics.get(name)
        if now.status != "ok" or before is None or before.status != "ok":
            continue
        keys = sorted(set(now.figures) | set(before.figures))
        change[name] = {key: now.figures.get(key, 0.0) - before.figures.get(key, 0.0) for key in keys}
    return change


def measure(checkpoint: str, snapshot: Path, names: Sequence[str]) -> QualityRecord:
    """The asked metrics on ``snapshot`` (no delta)."""
    clock = time.monotonic()
    sources = read_sources(snapshot)
    record = QualityRecord(checkpoint=checkpoint, files=len(sources.files), unparsable=sources.unparsable,
                           skipped=sources.skipped)
    for name in names:
        record.metrics[name] = run_metric(name, sources)
    record.seconds = round(time.monotonic() - clock, 4)
    return record


def read_quality(path: Path) -> QualityRecord | None:
    """A recorded ``quality.json`` (untrusted: size-capped, validated), or ``None`` when absent or unreadable."""
    from pydantic import ValidationError

    from agentrig.boundary import BoundaryError, read_capped

    if path.is_symlink() or not path.is_file():
        return None
    try:
        return QualityRecord.model_validate_json(read_capped(path, _MAX_RECORD_BYTES, "quality.json"))
    except (BoundaryError, ValidationError, OSError, ValueError):
        return None
