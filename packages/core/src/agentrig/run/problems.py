"""Loading the problems of a run: problem directories and datasets, in any installed format.

The formats themselves live in :mod:`agentrig.formats`; this module turns
``agentrig run PATH...`` (with ``--format``, ``--problem`` and ``-x``) into
loaded problems with unique names.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from agentrig.formats.native import PROBLEM_FILE, describe_validation_error
from agentrig.formats.resolve import UnloadableProblem, find_problems, load_found, load_problem as _load_one
from agentrig.problem import Problem, ProblemError

__all__ = [
    "PROBLEM_FILE", "ProblemError", "UnloadableProblem", "describe_validation_error", "load_problem", "load_problems",
    "load_runnable_problems",
]


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
    _check_unique(problems)
    return problems


def load_runnable_problems(
    paths: Sequence[str | Path],
    format: str | None = None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> tuple[list[Problem], list[UnloadableProblem]]:
    """Like :func:`load_problems`, but a problem that cannot be loaded is returned apart with its
    reason instead of failing the whole set (a dataset with one broken task still runs the rest).

    Raises :class:`ProblemError` (one line) when one the user asked for by itself cannot be loaded
    (its directory given as the path, or its exact name as ``--problem``), or when none can.
    """
    problems: list[Problem] = []
    unloadable: list[UnloadableProblem] = []
    for path in paths:
        found = find_problems(path, format=format, include=include, exclude=exclude)
        loaded, broken = load_found(found, include)
        problems += loaded
        unloadable += broken
    for item in unloadable:
        if item.requested:
            raise ProblemError(item.error)
    if unloadable and not problems:
        more = f" (and {len(unloadable) - 1} more problems that cannot be loaded)" if len(unloadable) > 1 else ""
        raise ProblemError(unloadable[0].error + more)
    _check_unique(problems)
    return problems, unloadable


def shared_names(problems: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """The names ``(name, path)`` pairs share, each with its paths in order: problems one run cannot take
    together (they would share an output folder)."""
    paths: dict[str, list[str]] = {}
    for name, path in problems:
        paths.setdefault(name, []).append(path)
    return {name: found for name, found in paths.items() if len(found) > 1}


def shared_name_text(name: str, paths: list[str], relative: bool = False) -> str:
    """``2 problems are named 'reverse' (A, B): `agentrig run` takes one of them at a time (names must be unique
    within a run): ...`` with how to choose (``relative``: the paths are those ``--problem`` and ``-x`` match)."""
    how = (
        f"choose with --problem PATH or -x PATH, e.g. -x {paths[0]}" if relative
        else "choose with --problem GLOB or -x GLOB on the paths `agentrig problems list` shows"
    )
    return (
        f"{len(paths)} problems are named '{name}' ({', '.join(paths)}): `agentrig run` takes one of them at a time"
        f" (names must be unique within a run): {how}"
    )


def _check_unique(problems: list[Problem]) -> None:
    """Two problems with the same name would share an output folder: :class:`ProblemError`."""
    for name, paths in shared_names((problem.name, str(problem.path)) for problem in problems).items():
        raise ProblemError(shared_name_text(name, paths))
