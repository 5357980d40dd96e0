"""A real MCP server for tests, built with the official ``mcp`` SDK: ``python -m agentrig.testing.mcp_server``.

It serves over stdio (the default) or streamable HTTP (``--transport http``,
on 127.0.0.1 and an ephemeral port unless told: the first line it prints is
``MCP_URL <url>``). Its tools act on its root directory (``--root``, default
its working directory, which an agent sets to the workspace):

- ``write_file(path, content)`` writes a file under the root: the side effect a
  test looks for in the workspace;
- ``fail(message)`` always fails: the error an agent must hand back as a tool result;
- ``add(a, b)`` returns the sum (a call without side effect);
- ``env_digest(name)`` returns the SHA-256 of the server's environment
  variable ``name`` (or ``unset``): a test proves a secret reached the
  server without the secret itself appearing in any transcript.

With ``AGENTRIG_MCP_TOKEN`` in its environment the HTTP server answers only
requests carrying ``Authorization: Bearer <that token>`` (401 otherwise): a test
of configured headers. ``--pid-file`` writes the server's pid, so a test can
check that the agent stopped it.

:class:`McpHttpServerProcess` starts the HTTP form as a subprocess for a test;
:func:`stdio_server` is the ``mcp_servers`` entry of the stdio form.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

#: The server's name, as it introduces itself.
SERVER_NAME = "agentrig-test-mcp"
#: The environment variable holding the bearer token the HTTP server requires (when set).
TOKEN_ENV = "AGENTRIG_MCP_TOKEN"
#: The line the HTTP server prints first, followed by its URL.
URL_LINE = "MCP_URL "


def build_server(root: Path) -> MCPServer:
    """The MCP server with its four tools acting on ``root``."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from agentrig.boundary import BoundaryError, resolve_inside

    server: MCPServer = MCPServer(SERVER_NAME, instructions="Test tools of agentrig.", log_level="WARNING")

    @server.tool(description="Write `content` to the file `path` (relative to the workspace); returns what it wrote.")
    def write_file(path: str, content: str) -> str:
        try:
            target = resolve_inside(root, path, "write_file: path")
        except BoundaryError as exc:
            raise ToolError(str(exc)) from None
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        return f"wrote {len(content.encode('utf-8'))} bytes to {path}"

    @server.tool(description="Always fails with `message` (a tool error).")
    def fail(message: str) -> str:
        raise ToolError(f"fail: {message}")

    @server.tool(description="The sum of a and b.")
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(description="The SHA-256 (hex) of the server's environment variable `name`, or 'unset'.")
    def env_digest(name: str) -> str:
        value = os.environ.get(name)
        return "unset" if value is None else hashlib.sha256(value.encode("utf-8")).hexdigest()

    return server


def _with_token_check(app: Any, token: str) -> Any:
    """``app`` answering 401 to a request without ``Authorization: Bearer <token>``."""
    from starlette.responses import PlainTextResponse

    expected = f"Bearer {token}".encode()

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope.get("headers") or []).get(b"authorization") != expected:
            await PlainTextResponse("missing or wrong bearer token", status_code=401)(scope, receive, send)
            return
        await app(scope, receive, send)

    return guarded


def _serve_http(server: MCPServer, host: str, port: int) -> None:
    """Serve streamable HTTP on ``host:port`` (0: any free port), printing the URL first."""
    import socket

    import anyio
    import uvicorn

    app: Any = server.streamable_http_app(host=host)
    token = os.environ.get(TOKEN_ENV)
    if token:
        app = _with_token_check(app, token)
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)  # before the URL is out: a client connecting before uvicorn serves waits, is not refused
    bound = sock.getsockname()[1]
    print(f"{URL_LINE}http://{host}:{bound}/mcp", flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    anyio.run(lambda: uvicorn.Server(config).serve(sockets=[sock]))


def main(argv: list[str] | None = None) -> int:
    """Run the server until its input closes (stdio) or it is killed (HTTP)."""
    parser = argparse.ArgumentParser(prog="python -m agentrig.testing.mcp_server", description=__doc__.split("\n")[0])
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--root", type=Path, default=None, help="Directory the tools act on (default: the working directory).")
    parser.add_argument("--pid-file", type=Path, default=None, help="Write the server's pid here.")
    args = parser.parse_args(argv)
    if args.pid_file is not None:
        args.pid_file.write_text(f"{os.getpid()}\n")
    server = build_server((args.root or Path.cwd()).resolve())
    if args.transport == "http":
        _serve_http(server, args.host, args.port)
    else:
        server.run("stdio")
    return 0


def stdio_server(*extra_args: str, python: str | None = None, env: dict[str, str] | None = None) -> dict[str, Any]:
    """The ``mcp_servers`` entry starting this server over stdio with ``python`` (default: this interpreter)."""
    entry: dict[str, Any] = {
        "command": python or sys.executable,
        "args": ["-m", "agentrig.testing.mcp_server", *extra_args],
    }
    if env:
        entry["env"] = dict(env)
    return entry


class McpHttpServerProcess:
    """The HTTP form of the server in a subprocess (its own process group); :attr:`url` once started.

    Use as a context manager; leaving it kills the process and waits for it.
    """

    def __init__(self, root: Path, *, host: str = "127.0.0.1", env: dict[str, str] | None = None) -> None:
        """Nothing starts until :meth:`start` (or ``with``)."""
        self.root, self.host = root, host
        self.env = {**os.environ, **(env or {})}
        self.process: subprocess.Popen[str] | None = None
        self.url = ""

    def start(self, timeout: float = 30.0) -> McpHttpServerProcess:
        """Start the server and read its URL; ``RuntimeError`` with its stderr when it does not come up."""
        import selectors

        self.process = subprocess.Popen(
            [sys.executable, "-m", "agentrig.testing.mcp_server", "--transport", "http", "--host", self.host,
             "--root", str(self.root)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env,
            start_new_session=True,
        )
        assert self.process.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(self.process.stdout, selectors.EVENT_READ)
        line = self.process.stdout.readline() if selector.select(timeout) else ""
        selector.close()
        if not line.startswith(URL_LINE):
            self.stop()
            raise RuntimeError(f"the MCP test server did not start: {line!r} {self._stderr()}")
        self.url = line[len(URL_LINE):].strip()
        return self

    def _stderr(self) -> str:
        if self.process is None or self.process.stderr is None:
            return ""
        try:
            return self.process.stderr.read()[-2000:]
        except ValueError:
            return ""

    def stop(self) -> None:
        """Kill the server's process group and wait for it."""
        import signal

        if self.process is None:
            return
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait(timeout=30)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()

    def __enter__(self) -> McpHttpServerProcess:
        """Start it."""
        return self.start()

    def __exit__(self, *exc: object) -> None:
        """Stop it."""
        self.stop()


if __name__ == "__main__":
    sys.exit(main())
