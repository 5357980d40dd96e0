"""Loading the problems of a run: problem directories and datasets, in any installed format.

The formats themselves live in :mod:`agentrig.formats`; this module turns
``agentrig run PATH...`` (with ``--format``, ``--problem`` and ``-x``) into
loaded problems with unique names.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agentrig.formats.native import PROBLEM_FILE, describe_validation_error
from agentrig.formats.resolve import find_problems
from agentrig.formats.resolve import load_problem as _load_one
from agentrig.problem import Problem, ProblemError

__all__ = ["PROBLEM_FILE", "ProblemError", "describe_validation_error", "load_problem", "load_problems"]


def load_problem(path: str | Path, format: str | None = None) -> Problem:
    """Read and check the one problem at ``path`` (its format detected unless ``format`` names it).

    Raises :class:`ProblemError` with one line naming the file and field to fix.
    """
    return _load_one(path, format)


def load_problems(
    paths: Sequence[str | Path],
    format: str | None = None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> list[Problem]:
    """Every problem under ``paths`` (problem directories or datasets), selected by the
    ``include`` / ``exclude`` globs; two problems with the same name are an error
    (they would share an output folder)."""
    problems: list[Problem] = []
    for path in paths:
        for location in find_problems(path, format=format, include=include, exclude=exclude):
            problems.append(_load_one(location.path, location.format))
    names: dict[str, Path] = {}
    for problem in problems:
        if problem.name in names:
            raise ProblemError(
                f"two problems are named '{problem.name}' ({names[problem.name]} and {problem.path}):"
                " names must be unique within a run"
            )
        names[problem.name] = problem.path
    return problems
