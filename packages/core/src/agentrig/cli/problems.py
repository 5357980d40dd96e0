"""``agentrig problems list PATH [--json]``: the problems of a directory or dataset, by format."""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass
from typing import Any

from agentrig.cli.output import CLIError, print_json, print_table


@dataclass(frozen=True)
class ProblemRow:
    """One problem as ``problems list --json`` shows it. ``tests`` counts the tests of the last
    checkpoint (its suite usually includes the earlier ones), ``null`` when the format cannot
    tell without running them; ``solution``: every checkpoint has a reference solution."""

    name: str
    format: str
    relative: str
    path: str
    checkpoints: int
    tests: int | None
    solution: bool


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
    """Load every problem under ``path`` and describe it; raises ``ProblemError``."""
    from agentrig.formats.resolve import find_problems, get_format, load_with

    rows = []
    for location in find_problems(path, format=problem_format, include=include or (), exclude=exclude or ()):
        fmt = get_format(location.format)
        problem = load_with(fmt, location.path)
        last = problem.checkpoints[-1]
        rows.append(
            ProblemRow(
                name=problem.name,
                format=location.format,
                relative=location.relative,
                path=str(location.path),
                checkpoints=len(problem.checkpoints),
                tests=fmt.count_tests(problem, last),
                solution=all(fmt.has_solution(problem, c) for c in problem.checkpoints),
            )
        )
    return rows


def list_command(args: argparse.Namespace) -> int:
    """Print the problems under ``args.path``; exit 2 when there are none or one is invalid."""
    from agentrig.problem import ProblemError

    try:
        rows = problem_rows(args.path, args.problem_format, args.include, args.exclude)
    except ProblemError as exc:
        raise CLIError(str(exc), status=2) from None
    if args.json:
        print_json([asdict(row) for row in rows])
        return 0
    print_table(
        ["format", "name", "checkpoints", "tests", "solution", "path"],
        [[r.format, r.name, r.checkpoints, "" if r.tests is None else r.tests, "yes" if r.solution else "no", r.relative]
         for r in rows],
    )
    return 0
