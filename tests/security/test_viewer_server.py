"""The served report (``agentrig view RUN_DIR``) against requests a hostile web page or a crafted link can
make: a real server on 127.0.0.1, real HTTP requests with the headers a browser would send."""

from __future__ import annotations

import http.client
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentrig.testing.runs import outcome_run
from agentrig.view.render import Report
from agentrig.view.server import make_server

SECRET = "top-secret-outside-the-run"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A served report of one run, and the run directory; a secret file lies beside the run."""
    run = outcome_run(tmp_path / "run")
    (tmp_path / "secret.txt").write_text(SECRET)
    served = make_server(Report([run]))
    thread = threading.Thread(target=served.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield served.server_address[1], run
    finally:
        served.shutdown()
        served.server_close()


def request(port: int, path: str, host: str | None = "default", method: str = "GET",
            extra_hosts: tuple[str, ...] = ()) -> tuple[int, dict[str, str], bytes]:
    """``(status, headers, body)`` of one request with ``Host: host`` (``None``: no Host header)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        if host is not None:
            connection.putheader("Host", f"127.0.0.1:{port}" if host == "default" else host)
        for other in extra_hosts:
            connection.putheader("Host", other)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def raw_exchange(port: int, head: bytes) -> bytes:
    """Everything the server sends back for the raw request ``head`` (HTTP/1.0: it closes when done)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    return received


def test_dns_rebinding_a_foreign_host_header_gets_no_page(server: tuple[int, Path]) -> None:
    port, _run = server
    refused = [
        "evil.example", f"evil.example:{port}", f"127.0.0.1.evil.example:{port}", f"localhost.evil.example:{port}",
        "127.0.0.1", "localhost", f"localhost:{port + 1}", f"127.0.0.1:{port}0", f"0.0.0.0:{port}",
        f"127.0.0.2:{port}", f"[::2]:{port}", f"user@127.0.0.1:{port}", f"127.0.0.1:{port}/x", "",
    ]
    for host in refused:
        status, _headers, body = request(port, "/index.html", host)
        assert status == 421, host
        assert b"<table" not in body and b"alpha" not in body, host
        assert len(body) < 200 and b"answers only to" in body
    assert request(port, "/index.html", None)[0] == 421  # no Host header at all
    assert request(port, "/index.html", extra_hosts=("evil.example",))[0] == 421  # two Host headers
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}", f"[::1]:{port}"):
        status, _headers, body = request(port, "/index.html", host)
        assert status == 200 and b"alpha" in body, host


def test_404_page_does_not_echo_markup_from_the_path(server: tuple[int, Path]) -> None:
    port, _run = server
    status, _headers, body = request(port, "/<script>alert(1)</script><img/src=x/onerror=alert(2)>")  # sent raw
    assert status == 404
    assert b"<script>" not in body and b"<img" not in body
    assert b"&lt;script&gt;alert(1)&lt;/script&gt;" in body
    status, _headers, body = request(port, "/%3Cscript%3Ealert(1)%3C/script%3E")  # as a browser sends it
    assert status == 404 and b"<script>" not in body
    status, _headers, body = request(port, "/" + "a" * 20_000)
    assert status == 404 and len(body) < 600  # the quoted path is cut


@pytest.mark.parametrize("path", [
    "/runs/%C2%B2/alpha/first.html",  # superscript two: str.isdigit() is true, int() fails
    "/runs/1/alpha/first.p%C2%B2.html",
    "/runs/%D9%A1/alpha/first.html",  # ARABIC-INDIC DIGIT ONE: int() reads it as 1
    "/runs/%EF%BC%91/alpha/first.html",  # FULLWIDTH DIGIT ONE
    "/runs/" + "9" * 5000 + "/alpha/first.html",  # more digits than int() converts
    "/runs/1/alpha/first.p" + "9" * 5000 + ".html",
    "/runs/+1/alpha/first.html",
    "/runs/1_0/alpha/first.html",
])
def test_route_numbers_that_are_not_ascii_digits_are_not_found_not_an_error(server: tuple[int, Path], path: str) -> None:
    port, _run = server
    status, _headers, body = request(port, path)
    assert status == 404, body[:300]
    assert request(port, "/runs/1/alpha/first.html")[0] == 200  # the page itself is there


def test_head_sends_headers_only(server: tuple[int, Path]) -> None:
    port, _run = server
    for path in ("/index.html", "/runs/1/alpha/first.html", "/assets/app.js", "/nothing-here"):
        get = raw_exchange(port, f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        head = raw_exchange(port, f"HEAD {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        get_head, _, get_body = get.partition(b"\r\n\r\n")
        head_head, _, head_body = head.partition(b"\r\n\r\n")
        assert head_body == b"", path
        assert head_head.split(b"\r\n")[0] == get_head.split(b"\r\n")[0], path  # same status line
        length = [line for line in head_head.split(b"\r\n") if line.lower().startswith(b"content-length:")]
        assert length == [f"Content-Length: {len(get_body)}".encode()], path


@pytest.mark.parametrize("path", [
    "/../secret.txt", "/..%2fsecret.txt", "/..%2f..%2f..%2fetc%2fpasswd", "/%2e%2e/secret.txt", "/%2e%2e%2fsecret.txt",
    "/assets/../../secret.txt", "/assets/..%2f..%2fsecret.txt", "/assets/%2e%2e%2f%2e%2e%2fsecret.txt",
    "/assets//etc/passwd", "//etc/passwd", "/%2fetc%2fpasswd", "/etc/passwd", "/runs/1/..%2f..%2fsecret.txt",
    "/runs/1/alpha/..%2f..%2f..%2fsecret.txt", "/runs/1/..~..~secret/x.html", "/runs/1/alpha/first/trajectory.jsonl",
    "/run.json", "/results.jsonl", "/alpha/first/prompt.txt", "/assets/app.js%00.html", "/index.html/../../secret.txt",
    "http://127.0.0.1/../secret.txt",
])
def test_traversal_paths_serve_nothing_outside_the_pages(server: tuple[int, Path], path: str) -> None:
    port, _run = server
    status, _headers, body = request(port, path)
    assert status == 404, path
    assert SECRET.encode() not in body and b"root:" not in body and b"run_id" not in body
