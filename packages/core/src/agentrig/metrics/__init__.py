"""Code-quality metrics per checkpoint: figures computed from a checkpoint's snapshot into
``<checkpoint>/quality.json``, with the delta from the previous checkpoint.

Metrics are plugins (``agentrig_metrics``); the core's own (``size``, ``lint``, ``complexity``,
``patterns``, ``waste``, ``duplication``, ``slopcode``) come through the same hook. Nothing here imports an
analysis tool at import time: radon is imported, ruff and ast-grep are run, only when a metric is
computed. See ``docs/metrics.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentrig.lazy import lazy_exports

# loaded on first access: finding a metric's module (the registry checks that it exists while
# `agentrig agents list` runs) imports this package, and must not import pydantic
_EXPORTS = {
    "Metric": "agentrig.metrics.interface",
    "MetricError": "agentrig.metrics.interface",
    "SnapshotSources": "agentrig.metrics.interface",
    "SourceFile": "agentrig.metrics.interface",
    "ToolMissingError": "agentrig.metrics.interface",
    "MetricResult": "agentrig.metrics.records",
    "QualityRecord": "agentrig.metrics.records",
}
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

if TYPE_CHECKING:
    from agentrig.metrics.interface import (
        Metric as Metric,
        MetricError as MetricError,
        SnapshotSources as SnapshotSources,
        SourceFile as SourceFile,
        ToolMissingError as ToolMissingError,
    )
    from agentrig.metrics.records import MetricResult as MetricResult, QualityRecord as QualityRecord

__all__ = ["Metric", "MetricError", "MetricResult", "QualityRecord", "SnapshotSources", "SourceFile", "ToolMissingError"]
