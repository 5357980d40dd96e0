"""The react agent's MCP client: each configured server's tools offered next to react's own.

Through the official ``mcp`` SDK (imported only when servers are configured).
The SDK is asynchronous and the agent is not: one event loop runs in a thread
of its own (an anyio blocking portal) for as long as the agent holds the
connections, and every call into it blocks the calling thread (several tool
threads may call at once). A stdio server is started on the host, in the
workspace, with the SDK's minimal environment plus its ``env``, in a process
group of its own; under a local runtime with ``sandbox: bwrap`` it starts in the
same kind of bubblewrap sandbox as the agent's commands (the runtime's
:meth:`~agentrig.runtime.local.LocalRuntime.sandbox_spec`, showing what the server
needs to start: :func:`~agentrig.runtime.sandbox.with_startup`). It is stopped when
the connections close (the agent's ``cleanup``, or the run's teardown on
SIGINT/SIGTERM), and it ends by itself when agentrig dies, as its standard
input closes (a sandbox's ``bwrap`` dies with its parent too). Its standard
error goes to ``mcp-SERVER.stderr.log`` in the agent's scratch directory, which
:func:`save_stderr_logs` copies, scrubbed, into a checkpoint's artifacts.

A tool ``T`` of server ``S`` is offered as ``mcp__S__T`` (characters a model
API refuses become ``_``; a name over 64 characters is shortened with a hash).
Its result's text reaches the model as the tool result, an ``isError`` result
as an error result.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pydantic import BaseModel, ConfigDict

from agentrig_react.context import ToolContext, ToolError
from agentrig_react.registry import Tool, ToolOutput

if TYPE_CHECKING:
    from agentrig.agents.mcp import McpHttpServer, McpStdioServer
    from agentrig.runtime.sandbox import BwrapSpec

#: The prefix of every MCP tool's name (``mcp__SERVER__TOOL``), as Claude Code names them too.
PREFIX = "mcp__"
_INVALID = re.compile(r"[^A-Za-z0-9_-]")


class McpStartError(Exception):
    """A server could not be started or listed; the message names the server and says why, on one line."""


def tool_name(server: str, tool: str) -> str:
    """The name the model sees for ``tool`` of ``server``: ``mcp__server__tool``, at most 64 characters."""
    name = f"{PREFIX}{server}__{_INVALID.sub('_', tool)}"
    if len(name) <= 64:
        return name
    digest = hashlib.sha256(tool.encode("utf-8")).hexdigest()[:8]
    return f"{name[:55]}_{digest}"


def server_of(name: str) -> str | None:
    """The server an allow-list entry (``mcp__S`` or ``mcp__S__T``) names, or ``None`` for another entry."""
    if not name.startswith(PREFIX):
        return None
    return name[len(PREFIX):].split("__", 1)[0] or None


class _McpArguments(BaseModel):
    """Whatever the model passed: the server validates against its own schema and says what is wrong."""

    model_config = ConfigDict(extra="allow")


class McpTool(Tool):
    """One tool of an MCP server, as react offers it: the server's schema, called through the connections."""

    def __init__(self, connections: McpConnections, server: str, remote: Any) -> None:
        """Wrap ``remote`` (an ``mcp.types.Tool`` of ``server``)."""
        self.server, self.remote_name = server, str(remote.name)
        self._schema: dict[str, Any] = dict(remote.input_schema or {"type": "object", "properties": {}})
        self._connections = connections
        description = (remote.description or "").strip() or f"The '{remote.name}' tool of the MCP server '{server}'."
        super().__init__(tool_name(server, self.remote_name), description, _McpArguments, self._run)

    @property
    def parameters(self) -> dict[str, Any]:
        """The server's own JSON schema of the arguments."""
        schema = {k: v for k, v in self._schema.items() if k not in ("title", "$schema")}
        schema.setdefault("type", "object")
        schema.setdefault("properties", {})
        return schema

    def _run(self, context: ToolContext, arguments: BaseModel) -> ToolOutput:
        return self._connections.call(self.server, self.remote_name, dict(arguments.model_extra or {}))


