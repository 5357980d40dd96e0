"""``agentrig agents list``, ``agentrig agents show NAME`` and ``agentrig agents bundle NAME``."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from agentrig.cli.output import CLIError, print_json, print_table, warning_line


def add_parser(subparsers: Any) -> None:
    """Add the ``agents`` command group."""
    parser = subparsers.add_parser("agents", help="list installed agents, show one agent's config schema")
    sub = parser.add_subparsers(dest="agents_command", metavar="SUBCOMMAND")
    sub.required = True
    listing = sub.add_parser("list", help="the installed agent types")
    listing.add_argument("--json", action="store_true", help="print a JSON array")
    listing.set_defaults(handler=list_agents)
    show = sub.add_parser("show", help="one agent's config schema with defaults")
    show.add_argument("name", help="agent type, as shown by `agentrig agents list`")
    show.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(handler=show_agent)
    bundle = sub.add_parser(
        "bundle",
        help="prepare a CLI agent's bundle now (the pinned CLI a task's own container runs), e.g. before going offline",
    )
    bundle.add_argument("name", help="agent type with a bundle (claude_code, codex, opencode, gemini_cli, qwen_code, ...)")
    bundle.add_argument("--version", help="the CLI's version (default: the one the agent pins)")
    bundle.add_argument(
        "--platform",
        action="append",
        metavar="PLATFORM",
        help="linux-<x64|arm64>-<glibc|musl|static>, repeatable, or 'all' (default: this machine's)",
    )
    bundle.add_argument("--json", action="store_true", help="print a JSON array")
    bundle.set_defaults(handler=bundle_agent)


def loaded_registry() -> Any:
    """The plugin registry, with one warning line per broken plugin (strict mode: an error)."""
    from agentrig.errors import PluginError
    from agentrig.registry import get_registry

    registry = get_registry()
    try:
        registry.raise_if_strict()
    except PluginError as exc:
        raise CLIError(f"{exc} (AGENTRIG_STRICT_PLUGINS is set)") from exc
    for plugin in registry.errors():
        where = plugin.distribution or "in-process"
        if plugin.version:
            where += f" {plugin.version}"
        warning_line(f"plugin '{plugin.name}' ({where}): {plugin.error}")
    return registry


def list_agents(args: argparse.Namespace) -> int:
    """Print the installed agent types."""
    agents = loaded_registry().agents()
    if args.json:
        print_json([a.to_dict() for a in agents])
        return 0
    if not agents:
        from agentrig.registry import KINDS

        print(f"No agents installed: {KINDS['agents'].hint}.")
        return 0
    print_table(
        ["name", "description", "distribution", "version"],
        [[a.name, a.description, a.distribution or "(in-process)", a.version or ""] for a in agents],
    )
    return 0


@contextmanager
def _agent_lookup() -> Iterator[None]:
    """An unknown agent name as a usage error (exit 2, with its "did you mean"); a broken plugin as an error."""
    from agentrig.errors import PluginError, UnknownAgentError

    try:
        yield
    except UnknownAgentError as exc:
        raise CLIError(str(exc), status=2) from exc
    except PluginError as exc:
        raise CLIError(str(exc)) from exc


def show_agent(args: argparse.Namespace) -> int:
    """Print one agent's config schema, distribution and version."""
    from agentrig.agents.interface import get_agent_config_cls

    registry = loaded_registry()
    with _agent_lookup():
        spec, plugin = registry.agent_spec(args.name)
        config_cls = get_agent_config_cls(args.name, registry)
    schema = config_cls.model_json_schema()
    if args.json:
        print_json(
            {
                "name": spec.name,
                "description": spec.description,
                "distribution": plugin.distribution,
                "version": plugin.version,
                "config": spec.config,
                "agent": spec.agent,
                "schema": schema,
            }
        )
        return 0
    print(f"{spec.name}: {spec.description}")
    print(f"distribution: {plugin.distribution or '(in-process)'} {plugin.version or ''}".rstrip())
    print(f"config: {spec.config}")
    print()
    print_table(["field", "type", "default", "description"], schema_rows(schema))
    return 0


