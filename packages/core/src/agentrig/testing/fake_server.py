"""The machinery shared by the fake model servers: a real HTTP server on
127.0.0.1 in a thread, a script of replies, a log of requests, faults.

A test scripts what the server answers, one item per model request, by
queueing :class:`FakeReply` (a provider-neutral reply the server renders in
its own API's format, streamed or not as the request asks), :class:`Fault`
(an HTTP error, a dropped connection), a raw JSON body, or a function of the
:class:`RecordedRequest` returning one of those. A function given to
:meth:`FakeModelServer.respond_with` answers every request the queue does
not. Every request is recorded, answered or not.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlsplit

from pydantic import BaseModel, ConfigDict, Field


class FakeToolCall(BaseModel):
    """A tool call the fake model makes. ``id`` is generated when omitted."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None
    raw_arguments: str | None = Field(
        default=None, description="Sent instead of the JSON of ``arguments`` (to script malformed arguments)."
    )
    namespace: str | None = Field(
        default=None,
        description="The Responses API's namespace of a namespaced tool (Codex offers an MCP server's tools in the "
        "namespace ``mcp__SERVER``); the other fakes ignore it.",
    )

    def arguments_json(self) -> str:
        """The argument text the server sends."""
        return self.raw_arguments if self.raw_arguments is not None else json.dumps(self.arguments)


class FakeUsage(BaseModel):
    """Token counts the server reports. ``input`` excludes cache reads and writes
    (the Anthropic convention); the OpenAI server adds ``cache_read`` into
    ``prompt_tokens`` as OpenAI does."""

    model_config = ConfigDict(extra="forbid")

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0


class FakeReply(BaseModel):
    """One model reply, rendered by each server in its API's shape.

    The stream controls apply when the request streams: ``event_delay`` sleeps
    before every event, ``stall_after_events`` stops sending (keeping the
    connection open) after that many events until the server closes, and
    ``drop_after_events`` closes the connection after that many events, and
    ``error_after_events`` sends the provider's in-stream error event of type
    ``stream_error_type`` instead of the rest (as an overloaded API does).
    ``delay`` sleeps before the response starts (streamed or not).
    """

    model_config = ConfigDict(extra="forbid")

    text: str = ""
    tool_calls: list[FakeToolCall] = Field(default_factory=list)
    thinking: str | None = None
    usage: FakeUsage | None = Field(default=None, description="Computed from the sizes of request and reply when None.")
    stop_reason: str | None = Field(default=None, description="Provider's own value; derived from the reply when None.")
    model: str | None = Field(default=None, description="Echoes the request's model when None.")
    delay: float = 0.0
    event_delay: float = 0.0
    stall_after_events: int | None = None
    drop_after_events: int | None = None
    error_after_events: int | None = None
    stream_error_type: str = "overloaded_error"
    headers: dict[str, str] = Field(default_factory=dict)


class Fault(BaseModel):
    """A failure instead of a reply.

    With ``status`` the server answers that HTTP status with the provider's
    error body (``error_type`` and ``message`` default per status) and, when
    set, a ``retry-after`` header. With ``drop`` it reads the request and
    closes the connection without answering. ``stall`` seconds (``inf``: until
    the server stops) pass before either, or before nothing when neither is set.
    """

    model_config = ConfigDict(extra="forbid")

    status: int | None = None
    retry_after: float | None = None
    error_type: str | None = None
    message: str | None = None
    drop: bool = False
    stall: float = 0.0
    headers: dict[str, str] = Field(default_factory=dict)


class RawResponse(BaseModel):
    """A response sent exactly as given: status, headers, and the JSON of
    ``body`` or, when set, ``text`` verbatim (raw SSE, say, with a
    ``content-type: text/event-stream`` header)."""

    model_config = ConfigDict(extra="forbid")

    status: int = 200
    body: Any = None
    text: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)


