"""``agentrig view RUN_DIR... [--out DIR] [--port N] [--no-open]``: the report in a browser."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agentrig.cli.output import CLIError


def add_parser(subparsers: Any) -> None:
    """Add the ``view`` command."""
    parser = subparsers.add_parser(
        "view",
        help="the runs' report in a browser (served on 127.0.0.1, or written as static files)",
        description="Serve a report of one or more runs on 127.0.0.1 (results, comparison, plots, trajectories, "
        "diffs; a run in progress refreshes as it goes), or write it with --out as static files that open "
        "from disk. Nothing is fetched from the network.",
    )
    parser.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR", help="run directories (runs/latest is the newest)")
    parser.add_argument("--out", type=Path, metavar="DIR", help="write the report as static files into DIR instead of serving it")
    parser.add_argument("--port", type=int, default=0, help="port to serve on (default: a free one)")
    parser.add_argument("--no-open", action="store_true", help="do not open a browser, only print the URL")
    parser.set_defaults(handler=view_command)


def view_command(args: argparse.Namespace) -> int:
    """Write the static report, or serve it until Ctrl-C."""
    if not 0 <= args.port <= 65535:
        raise CLIError(f"--port {args.port}: must be between 0 and 65535", status=2)
    from agentrig.report.reader import NotARunError
    from agentrig.view.render import Report

    try:
        report = Report(args.run_dirs, cache_runs=args.out is not None)
    except NotARunError as exc:
        raise CLIError(str(exc), status=2) from None
    from agentrig.cli.output import warning_line

    runs = report.runs()
    for run in runs:  # what was left out (a name that is not one, a record that is unreadable), named once
        for notice in run.notices:
            warning_line(f"{run.root}: {notice}" if len(runs) > 1 else notice)
    if args.out is not None:
        from agentrig.view.site import write_site

        if args.out.exists() and not args.out.is_dir():
            raise CLIError(f"--out {args.out}: exists and is not a directory", status=2)
        from agentrig.boundary import BoundaryError

        try:
            count = write_site(report, args.out)
        except BoundaryError as exc:
            raise CLIError(str(exc), status=2) from None
        except OSError as exc:
            raise CLIError(f"--out {args.out}: {exc.strerror or exc}", status=2) from None
        print(f"report written: {args.out / 'index.html'} ({count} files)")
        return 0
    from agentrig.view.server import serve

    try:
        serve(report, args.port, open_browser=not args.no_open)
    except OSError as exc:
        raise CLIError(f"--port {args.port}: cannot listen on 127.0.0.1 ({exc.strerror or exc})", status=2) from None
    return 0