def _nested_model(prop: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any] | None:
    """The schema of the model a field holds (``$ref``, or ``anyOf`` a ``$ref`` and null), when it has fields."""
    refs = [prop.get("$ref")] + [o.get("$ref") for o in prop.get("anyOf") or prop.get("allOf") or []]
    for ref in refs:
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            found = defs.get(ref.removeprefix("#/$defs/"))
            if isinstance(found, dict) and found.get("properties"):
                return found
    return None


def schema_rows(schema: dict[str, Any], prefix: str = "", defs: dict[str, Any] | None = None) -> list[list[Any]]:
    """``agents show``'s rows: each field with its type, default and description, and the fields of a
    nested model (``cost_limits``) after it, as the dotted keys ``-c`` takes (``cost_limits.step_limit``)."""
    defs = schema.get("$defs", {}) if defs is None else defs
    rows: list[list[Any]] = []
    required = set(schema.get("required", []))
    for field, prop in schema.get("properties", {}).items():
        default = prop.get("default", "(required)" if field in required else None)
        nested = _nested_model(prop, defs)
        if nested is not None and isinstance(default, dict):
            default = None  # each nested field shows its own
        rows.append([prefix + field, _type_name(prop), default, prop.get("description", "")])
        if nested is not None and prefix.count(".") < 3:
            rows += schema_rows(nested, f"{prefix}{field}.", defs)
    return rows


def _type_name(prop: dict[str, Any]) -> str:
    if "type" in prop:
        return str(prop["type"])
    if "const" in prop:
        return repr(prop["const"])
    if "enum" in prop:
        return "|".join(map(str, prop["enum"]))
    if "$ref" in prop:
        return prop["$ref"].rsplit("/", 1)[-1]
    options = prop.get("anyOf") or prop.get("oneOf") or []
    return "|".join(_type_name(o) for o in options) or "any"


def bundle_agent(args: argparse.Namespace) -> int:
    """Prepare (or find cached) an agent's bundles and print where they are."""
    import time

    from agentrig.agents import bundles
    from agentrig.agents.interface import get_agent_cls, get_agent_config_cls

    registry = loaded_registry()
    with _agent_lookup():
        recipe = getattr(get_agent_cls(args.name, registry), "bundle_recipe", None)
        config_cls = get_agent_config_cls(args.name, registry)
    if recipe is None:
        raise CLIError(f"agent '{args.name}' has no bundle: it runs in any image as it is", status=2)
    field = config_cls.model_fields.get("version")
    version = args.version or (field.default if field is not None else None)
    if not version:
        raise CLIError(f"agent '{args.name}' pins no version: pass --version", status=2)
    platforms = _bundle_platforms(args.platform, recipe)
    root = bundles.bundles_dir()
    rows: list[dict[str, Any]] = []
    for platform in platforms:
        target = root / bundles.bundle_name(args.name, version) / platform
        cached = bundles.is_ready(target)
        started = time.monotonic()
        try:
            path = bundles.prepare_bundle(args.name, version, platform, recipe, root=root)
        except bundles.BundleError as exc:
            raise CLIError(str(exc)) from exc
        rows.append({"platform": platform, "path": str(path), "cached": cached,
                     "seconds": round(time.monotonic() - started, 3)})
    if args.json:
        print_json(rows)
        return 0
    print_table(
        ["platform", "path", "prepared"],
        [[r["platform"], r["path"], "cached" if r["cached"] else f"in {r['seconds']:.1f} s"] for r in rows],
    )
    return 0


def _bundle_platforms(given: list[str] | None, recipe: Any) -> list[str]:
    """The platforms ``--platform`` names (``all``: every one the recipe has; none: this machine's)."""
    from agentrig.agents import bundles

    known = recipe.platforms()
    if not given:
        host = bundles.host_platform()
        chosen = bundles.choose_platform(recipe, host)
        if chosen is None:
            raise CLIError(
                f"this machine ({host.describe()}) runs none of the bundle's platforms ({', '.join(known)}): "
                "pass --platform", status=2
            )
        return [chosen]
    if "all" in given:
        return known
    unknown = [p for p in given if p not in known]
    if unknown:
        raise CLIError(f"--platform {unknown[0]}: the bundle has {', '.join(known)} (or 'all')", status=2)
    return list(dict.fromkeys(given))