class RecordedRequest(BaseModel):
    """One request the server received: method, path, query, headers (lower-case
    names), and the JSON body (``None`` when empty or not JSON)."""

    model_config = ConfigDict(extra="forbid")

    method: str
    path: str
    query: dict[str, str] = Field(default_factory=dict)
    headers: dict[str, str] = Field(default_factory=dict)
    body: Any = None
    raw_body: str = ""

    @property
    def stream(self) -> bool:
        """Whether the request asked for a streamed (SSE) reply."""
        return isinstance(self.body, dict) and bool(self.body.get("stream"))

    @property
    def model(self) -> str | None:
        """The model the request named."""
        return self.body.get("model") if isinstance(self.body, dict) else None

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tool schemas the request offered."""
        return list(self.body.get("tools") or []) if isinstance(self.body, dict) else []


ScriptItem = FakeReply | Fault | RawResponse | dict[str, Any] | Callable[[RecordedRequest], Any]
"""What a test queues: a reply, a fault, a raw response or body, or a function of the request returning one."""


_Server = TypeVar("_Server", bound="FakeModelServer")


class _Stalled(Exception):
    """Raised inside a handler to abandon the connection without answering."""


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up (a killed agent, a timed-out SDK) is normal here, not a traceback on stderr."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def host_address() -> str:
    """This host's own address on its default route (no packet is sent): a container on any bridge network
    reaches it without NAT (``dockerd --iptables=false``), where 127.0.0.1 would be the container's own."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("198.51.100.1", 9))  # TEST-NET-2: routed by the default route, never a broadcast
        return str(probe.getsockname()[0])


