"""pass@1 and pass@k of a run with ``--attempts K`` as text lines (the run's summary, ``show``)."""

from __future__ import annotations

from agentrig.run.records import PassAtK, PassAtKSummary


def _figure(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def estimate_text(estimate: PassAtK, k: int, what: str = "correct") -> str:
    """``2/3 correct, pass@1 0.667, pass@3 1.000 (mean score 0.5)``."""
    text = f"{estimate.c}/{estimate.n} {what}, pass@1 {_figure(estimate.pass_at_1)}, pass@{k} {_figure(estimate.pass_at_k)}"
    if estimate.mean_score is not None:
        text += f", mean score {estimate.mean_score:.3f}"
    return text


def pass_at_k_lines(summary: PassAtKSummary, problem: str | None = None) -> list[str]:
    """The run's line, then one per problem (and per checkpoint of problems with several);
    only ``problem``'s with ``problem`` given."""
    k = summary.k
    lines: list[str] = []
    if problem is None:
        run = summary.run
        text = (
            f"pass@1 {_figure(run.pass_at_1)} | pass@{k} {_figure(run.pass_at_k)}"
            f" over {len(summary.problems)} problems, {k} attempts each ({run.n} finished, {run.c} solved)"
        )
        if run.mean_score is not None:
            text += f" | mean score {run.mean_score:.3f}"
        lines.append(text)
    for name, entry in summary.problems.items():
        if problem is not None and name != problem:
            continue
        lines.append(f"  {name}: {estimate_text(entry.solved, k, 'attempts solved')}")
        if len(entry.checkpoints) > 1:
            for checkpoint, estimate in entry.checkpoints.items():
                lines.append(f"    {checkpoint}: {estimate_text(estimate, k, 'passed')}")
    return lines


__all__ = ["pass_at_k_lines", "estimate_text"]