def result_text(result: Any) -> str:
    """The text of an MCP tool result: its text blocks, else its structured content, else a note per block."""
    import json

    parts: list[str] = []
    for block in result.content or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource" and getattr(block.resource, "text", None) is not None:
            parts.append(block.resource.text)
        else:
            parts.append(f"[{kind or 'unknown'} content not shown]")
    if not parts and getattr(result, "structured_content", None) is not None:
        parts.append(json.dumps(result.structured_content))
    return "\n".join(parts)


class McpConnections:
    """The live connections to a run's MCP servers; :meth:`open`, then :meth:`call`, then :meth:`close`."""

    def __init__(
        self, servers: dict[str, McpStdioServer | McpHttpServer], cwd: Path, logs: Path, *, sandbox: BwrapSpec | None = None
    ) -> None:
        """``servers`` resolved (``${VAR}`` replaced); stdio servers start in ``cwd`` (inside the bubblewrap
        sandbox ``sandbox`` describes, when given), their stderr goes to ``logs``."""
        self.servers, self.cwd, self.logs, self.sandbox = servers, cwd, logs, sandbox
        self.tools: list[McpTool] = []
        self._sessions: dict[str, Any] = {}
        self._stack = contextlib.ExitStack()
        self._portal: Any = None

    def open(self) -> list[McpTool]:
        """Start every server and list its tools; :class:`McpStartError` (with all started ones stopped) on failure."""
        from anyio.from_thread import start_blocking_portal

        try:
            self._portal = self._stack.enter_context(start_blocking_portal())
            for name, server in self.servers.items():
                self._open_one(name, server)
        except BaseException:
            self.close()
            raise
        return self.tools

    def _open_one(self, name: str, server: McpStdioServer | McpHttpServer) -> None:
        argv = self._stdio_argv(name, server) if server.type == "stdio" else []
        try:
            session = self._stack.enter_context(self._portal.wrap_async_context_manager(self._connect(name, server, argv)))
            listed = self._portal.call(_list_tools, session, server.startup_timeout)
        except McpStartError:
            raise
        except Exception as exc:
            raise McpStartError(f"mcp_servers.{name}: could not start or list its tools: {_one_line(exc)}") from None
        self._sessions[name] = session
        taken = {tool.name for tool in self.tools}
        for remote in listed:
            made = McpTool(self, name, remote)
            if made.name in taken:
                raise McpStartError(f"mcp_servers.{name}: two tools become '{made.name}': rename one")
            taken.add(made.name)
            self.tools.append(made)

    def _stdio_argv(self, name: str, server: McpStdioServer) -> list[str]:
        """The command line starting ``server``: in its bubblewrap sandbox (showing what the server needs to start)
        when there is one; :class:`McpStartError` when that cannot be shown safely."""
        argv = [server.command, *server.args]
        if self.sandbox is None:
            return argv
        import os

        from agentrig.runtime.sandbox import SandboxStartError, bwrap_argv, with_startup

        # the SDK hands the server the host's PATH unless its env sets one
        search_path = server.env.get("PATH") or os.environ.get("PATH", os.defpath)
        try:
            spec = with_startup(self.sandbox, argv, search_path=search_path, cwd=str(self.cwd))
        except SandboxStartError as exc:
            raise McpStartError(f"mcp_servers.{name}: {exc}") from None
        return bwrap_argv(spec, argv)

    @contextlib.asynccontextmanager
    async def _connect(self, name: str, server: McpStdioServer | McpHttpServer, argv: list[str]) -> AsyncIterator[Any]:
        import anyio
        from mcp import ClientSession

        async with contextlib.AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(self._transport(name, server, argv, stack))
            session = await stack.enter_async_context(ClientSession(read, write))
            with anyio.fail_after(server.startup_timeout):
                await session.initialize()
            yield session

    @contextlib.asynccontextmanager
    async def _transport(
        self, name: str, server: McpStdioServer | McpHttpServer, argv: list[str], stack: contextlib.AsyncExitStack
    ) -> AsyncIterator[tuple[Any, Any]]:
        if server.type == "stdio":
            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client

            command, *args = argv
            params = StdioServerParameters(command=command, args=args, env=dict(server.env), cwd=self.cwd)
            async with stdio_client(params, errlog=self._errlog(name)) as (read, write):
                yield read, write
            return
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        client = await stack.enter_async_context(httpx2.AsyncClient(headers=dict(server.headers), timeout=server.tool_timeout))
        async with streamable_http_client(server.url, http_client=client) as streams:
            yield streams[0], streams[1]

    def _errlog(self, name: str) -> TextIO:
        self.logs.mkdir(parents=True, exist_ok=True)
        return self._stack.enter_context(open(self.logs / f"mcp-{name}.stderr.log", "a", encoding="utf-8"))

    def call(self, server: str, tool: str, arguments: dict[str, Any]) -> ToolOutput:
        """Call ``tool`` of ``server``; its result (an error result for ``isError``), or :class:`ToolError`."""
        session = self._sessions.get(server)
        if session is None or self._portal is None:
            raise ToolError(f"the MCP server '{server}' is not running")
        timeout = self.servers[server].tool_timeout
        try:
            result = self._portal.call(_call_tool, session, tool, arguments, timeout)
        except TimeoutError:
            raise ToolError(f"the MCP server '{server}' did not answer {tool} within {timeout:g} s") from None
        except Exception as exc:
            raise ToolError(f"the MCP server '{server}' failed on {tool}: {_one_line(exc)}") from None
        return ToolOutput(content=result_text(result), is_error=bool(result.is_error))

    def close(self) -> None:
        """Close every connection and stop every stdio server (process group); idempotent, any thread."""
        self._sessions = {}
        stack, self._stack = self._stack, contextlib.ExitStack()
        try:
            stack.close()
        except Exception:  # a server that fails while being stopped is still stopped (killed by its group)
            pass
        self._portal = None

    def __iter__(self) -> Iterator[McpTool]:
        return iter(self.tools)