class FakeModelServer(ABC):
    """A fake model provider on ``127.0.0.1`` (a random free port), in a thread.

    Use as a context manager or call :meth:`start` / :meth:`stop`. Thread safe:
    requests may arrive concurrently. Model-API requests left unscripted get a
    400 error naming the problem (and are listed in :attr:`unscripted`) so a
    test fails loudly instead of hanging.
    """

    #: Paths answered as model calls, e.g. ``/v1/messages``.
    model_paths: tuple[str, ...] = ()

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._script: deque[ScriptItem] = deque()
        self._handler: Callable[[RecordedRequest], Any] | None = None
        self._requests: list[RecordedRequest] = []
        self.unscripted: list[RecordedRequest] = []
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._counter = 0
        #: The address :meth:`start` binds: loopback; a test whose client runs in a container on a bridge
        #: network (a compose project's) sets the host's own address (:func:`host_address`) first.
        self.bind_host = "127.0.0.1"

    # -- lifecycle ---------------------------------------------------------

    def start(self: _Server) -> _Server:
        """Bind a free port on :attr:`bind_host` (127.0.0.1) and serve in a daemon thread."""
        if self._httpd is not None:
            return self
        server = self

        class Handler(_Handler):
            fake = server

        httpd = _QuietServer((self.bind_host, 0), Handler)
        httpd.daemon_threads = True
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, release stalled streams and close the socket."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self: _Server) -> _Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The TCP port the server listens on."""
        if self._httpd is None:
            raise RuntimeError("fake server is not started")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no path; the :attr:`bind_host`)."""
        return f"http://{self.bind_host}:{self.port}"

    @property
    @abstractmethod
    def base_url(self) -> str:
        """The base URL the provider's SDK takes (``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL`` form)."""

    # -- scripting ---------------------------------------------------------

    def enqueue(self, *items: ScriptItem) -> None:
        """Queue answers to the next model requests, in order."""
        with self._lock:
            self._script.extend(items)

    def add_reply(
        self,
        text: str = "",
        *,
        tool_calls: Iterable[FakeToolCall | dict[str, Any]] = (),
        thinking: str | None = None,
        usage: FakeUsage | dict[str, int] | None = None,
        **fields: Any,
    ) -> FakeReply:
        """Queue a reply with ``text`` and/or tool calls; returns it."""
        reply = FakeReply(
            text=text,
            tool_calls=[c if isinstance(c, FakeToolCall) else FakeToolCall.model_validate(c) for c in tool_calls],
            thinking=thinking,
            usage=FakeUsage.model_validate(usage) if isinstance(usage, dict) else usage,
            **fields,
        )
        self.enqueue(reply)
        return reply

    def add_tool_call(self, name: str, arguments: dict[str, Any] | None = None, *, text: str = "", **fields: Any) -> FakeReply:
        """Queue a reply calling one tool."""
        return self.add_reply(text, tool_calls=[FakeToolCall(name=name, arguments=arguments or {})], **fields)

    def add_fault(self, status: int | None = None, *, retry_after: float | None = None, **fields: Any) -> Fault:
        """Queue a fault (an HTTP status, ``drop=True``, ``stall=seconds``)."""
        fault = Fault(status=status, retry_after=retry_after, **fields)
        self.enqueue(fault)
        return fault

    def respond_with(self, handler: Callable[[RecordedRequest], Any] | None) -> None:
        """Answer every request the queue does not with ``handler(request)``."""
        with self._lock:
            self._handler = handler

    @property
    def pending(self) -> int:
        """How many queued items are still unanswered."""
        with self._lock:
            return len(self._script)

    # -- inspection --------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def model_requests(self) -> list[RecordedRequest]:
        """Only the model calls (``POST`` to the model paths)."""
        return [r for r in self.requests if r.method == "POST" and self.is_model_path(r.path)]

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Wait until ``count`` model requests arrived; returns them (raises TimeoutError)."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.model_requests
            if len(found) >= count:
                return found
            if time.monotonic() > deadline:
                raise TimeoutError(f"fake server got {len(found)} model requests, expected {count}")
            time.sleep(0.01)

    def clear(self) -> None:
        """Forget the recorded requests and the queue."""
        with self._lock:
            self._requests.clear()
            self._script.clear()
            self.unscripted.clear()

    # -- for the handler ---------------------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _next_item(self, request: RecordedRequest) -> Any:
        with self._lock:
            if self._script:
                item: Any = self._script.popleft()
            elif self._handler is not None:
                item = self._handler
            else:
                self.unscripted.append(request)
                return None
        # Functions run outside the lock: they may be slow or enqueue more.
        if callable(item) and not isinstance(item, BaseModel):
            item = item(request)
        return item

    def _new_id(self, prefix: str) -> str:
        with self._lock:
            self._counter += 1
            return f"{prefix}{self._counter:04d}{uuid.uuid4().hex[:16]}"

    def _sleep(self, seconds: float) -> None:
        """Sleep, waking early when the server stops (stalls end with the server)."""
        if seconds > 0:
            self._stopping.wait(None if seconds == float("inf") else seconds)

    # -- provider specifics --------------------------------------------------

    @abstractmethod
    def render_reply(self, request: RecordedRequest, reply: FakeReply) -> dict[str, Any]:
        """The non-streamed JSON body of ``reply``."""

    @abstractmethod
    def render_stream(self, request: RecordedRequest, reply: FakeReply) -> Iterator[bytes]:
        """The SSE events of ``reply``, one encoded event per item."""

    @abstractmethod
    def error_body(self, status: int, error_type: str | None, message: str | None) -> dict[str, Any]:
        """The provider's JSON error body."""

    @abstractmethod
    def stream_error(self, error_type: str, message: str) -> bytes:
        """The provider's error event inside a stream."""

    @abstractmethod
    def request_id_header(self) -> str:
        """The response header carrying the request id."""

    def stream_error_for(self, request: RecordedRequest, error_type: str, message: str) -> bytes:
        """The error event inside the stream answering ``request`` (a server with several
        endpoints picks its shape per endpoint); by default :meth:`stream_error`."""
        return self.stream_error(error_type, message)

    def is_model_path(self, path: str) -> bool:
        """Whether ``path`` is a model call's (one of :attr:`model_paths`; a server whose paths
        carry the model's name, as Gemini's do, matches them its own way)."""
        return path in self.model_paths

    def wants_stream(self, request: RecordedRequest) -> bool:
        """Whether ``request`` asks for a streamed reply: its body's ``stream`` by default (an API
        that streams by path, as Gemini's ``:streamGenerateContent``, says so its own way)."""
        return request.stream

    def handle_other(self, request: RecordedRequest) -> RawResponse | None:
        """Answer requests to paths other than the model paths (``None``: 404)."""
        return None

    def usage_for(self, request: RecordedRequest, reply: FakeReply) -> FakeUsage:
        """The reply's usage, or a deterministic estimate from the sizes (4 chars a token)."""
        if reply.usage is not None:
            return reply.usage
        output = len(reply.text) + len(reply.thinking or "") + sum(len(c.arguments_json()) + len(c.name) for c in reply.tool_calls)
        return FakeUsage(input=max(1, len(request.raw_body) // 4), output=max(1, output // 4))


class _Handler(BaseHTTPRequestHandler):
    fake: FakeModelServer
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # Headers and body leave in separate writes: without TCP_NODELAY, Nagle's
        # algorithm holds the body back until the client's delayed ACK, ~40 ms a call.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        # Quiet: tests read the request log, not stderr.
        pass

    def _read(self) -> RecordedRequest:
        split = urlsplit(self.path)
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = None
        request = RecordedRequest(
            method=self.command,
            path=split.path.rstrip("/") or "/",
            query=dict(parse_qsl(split.query, keep_blank_values=True)),
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            raw_body=raw,
        )
        self.fake._record(request)
        return request

    def do_HEAD(self) -> None:
        self._read()
        # The Claude CLI probes the base URL with HEAD before its first call.
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self._dispatch(self._read())

    def do_POST(self) -> None:
        self._dispatch(self._read())

    do_PUT = do_POST  # noqa: N815  # the method names http.server looks up
    do_DELETE = do_GET  # noqa: N815  # the method names http.server looks up

    def _dispatch(self, request: RecordedRequest) -> None:
        fake = self.fake
        try:
            if request.method == "POST" and fake.is_model_path(request.path):
                self._answer_model(request)
                return
            other = fake.handle_other(request)
            if other is None:
                other = RawResponse(
                    status=404,
                    body=fake.error_body(404, "not_found_error", f"fake server: no route {request.method} {request.path}"),
                )
            self._send_raw(other)
        except _Stalled:
            self.close_connection = True
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _answer_model(self, request: RecordedRequest) -> None:
        fake = self.fake
        if not isinstance(request.body, dict):
            self._send_json(400, fake.error_body(400, "invalid_request_error", "fake server: body is not a JSON object"))
            return
        item = fake._next_item(request)
        if item is None:
            self._send_json(
                400,
                fake.error_body(400, "invalid_request_error", "fake server: no scripted response left for this request"),
            )
            return
        if isinstance(item, dict):
            item = RawResponse(body=item)
        if isinstance(item, Fault):
            self._fault(item)
        elif isinstance(item, RawResponse):
            self._send_raw(item)
        elif isinstance(item, FakeReply):
            fake._sleep(item.delay)
            if fake.wants_stream(request):
                self._stream(request, item)
            else:
                self._send_json(200, fake.render_reply(request, item), item.headers)
        else:
            raise TypeError(f"fake server: cannot answer with {type(item).__name__}")

    def _fault(self, fault: Fault) -> None:
        self.fake._sleep(fault.stall)
        if fault.drop or fault.status is None:
            self._drop()
            return
        headers = dict(fault.headers)
        if fault.retry_after is not None:
            headers["retry-after"] = f"{fault.retry_after:g}"
        self._send_json(fault.status, self.fake.error_body(fault.status, fault.error_type, fault.message), headers)

    def _drop(self) -> None:
        # Shut the socket down so the client sees the connection end mid-exchange.
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        raise _Stalled

    def _common_headers(self) -> None:
        self.send_header(self.fake.request_id_header(), self.fake._new_id("req_"))

    def _send_raw(self, raw: RawResponse) -> None:
        if raw.text is None:
            self._send_json(raw.status, raw.body, raw.headers)
            return
        headers = {k.lower(): v for k, v in raw.headers.items()}
        self._send_bytes(raw.status, raw.text.encode(), headers.pop("content-type", "text/plain; charset=utf-8"), headers)

    def _send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(body).encode(), "application/json", headers)

    def _send_bytes(self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self._common_headers()
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _stream(self, request: RecordedRequest, reply: FakeReply) -> None:
        fake = self.fake
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self._common_headers()
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        for sent, event in enumerate(fake.render_stream(request, reply)):
            if reply.drop_after_events is not None and sent >= reply.drop_after_events:
                self._drop()
            if reply.error_after_events is not None and sent >= reply.error_after_events:
                self._chunk(fake.stream_error_for(request, reply.stream_error_type, reply.stream_error_type.replace("_", " ")))
                break
            if reply.stall_after_events is not None and sent >= reply.stall_after_events:
                fake._sleep(float("inf"))
                raise _Stalled
            fake._sleep(reply.event_delay)
            self._chunk(event)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event: optional ``event:`` line, ``data:`` JSON (or text), blank line."""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def chunks(text: str, size: int = 12) -> list[str]:
    """``text`` split into pieces the way a model streams it (at least one piece)."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]
