"""A fake of Google's Gemini API: ``models/{model}:generateContent`` and ``:streamGenerateContent``.

The paths are the Gemini Developer API's (``/v1beta/models/MODEL:METHOD``; ``/v1`` and
``/v1alpha`` too), as the ``@google/genai`` SDK and the Gemini CLI call them: the model is in
the path, the API key in the ``x-goog-api-key`` header, and ``:streamGenerateContent?alt=sse``
streams (``generateContent`` does not). Point a client at it with ``GOOGLE_GEMINI_BASE_URL`` (or
``httpOptions.baseUrl``) = :attr:`FakeGeminiServer.base_url`.

A reply is a ``GenerateContentResponse``: one candidate whose ``content`` (role ``model``) has
the reply's parts in Gemini's order: thought parts (``{"text": ..., "thought": true}``) when the
reply thinks, text, then one ``functionCall`` part per tool call (``name``, ``args``, and ``id``
only when the script gives one: the API itself rarely sends it). ``finishReason`` is ``STOP``,
for tool calls too, as Gemini sends it. Streamed, each server-sent event (``data: {...}`` and a
blank line, CRLF as the API frames them) is a whole ``GenerateContentResponse`` holding the next
piece: thought pieces, text pieces, then the function calls in one event with the
``finishReason`` (Gemini never splits a call's arguments). Every event carries ``responseId``,
``modelVersion`` and ``usageMetadata``: the prompt's count until the last event, which has them
all.

Usage, Gemini's way: ``promptTokenCount`` counts cached input (``cachedContentTokenCount``, a
part of it), ``candidatesTokenCount`` does not count thinking (``thoughtsTokenCount``), and
``totalTokenCount`` is their sum. A :class:`FakeUsage` maps as ``prompt = input + cache_read +
cache_write`` (Gemini has no separate cache write: it is plain input), ``cached = cache_read``,
``candidates = output - reasoning`` (``output`` counts reasoning, as agentrig's does) and
``thoughts = reasoning``; zero counts are left out, as the API's JSON leaves them.

Errors are Google's (``{"error": {"code", "message", "status"}}``, ``status`` one of
``INVALID_ARGUMENT``, ``UNAUTHENTICATED``, ``RESOURCE_EXHAUSTED``, ...), inside a stream as one
more event. ``:countTokens`` and the model list are answered too.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from typing import Any

from agentrig.testing.fake_server import FakeModelServer, FakeReply, FakeUsage, RawResponse, RecordedRequest, chunks

#: ``/v1beta/models/gemini-2.5-pro:streamGenerateContent`` -> version, model, method.
MODEL_PATH = re.compile(r"^/(v1|v1beta|v1alpha)/models/([^/:]+):(generateContent|streamGenerateContent)$")
_COUNT_TOKENS = re.compile(r"^/(v1|v1beta|v1alpha)/models/([^/:]+):countTokens$")

#: Google's canonical error status per HTTP status.
GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_HTTP_OF_STATUS = {name: code for code, name in GOOGLE_STATUS.items()}


def gemini_usage(usage: FakeUsage) -> dict[str, Any]:
    """The ``usageMetadata`` of ``usage`` (see the module docstring), zero counts left out."""
    prompt = usage.input + usage.cache_read + usage.cache_write
    thoughts = usage.reasoning
    candidates = max(0, usage.output - thoughts)
    body: dict[str, Any] = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": candidates,
        "cachedContentTokenCount": usage.cache_read,
        "thoughtsTokenCount": thoughts,
        "totalTokenCount": prompt + candidates + thoughts,
    }
    body = {name: value for name, value in body.items() if value}
    body["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": prompt}]
    return body


def model_of(request: RecordedRequest) -> str | None:
    """The model a Gemini request names in its path."""
    match = MODEL_PATH.match(request.path) or _COUNT_TOKENS.match(request.path)
    return match.group(2) if match else None


def _signature(reply: FakeReply) -> str:
    # opaque like the real thought signature; deterministic so tests can compare it
    return base64.b64encode(json.dumps({"fake": True, "n": len(reply.thinking or "")}).encode()).decode()


class FakeGeminiServer(FakeModelServer):
    """The Gemini API on 127.0.0.1 (see the module docstring). ``base_url`` is what
    ``GOOGLE_GEMINI_BASE_URL`` takes."""

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (the SDK adds ``/v1beta/models/...``)."""
        return self.url

    def is_model_path(self, path: str) -> bool:
        """``.../models/MODEL:generateContent`` or ``:streamGenerateContent``."""
        return MODEL_PATH.match(path) is not None

    def wants_stream(self, request: RecordedRequest) -> bool:
        """Gemini streams by method (``:streamGenerateContent``, with ``alt=sse`` as the SDKs ask), not by body."""
        return request.path.endswith(":streamGenerateContent")

    def request_id_header(self) -> str:
        """Gemini's responses carry their id in the body (``responseId``); this header is the fake's own."""
        return "x-fake-request-id"

    def error_body(self, status: int, error_type: str | None, message: str | None) -> dict[str, Any]:
        """``{"error": {"code", "message", "status"}}``; ``error_type`` is used as ``status`` when it is Google's."""
        fallback = "INTERNAL" if status >= 500 else "INVALID_ARGUMENT"
        kind = error_type if error_type in _HTTP_OF_STATUS else GOOGLE_STATUS.get(status, fallback)
        return {"error": {"code": status, "message": message or kind.replace("_", " ").capitalize(), "status": kind}}

    def stream_error(self, error_type: str, message: str) -> bytes:
        """The error as one more event of the stream (``data: {"error": ...}``)."""
        status = error_type if error_type in _HTTP_OF_STATUS else "UNAVAILABLE"
        return self._event({"error": {"code": _HTTP_OF_STATUS[status], "message": message, "status": status}})

    def handle_other(self, request: RecordedRequest) -> RawResponse | None:
        """``:countTokens`` (an estimate, 4 characters a token) and the model list."""
        if request.method == "POST" and _COUNT_TOKENS.match(request.path):
            return RawResponse(body={"totalTokens": max(1, len(request.raw_body) // 4)})
        if request.method == "GET" and re.match(r"^/(v1|v1beta|v1alpha)/models$", request.path):
            return RawResponse(body={"models": []})
        return None

    # -- rendering ---------------------------------------------------------

    @staticmethod
    def _event(body: dict[str, Any]) -> bytes:
        return b"data: " + json.dumps(body, separators=(",", ":")).encode() + b"\r\n\r\n"

    @staticmethod
    def _call_parts(reply: FakeReply) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        for index, call in enumerate(reply.tool_calls):
            try:
                args: Any = json.loads(call.arguments_json())
            except json.JSONDecodeError:
                args = call.arguments_json()  # malformed on purpose: sent as the bare text
            function: dict[str, Any] = {"name": call.name, "args": args}
            if call.id:
                function["id"] = call.id
            part: dict[str, Any] = {"functionCall": function}
            if index == 0 and reply.thinking is not None:
                part["thoughtSignature"] = _signature(reply)
            parts.append(part)
        return parts

    def _response(self, request: RecordedRequest, reply: FakeReply, response_id: str, parts: list[dict[str, Any]],
                  usage: dict[str, Any], finish: bool) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if finish:
            candidate["finishReason"] = reply.stop_reason or "STOP"
        return {
            "candidates": [candidate],
            "usageMetadata": usage,
            "modelVersion": reply.model or model_of(request) or "gemini-fake",
            "responseId": response_id,
        }

    def render_reply(self, request: RecordedRequest, reply: FakeReply) -> dict[str, Any]:
        """A whole ``GenerateContentResponse`` (``:generateContent``)."""
        parts: list[dict[str, Any]] = []
        if reply.thinking is not None:
            parts.append({"text": reply.thinking, "thought": True})
        if reply.text or not reply.tool_calls:
            parts.append({"text": reply.text})
        parts += self._call_parts(reply)
        usage = gemini_usage(self.usage_for(request, reply))
        return self._response(request, reply, self._new_id("resp-"), parts, usage, finish=True)

    def render_stream(self, request: RecordedRequest, reply: FakeReply) -> Iterator[bytes]:
        """The server-sent events of ``:streamGenerateContent?alt=sse`` (see the module docstring)."""
        response_id = self._new_id("resp-")
        full = gemini_usage(self.usage_for(request, reply))
        prompt = full.get("promptTokenCount", 0)
        partial = {"promptTokenCount": prompt, "totalTokenCount": prompt}
        pieces: list[list[dict[str, Any]]] = []
        if reply.thinking is not None:
            pieces += [[{"text": piece, "thought": True}] for piece in chunks(reply.thinking)]
        if reply.text or not reply.tool_calls:
            pieces += [[{"text": piece}] for piece in chunks(reply.text)]
        calls = self._call_parts(reply)
        if calls:
            pieces.append(calls)
        for index, parts in enumerate(pieces):
            last = index == len(pieces) - 1
            yield self._event(self._response(request, reply, response_id, parts, full if last else partial, finish=last))
