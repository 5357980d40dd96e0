"""MCP servers a run gives its agent: the ``mcp_servers`` field of every agent config.

A server is either a **stdio** server (``command``, ``args``, ``env``: a process
the agent starts) or a **streamable HTTP** server (``url``, ``headers``). Each
agent that can use MCP gives them to its model in its own form (Claude Code's
``--mcp-config``, Codex's ``[mcp_servers.NAME]``, react's MCP client); an agent
type whose config does not set :attr:`AgentConfigBase.supports_mcp` refuses a
non-empty ``mcp_servers`` with one line.

Secrets. The values of ``env`` and ``headers`` may be written ``${VAR}`` (or
contain it: ``"Bearer ${TOKEN}"``): :meth:`McpStdioServer.resolved` and
:meth:`McpHttpServer.resolved` replace each from agentrig's own environment in
the process that starts the agent, so the secret is in no config file, no
``run.json`` and no plan crossing processes. Literal values are allowed too;
:func:`redact_mcp_servers` masks them in what a run records. Either way an
agent writes the resolved values only into files of its private state directory
(mode 0600) or hands them to the server's process environment, never onto a
command line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator

from agentrig.boundary import Seconds

#: What a server's name may be: it becomes part of tool names (``mcp__NAME__tool``) and config keys.
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$"
_NAME = re.compile(NAME_PATTERN)
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
#: What a literal secret becomes in a recorded config.
REDACTED = "**********"


class McpConfigError(ValueError):
    """An MCP server cannot be configured as given (an unset ``${VAR}``, ...); the message is one line."""


def expand_references(value: str, environ: Mapping[str, str], where: str) -> str:
    """``value`` with every ``${VAR}`` replaced by ``environ[VAR]``; :class:`McpConfigError` naming
    ``where`` and the variable when one is not set (``$$`` is not special: write the value literally)."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            raise McpConfigError(f"{where}: environment variable {name} is not set (the value names ${{{name}}})")
        return environ[name]

    return _REFERENCE.sub(one, value)


def _check_env_names(value: dict[str, str]) -> dict[str, str]:
    bad = [name for name in value if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name)]
    if bad:
        raise ValueError(f"invalid environment variable name {bad[0]!r}")
    return value


class _McpServerBase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    startup_timeout: Seconds = Field(default=30.0, description="Seconds the server may take to start and answer.")
    tool_timeout: Seconds = Field(default=120.0, description="Seconds one tool call may take.")


class McpStdioServer(_McpServerBase):
    """An MCP server the agent starts as a process and talks to over its standard input and output.

    It runs where the agent runs: on the host for the react agent, inside the
    session's container for a CLI agent under ``--runtime docker`` (so
    ``command`` must exist there). Its working directory is the workspace.
    """

    type: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1, description="The executable (a name on PATH or a path).")
    args: list[str] = Field(default_factory=list, description="Its arguments: visible on command lines, no secrets.")
    env: dict[str, str] = Field(
        default_factory=dict,
        description="Extra environment of the server; values may name agentrig's own variables as ${VAR} (secrets).",
    )

    _env_names = field_validator("env")(_check_env_names)

    def resolved(self, environ: Mapping[str, str], where: str) -> McpStdioServer:
        """A copy with ``${VAR}`` in ``env`` values replaced from ``environ`` (``where`` names it in errors)."""
        env = {key: expand_references(value, environ, f"{where}.env.{key}") for key, value in self.env.items()}
        return self.model_copy(update={"env": env})

    def secrets(self) -> list[str]:
        """The values that must reach no log or artifact (every ``env`` value)."""
        return [value for value in self.env.values() if value]