def save_stderr_logs(logs: Path, artifacts: Path, secrets: list[str]) -> None:
    """Copy each server's standard error so far (``logs/mcp-SERVER.stderr.log``) into ``artifacts/mcp/``, every
    secret (the servers' ``env``/``headers`` values, the model's key) replaced by ``[REDACTED]``."""
    from agentrig.atomic import write_text_atomic
    from agentrig.credentials import redact

    for log in sorted(logs.glob("mcp-*.stderr.log")) if logs.is_dir() else []:
        text = log.read_text(encoding="utf-8", errors="replace")
        (artifacts / "mcp").mkdir(parents=True, exist_ok=True)
        write_text_atomic(artifacts / "mcp" / log.name, redact(text, secrets))


async def _list_tools(session: Any, timeout: float) -> list[Any]:
    import anyio
    from mcp.types import PaginatedRequestParams

    with anyio.fail_after(timeout):
        tools: list[Any] = []
        cursor = None
        while True:
            page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
            tools.extend(page.tools)
            cursor = getattr(page, "next_cursor", None)
            if not cursor:
                return tools


async def _call_tool(session: Any, tool: str, arguments: dict[str, Any], timeout: float) -> Any:
    import anyio

    with anyio.fail_after(timeout):
        return await session.call_tool(tool, arguments)


def _one_line(exc: BaseException) -> str:
    """An exception (or the first of an exception group) on one line."""
    inner = getattr(exc, "exceptions", None)
    while inner:  # an exception group (anyio's task groups raise them): its first
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]
