"""``agentrig problems list PATH [--json]``: the problems of a directory or dataset, by format."""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass, field
from typing import Any

from agentrig.cli.exits import ExitStatus
from agentrig.cli.output import CLIError, print_json, print_table

#: The footnote under a listing with a problem of several checkpoints.
TESTS_NOTE = "tests: the test cases a full run evaluates, summed over the checkpoints (each checkpoint's in brackets)"
#: Added to it when a problem's tests cannot be counted without running them.
UNKNOWN_TESTS_NOTE = "?: cases generated when the tests run (e.g. loaded from data files), counted only by running them"


def tests_note(rows: list[ProblemRow]) -> str | None:
    """The footnote the TESTS column of ``rows`` needs, if any."""
    loaded = [r for r in rows if r.error is None]
    several = any(len(r.checkpoint_tests) > 1 for r in loaded)
    unknown = any(None in r.checkpoint_tests for r in loaded)
    if not several and not unknown:
        return None
    return "; ".join(([TESTS_NOTE] if several else []) + ([UNKNOWN_TESTS_NOTE] if unknown else []))


@dataclass(frozen=True)
class ProblemRow:
    """One problem as ``problems list --json`` shows it. ``checkpoint_tests`` counts, per
    checkpoint in order, the test cases its evaluation runs as its test runner collects them
    (a parametrized test once per case; a suite that repeats earlier checkpoints' tests, as
    SlopCodeBench's regression tests do, counts them again), ``null`` for a checkpoint whose
    cases only running them can tell (generated at collection, e.g. loaded from data files);
    ``tests`` is their sum, the tests a full run evaluates (what ``show``'s totals count),
    ``null`` when one checkpoint's count is unknown.
    ``solution``: every checkpoint has a reference solution.
    ``error``: why the problem cannot be loaded (``null`` when it can); such a problem is listed
    with its directory's name, 0 checkpoints and no tests, and ``agentrig run`` leaves it out."""

    name: str
    format: str
    relative: str
    path: str
    checkpoints: int
    tests: int | None
    solution: bool
    error: str | None = None
    checkpoint_tests: list[int | None] = field(default_factory=list)

    def tests_text(self) -> str:
        """The TESTS cell: ``2 (1+1)``: the sum, then each checkpoint's count (``?``: unknown)."""
        if self.error is not None:
            return ""
        each = "+".join("?" if n is None else str(n) for n in self.checkpoint_tests)
        total = "?" if self.tests is None else str(self.tests)
        return total if len(self.checkpoint_tests) < 2 else f"{total} ({each})"


def add_parser(subparsers: Any) -> None:
    """Add the ``problems`` command."""
    parser = subparsers.add_parser("problems", help="list the problems of a directory or dataset")
    commands = parser.add_subparsers(dest="problems_command", metavar="SUBCOMMAND")
    commands.required = True
    listing = commands.add_parser(
        "list", help="format, name, checkpoints, tests and reference solution of every problem under PATH"
    )
    listing.add_argument("path", metavar="PATH", help="a problem directory, a dataset (a directory of problems) or dataset:NAME[@VERSION]")
    listing.add_argument("--format", dest="problem_format", help="only problems of this format")
    listing.add_argument("--problem", dest="include", action="append", default=[], metavar="GLOB")
    listing.add_argument("-x", "--exclude", dest="exclude", action="append", default=[], metavar="GLOB")
    listing.add_argument("--json", action="store_true", help="a JSON array of objects")
    listing.set_defaults(handler=list_command)


def problem_rows(path: str, problem_format: str | None = None, include: list[str] | None = None,
                 exclude: list[str] | None = None) -> list[ProblemRow]:
    """Load every problem under ``path`` and describe it; one that cannot be loaded is a row with its
    ``error``. Raises ``ProblemError`` when nothing is found, or when ``path`` is itself a problem
    directory that cannot be loaded."""
    from agentrig.boundary import shorten
    from agentrig.formats.resolve import find_problems, get_format, load_found
    from agentrig.problem import ProblemError

    found = find_problems(path, format=problem_format, include=include or (), exclude=exclude or ())
    problems, unloadable = load_found(found, include or ())
    for item in unloadable:
        if item.location.relative == ".":  # the directory given is the problem: its error is the answer
            raise ProblemError(item.error)
    loaded = {problem.path: problem for problem in problems}
    errors = {item.location.path: item.error for item in unloadable}
    rows = []
    for location in found:
        problem = loaded.get(location.path)
        if problem is None:
            rows.append(
                ProblemRow(
                    name=shorten(location.name, 60), format=location.format, relative=location.relative,
                    path=str(location.path), checkpoints=0, tests=None, solution=False, error=errors[location.path],
                )
            )
            continue
        fmt = get_format(location.format)
        counts = [fmt.count_tests(problem, checkpoint) for checkpoint in problem.checkpoints]
        rows.append(
            ProblemRow(
                name=problem.name,
                format=location.format,
                relative=location.relative,
                path=str(location.path),
                checkpoints=len(problem.checkpoints),
                tests=None if None in counts else sum(n for n in counts if n is not None),
                solution=all(fmt.has_solution(problem, c) for c in problem.checkpoints),
                checkpoint_tests=counts,
            )
        )
    return rows


def list_command(args: argparse.Namespace) -> int:
    """Print the problems under ``args.path``, those that cannot be loaded marked with their reason
    (one warning line each); exit 3 when some cannot be loaded, 2 when there are none or the one
    problem given cannot be loaded."""
    from agentrig.cli.output import warning_line
    from agentrig.problem import ProblemError

    try:
        rows = problem_rows(args.path, args.problem_format, args.include, args.exclude)
    except ProblemError as exc:
        raise CLIError(str(exc), status=2) from None
    status = ExitStatus.ERROR if any(r.error is not None for r in rows) else ExitStatus.OK
    if args.json:
        print_json([asdict(row) for row in rows])
        return status
    print_table(
        ["format", "name", "checkpoints", "tests", "solution", "path"],
        [[r.format, r.name, "unloadable" if r.error is not None else r.checkpoints,
          r.tests_text(), "" if r.error is not None else ("yes" if r.solution else "no"), r.relative]
         for r in rows],
    )
    note = tests_note(rows)
    if note:
        print(note)
    for row in rows:
        if row.error is not None:
            warning_line(f"{row.relative}: cannot be loaded: {row.error}")
    from agentrig.run.problems import shared_name_text, shared_names

    for name, paths in shared_names((r.name, r.relative) for r in rows if r.error is None).items():
        warning_line(shared_name_text(name, paths, relative=True))
    return status