class McpHttpServer(_McpServerBase):
    """An MCP server reached over streamable HTTP at ``url`` (it must be reachable from where the agent runs)."""

    type: Literal["http"] = "http"
    url: str = Field(pattern=r"^https?://\S+$", description="The server's endpoint, e.g. http://127.0.0.1:8000/mcp.")
    headers: dict[str, str] = Field(
        default_factory=dict,
        description="HTTP headers sent with every request; values may name agentrig's own variables as ${VAR} (secrets).",
    )

    def resolved(self, environ: Mapping[str, str], where: str) -> McpHttpServer:
        """A copy with ``${VAR}`` in ``headers`` values replaced from ``environ``."""
        headers = {key: expand_references(value, environ, f"{where}.headers.{key}") for key, value in self.headers.items()}
        return self.model_copy(update={"headers": headers})

    def secrets(self) -> list[str]:
        """The values that must reach no log or artifact (every header value)."""
        return [value for value in self.headers.values() if value]


def _server_kind(value: Any) -> str | None:
    """``stdio`` or ``http``: the ``type`` given, else ``http`` for a ``url`` and ``stdio`` for a ``command``."""
    if isinstance(value, BaseModel):
        return str(getattr(value, "type", None))
    if not isinstance(value, dict):
        return None
    kind = value.get("type")
    if kind is not None:
        return str(kind) if kind in ("stdio", "http") else None
    if "url" in value:
        return "http"
    if "command" in value:
        return "stdio"
    return None


#: One MCP server of ``mcp_servers``: stdio or streamable HTTP, told apart by ``type`` or by ``command``/``url``.
McpServerConfig = Annotated[
    Annotated[McpStdioServer, Tag("stdio")] | Annotated[McpHttpServer, Tag("http")],
    Discriminator(
        _server_kind,
        custom_error_type="mcp_server",
        custom_error_message="an MCP server needs 'command' (stdio) or 'url' (streamable HTTP); 'type' is stdio or http",
    ),
]


def check_server_names(servers: dict[str, Any]) -> dict[str, Any]:
    """Raise ``ValueError`` for a server name that cannot become part of a tool name."""
    for name in servers:
        if not isinstance(name, str) or not _NAME.match(name) or "__" in name:
            raise ValueError(
                f"MCP server name {name!r} must be letters, digits, '_' or '-' (at most 48, starting with a letter or digit, no '__')"
            )
    return servers


def resolve_servers(
    servers: Mapping[str, McpStdioServer | McpHttpServer], environ: Mapping[str, str]
) -> dict[str, McpStdioServer | McpHttpServer]:
    """Every server with its ``${VAR}`` references replaced from ``environ`` (:class:`McpConfigError` for an unset one)."""
    return {name: server.resolved(environ, f"mcp_servers.{name}") for name, server in servers.items()}


def server_secrets(servers: Mapping[str, McpStdioServer | McpHttpServer]) -> list[str]:
    """Every value of every server that must reach no log or artifact, longest first (for scrubbing)."""
    found = {secret for server in servers.values() for secret in server.secrets() if len(secret) >= 4}
    return sorted(found, key=len, reverse=True)


def redact_mcp_servers(agent_config: dict[str, Any]) -> dict[str, Any]:
    """``agent_config`` (a dumped agent config) with each literal ``env``/``headers`` value of its MCP servers
    replaced by :data:`REDACTED`; values that only name variables (``${VAR}``, ``Bearer ${VAR}``) are kept."""
    servers = agent_config.get("mcp_servers")
    if not isinstance(servers, dict) or not servers:
        return agent_config
    redacted: dict[str, Any] = {}
    for name, server in servers.items():
        if isinstance(server, dict):
            server = dict(server)
            for key in ("env", "headers"):
                if isinstance(server.get(key), dict):
                    server[key] = {k: _redact_value(v) for k, v in server[key].items()}
        redacted[name] = server
    return {**agent_config, "mcp_servers": redacted}


def _redact_value(value: Any) -> Any:
    """A literal value masked; one that takes its secret from ``${VAR}`` kept as written."""
    if not isinstance(value, str) or _REFERENCE.search(value) or not value:
        return value
    return REDACTED


def write_private_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` readable by its owner only (0600 from creation on, never wider), replacing it
    atomically: how an agent hands a CLI a config file that holds MCP secrets, inside its private state directory."""
    import os
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # mkstemp creates it 0600
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
