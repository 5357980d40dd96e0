"""Before a run or a re-measure: whether the tools of the asked metrics are installed (each metric's
:meth:`~agentrig.metrics.interface.Metric.check_tools`), in one line naming each missing tool."""

from __future__ import annotations

from collections.abc import Sequence

#: Said once after the missing tools: what installs every built-in metric's tool.
_EVERY_TOOL = "pip install 'agentrig[metrics]' installs every built-in metric's tool; `hatch run all:agentrig` has them"


def unavailable_metrics(names: Sequence[str]) -> list[str]:
    """One line per metric of ``names`` that cannot run here (``size: radon.raw is not installed: pip install
    'radon'``): its tool is missing, or its plugin does not load. Empty when every one can run."""
    from agentrig.metrics.compute import one_line
    from agentrig.metrics.interface import Metric, ToolMissingError
    from agentrig.registry import get_registry
    from agentrig.specs import import_object

    lines: list[str] = []
    for name in names:
        try:
            spec = get_registry().lookup("metrics", name)
            metric = import_object(spec.metric)()
            if isinstance(metric, Metric):  # anything else fails when it runs, with its own line
                metric.check_tools()
        except ToolMissingError as exc:
            lines.append(f"{name}: {exc.tool} is not installed: pip install '{exc.package}'")
        except Exception as exc:  # a metric's check never stops the caller: its failure is the line
            lines.append(f"{name}: {one_line(exc)}")
    return lines


def unavailable_line(lines: list[str]) -> str:
    """:func:`unavailable_metrics`' lines as one: each metric's, then what installs every built-in tool."""
    return "; ".join(lines) + f" ({_EVERY_TOOL})"
