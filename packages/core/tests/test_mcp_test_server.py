"""The test kit's MCP server (``python -m agentrig.testing.mcp_server``), driven by the official SDK's client."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

import anyio

from agentrig.testing.mcp_server import McpHttpServerProcess, stdio_server


async def _exercise(read: Any, write: Any) -> dict[str, Any]:
    from mcp import ClientSession

    async with ClientSession(read, write) as session:
        await session.initialize()
        names = sorted(tool.name for tool in (await session.list_tools()).tools)
        wrote = await session.call_tool("write_file", {"path": "sub/out.txt", "content": "from mcp\n"})
        failed = await session.call_tool("fail", {"message": "on purpose"})
        escaped = await session.call_tool("write_file", {"path": "../escape.txt", "content": "x"})
        added = await session.call_tool("add", {"a": 2, "b": 40})
        digest = await session.call_tool("env_digest", {"name": "MCP_TEST_SECRET"})
    text = lambda result: result.content[0].text  # noqa: E731
    return {
        "names": names, "wrote": (wrote.is_error, text(wrote)), "failed": (failed.is_error, text(failed)),
        "escaped": (escaped.is_error, text(escaped)), "added": text(added), "digest": text(digest),
    }


def _check(outcome: dict[str, Any], root: Path, secret: str) -> None:
    assert outcome["names"] == ["add", "env_digest", "fail", "write_file"]
    assert outcome["wrote"] == (False, "wrote 9 bytes to sub/out.txt")
    assert (root / "sub" / "out.txt").read_text() == "from mcp\n"
    assert outcome["failed"][0] is True and "fail: on purpose" in outcome["failed"][1]
    assert outcome["escaped"][0] is True and not (root.parent / "escape.txt").exists()
    assert outcome["added"] == "42"
    assert outcome["digest"] == hashlib.sha256(secret.encode()).hexdigest()


def test_stdio_server_tools_act_in_its_working_directory(tmp_path: Path) -> None:
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    root = tmp_path / "ws"
    root.mkdir()
    entry = stdio_server("--pid-file", str(tmp_path / "pid"), env={"MCP_TEST_SECRET": "s3cret-stdio"})
    assert entry["command"] == sys.executable

    async def main() -> dict[str, Any]:
        params = StdioServerParameters(command=entry["command"], args=entry["args"], env=entry["env"], cwd=root)
        async with stdio_client(params) as (read, write):
            return await _exercise(read, write)

    _check(anyio.run(main), root, "s3cret-stdio")
    pid = int((tmp_path / "pid").read_text())
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()


def test_http_server_requires_its_bearer_token(tmp_path: Path) -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async def main(url: str, headers: dict[str, str]) -> dict[str, Any]:
        async with httpx2.AsyncClient(headers=headers) as client, streamable_http_client(url, http_client=client) as streams:
            return await _exercise(streams[0], streams[1])

    env = {"AGENTRIG_MCP_TOKEN": "tok-http-1", "MCP_TEST_SECRET": "s3cret-http"}
    with McpHttpServerProcess(tmp_path, env=env) as server:
        assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/mcp")
        _check(anyio.run(main, server.url, {"Authorization": "Bearer tok-http-1"}), tmp_path, "s3cret-http")
        response = httpx2.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert response.status_code == 401
    assert server.process is not None and server.process.poll() is not None
