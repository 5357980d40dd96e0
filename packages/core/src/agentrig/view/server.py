"""Serving the report on 127.0.0.1 with the standard library's HTTP server."""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agentrig.view.render import Report, Response

HOST = "127.0.0.1"


def _not_found(path: str) -> Response:
    body = f"<!doctype html><title>not found</title><p>No page {path} in this report. <a href='/index.html'>All results</a></p>"
    return Response(body.encode("utf-8"), "text/html; charset=utf-8", 404)


def _failed(exc: BaseException) -> Response:
    from html import escape

    from agentrig.cli.output import describe_exception

    text = escape(describe_exception(exc))
    body = f"<!doctype html><title>error</title><p>This page could not be rendered: {text}</p>"
    return Response(body.encode("utf-8"), "text/html; charset=utf-8", 500)


def make_server(report: Report, port: int = 0) -> ThreadingHTTPServer:
    """An HTTP server for ``report`` bound to 127.0.0.1:``port`` (0: a free port), not yet serving."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "agentrig-view"

        def do_GET(self) -> None:  # noqa: N802 - the standard library's name
            try:
                response = report.render(self.path) or _not_found(self.path)
            except Exception as exc:  # a page that fails says so; the server keeps serving
                response = _failed(exc)
            self.send_response(response.status)
            self.send_header("Content-Type", response.content_type)
            self.send_header("Content-Length", str(len(response.body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(response.body)

        def do_HEAD(self) -> None:  # noqa: N802
            self.do_GET()

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet: the CLI prints the URL only
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
    print(f"agentrig view: serving {url} (Ctrl-C to stop)", flush=True)
    if open_browser:
        import webbrowser

        threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        print("agentrig view: stopped", file=sys.stderr)
    finally:
        server.server_close()
