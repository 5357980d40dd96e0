"""``agentrig new agent NAME``: scaffold a third-party agent package."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agentrig.cli.output import CLIError, warning_line


def add_parser(subparsers: Any) -> None:
    """Add the ``new`` command group."""
    parser = subparsers.add_parser("new", help="scaffold a new plugin package")
    sub = parser.add_subparsers(dest="new_command", metavar="KIND")
    sub.required = True
    agent = sub.add_parser(
        "agent",
        help="an agent package: entry point, plugin, agent, config, README and conformance tests",
        description="Create a pip-installable package declaring agent type NAME; it passes its own tests as created.",
    )
    agent.add_argument("name", metavar="NAME", help="the agent type, e.g. my_agent (lowercase, digits, underscores)")
    agent.add_argument("-o", "--output", type=Path, default=Path("."),
                       help="the package is created as OUTPUT/<distribution> (default: ./agentrig-NAME, under the "
                       "current directory)")
    agent.add_argument("--distribution", help="the distribution name (default: agentrig-NAME with dashes)")
    agent.add_argument("--description", help="one line shown by `agentrig agents list`")
    agent.add_argument(
        "--kind", choices=["run", "step"], default="run",
        help="run: an Agent with its own run(task) loop (default); step: a step agent, "
        "step(observation) -> AgentOutput, whose loop agentrig runs",
    )
    agent.set_defaults(handler=new_agent)


def new_agent(args: argparse.Namespace) -> int:
    """Create the package and say what to do next."""
    from agentrig.scaffold import AgentScaffold, ScaffoldError, create_package, package_files
    from agentrig.scaffold.install import next_steps

    try:
        scaffold = AgentScaffold.for_name(args.name, distribution=args.distribution, description=args.description)
        _warn_if_taken(scaffold.name)
        path = create_package("agent-step" if args.kind == "step" else "agent", scaffold, args.output)
    except ScaffoldError as exc:
        raise CLIError(str(exc), status=2) from exc
    kind = "step agent" if args.kind == "step" else "agent"
    print(f"Created {scaffold.distribution} ({kind} type '{scaffold.name}') in {path.resolve()}:")
    for name in package_files(path):
        print(f"  {name}")
    print()
    print("Next (a fresh environment; the install line fits how this agentrig is installed):")
    for line in next_steps(path.resolve(), scaffold.name):
        print(f"  {line}")
    return 0


def _warn_if_taken(name: str) -> None:
    # A second plugin declaring an installed agent type is ignored at discovery.
    from agentrig.registry import get_registry

    for info in get_registry().agents():
        if info.name == name:
            where = info.distribution or "an in-process plugin"
            warning_line(f"agent type '{name}' is already provided by {where}; pick another NAME to install both")
