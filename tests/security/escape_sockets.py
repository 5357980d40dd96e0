"""Real listening sockets for the escape tests, and the probe a confined command runs against them.

Each listener accepts in a thread of its own and counts the connections it
accepted: a test asserts on what the listener saw, not only on what the
probe printed.
"""

from __future__ import annotations

import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: Run by a confined ``python -I -S -c PROBE KIND ADDRESS``: prints ``CONNECTED`` or ``REFUSED <reason>``.
PROBE = """
import socket, sys
kind, address = sys.argv[1], sys.argv[2]
try:
    if kind == "tcp":
        s = socket.create_connection(("127.0.0.1", int(address)), timeout=5)
    else:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect(address if kind == "unix" else "\\0" + address)
except OSError as exc:
    print("REFUSED", type(exc).__name__, exc)
    raise SystemExit(0)
try:  # a Docker engine answers its ping; the test listeners close at once
    s.sendall(b"GET /_ping HTTP/1.0\\r\\n\\r\\n")
    print("CONNECTED", s.recv(200))
except OSError as exc:
    print("CONNECTED", "then", type(exc).__name__)
"""


class Listener:
    """A real listening socket on a thread of its own, counting the connections it accepted."""

    def __init__(self, family: int, address: object) -> None:
        """Bind and listen on ``address``."""
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        self.socket.bind(address)
        self.socket.listen(8)
        self.socket.settimeout(0.2)
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.socket.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            connection.close()

    def close(self) -> None:
        """Stop accepting (counting the connections still queued) and close the socket."""
        self._stop.set()
        self._thread.join()
        self.socket.setblocking(False)
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                break
            self.accepted += 1
            connection.close()
        self.socket.close()


@contextmanager
def tcp_listener() -> Iterator[tuple[Listener, str]]:
    """A TCP listener on the host's 127.0.0.1 and its port (as the probe's address)."""
    listener = Listener(socket.AF_INET, ("127.0.0.1", 0))
    try:
        yield listener, str(listener.socket.getsockname()[1])
    finally:
        listener.close()


@contextmanager
def abstract_listener() -> Iterator[tuple[Listener, str]]:
    """A listener on an abstract Unix socket (no file: only the network namespace holds its name)."""
    name = f"agentrig-test-{uuid.uuid4().hex}"
    listener = Listener(socket.AF_UNIX, "\0" + name)
    try:
        yield listener, name
    finally:
        listener.close()


@contextmanager
def unix_listener(path: Path) -> Iterator[tuple[Listener, str]]:
    """A listener on a pathname Unix socket at ``path`` (a stand-in for ``/var/run/docker.sock``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    listener = Listener(socket.AF_UNIX, str(path))
    try:
        yield listener, str(path)
    finally:
        listener.close()
        path.unlink(missing_ok=True)
