"""Serving the report on 127.0.0.1 with the standard library's HTTP server.

The server answers only requests addressed to itself: a ``Host`` header naming
``127.0.0.1``, ``localhost`` or ``[::1]`` with the server's own port (no port only
when that port is 80). Any other host is refused with 421, so a web page whose
domain is rebound to 127.0.0.1 (DNS rebinding) cannot read the report. ``HEAD``
answers with the headers ``GET`` would send, and no body.
"""

from __future__ import annotations

import re
import sys
import threading
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agentrig.boundary import shorten
from agentrig.view.render import Report, Response

HOST = "127.0.0.1"
#: The host names this server answers to (a ``Host`` header's name, compared without case).
LOCAL_NAMES = ("127.0.0.1", "localhost", "[::1]")
#: Characters of a requested path quoted in the 404 page, at most.
PATH_QUOTE_MAX = 200
_HOST_HEADER = re.compile(r"(\[::1\]|[A-Za-z0-9.]+)(?::([0-9]{1,5}))?", re.ASCII)


def host_allowed(host: str | None, port: int) -> bool:
    """Whether a request's ``Host`` header addresses this server on ``port``: one of
    :data:`LOCAL_NAMES` followed by ``:port`` (or no port at all when ``port`` is 80)."""
    if host is None:
        return False
    match = _HOST_HEADER.fullmatch(host)
    if match is None or match.group(1).lower() not in LOCAL_NAMES:
        return False
    given = match.group(2)
    return int(given) == port if given is not None else port == 80


def _misdirected(port: int) -> Response:
    body = f"agentrig view answers only to http://{HOST}:{port}/ and http://localhost:{port}/\n"
    return Response(body.encode("utf-8"), "text/plain; charset=utf-8", 421)


def _not_found(path: str) -> Response:
    shown = escape(shorten(path, PATH_QUOTE_MAX))
    body = (f"<!doctype html><title>not found</title><p>No page {shown} in this report."
            " <a href='/index.html'>All results</a></p>")
    return Response(body.encode("utf-8"), "text/html; charset=utf-8", 404)


def _failed(exc: BaseException) -> Response:
    from agentrig.cli.output import describe_exception

    text = escape(describe_exception(exc))
    body = f"<!doctype html><title>error</title><p>This page could not be rendered: {text}</p>"
    return Response(body.encode("utf-8"), "text/html; charset=utf-8", 500)


def make_server(report: Report, port: int = 0) -> ThreadingHTTPServer:
    """An HTTP server for ``report`` bound to 127.0.0.1:``port`` (0: a free port), not yet serving."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "agentrig-view"

        def _respond(self, body: bool) -> None:
            own_port = server.server_port
            hosts = self.headers.get_all("Host") or []
            if len(hosts) != 1 or not host_allowed(hosts[0], own_port):
                response = _misdirected(own_port)
            else:
                try:
                    response = report.render(self.path) or _not_found(self.path)
                except Exception as exc:  # a page that fails says so; the server keeps serving
                    response = _failed(exc)
            self.send_response(response.status)
            self.send_header("Content-Type", response.content_type)
            self.send_header("Content-Length", str(len(response.body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            if body:
                self.wfile.write(response.body)

        def do_GET(self) -> None:
            self._respond(body=True)

        def do_HEAD(self) -> None:
            self._respond(body=False)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer((HOST, port), Handler)
    server.daemon_threads = True
    return server


def url_of(server: ThreadingHTTPServer) -> str:
    """``http://127.0.0.1:PORT/``."""
    return f"http://{HOST}:{server.server_address[1]}/"


def serve(report: Report, port: int = 0, open_browser: bool = True) -> None:
    """Serve ``report`` until interrupted, printing the URL (and opening it unless ``open_browser`` is false)."""
    server = make_server(report, port)
    url = url_of(server)
    try:  # from the line that says Ctrl-C stops it on: a Ctrl-C right after it is a stop too (exit 0)
        print(f"agentrig view: serving {url} (Ctrl-C to stop)", flush=True)
        if open_browser:
            import webbrowser

            threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        print("agentrig view: stopped", file=sys.stderr)
    finally:
        server.server_close()
