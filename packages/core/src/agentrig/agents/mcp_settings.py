"""The ``mcpServers`` entries of the ``settings.json`` of Gemini CLI and of the CLIs derived from it (Qwen Code).

Both CLIs read the same keys for a server (their ``MCPServerConfig``): a stdio server's
``command``, ``args``, ``env`` and ``cwd``, a streamable HTTP server's ``httpUrl`` and
``headers``, a ``timeout`` in milliseconds and ``trust`` (no confirmation per call).
The agents of both write agentrig's resolved servers through :class:`SettingsMcpServer`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel

if TYPE_CHECKING:
    from collections.abc import Mapping

    from agentrig.agents.mcp import McpHttpServer, McpStdioServer


class SettingsMcpServer(BaseModel):
    """One server of the settings' ``mcpServers``, in the CLI's own keys: a stdio server (``command``,
    ``args``, ``env``, ``cwd``) or a streamable HTTP one (``httpUrl``, ``headers``); ``timeout`` in ms."""

    command: str | None = None
    args: list[str] | None = None
    env: dict[str, str] | None = None
    cwd: str | None = None
    httpUrl: str | None = None  # noqa: N815  # the CLI's own key
    headers: dict[str, str] | None = None
    timeout: int
    trust: bool = True  # no confirmation per call: agentrig's runtime is the sandbox

    @classmethod
    def of(cls, server: McpStdioServer | McpHttpServer, cwd: str | None) -> SettingsMcpServer:
        """The entry of a resolved agentrig server (stdio servers start in ``cwd``, the workspace)."""
        timeout = int(server.tool_timeout * 1000)
        if server.type == "stdio":
            return cls(command=server.command, args=server.args, env=server.env or None, cwd=cwd, timeout=timeout)
        return cls(httpUrl=server.url, headers=server.headers or None, timeout=timeout)


def settings_mcp_servers(
    servers: Mapping[str, McpStdioServer | McpHttpServer] | None, cwd: str | None
) -> dict[str, SettingsMcpServer] | None:
    """The ``mcpServers`` of resolved ``servers`` (stdio ones starting in ``cwd``); ``None`` when there are none."""
    return {name: SettingsMcpServer.of(server, cwd) for name, server in (servers or {}).items()} or None
