"""The fake Gemini API on the wire: paths, streamed and whole replies, usage, errors.

The Gemini CLI (the official ``@google/genai`` SDK inside it) reading this fake end to end is
tested in ``packages/agent-gemini-cli``; these tests pin the wire format it reads.
"""

from __future__ import annotations

import http.client
import json
from typing import Any

from agentrig.testing.fake_gemini import FakeGeminiServer, gemini_usage
from agentrig.testing.fake_server import FakeUsage

USAGE = {"input": 11, "output": 22, "cache_read": 5, "cache_write": 3, "reasoning": 7}
STREAM = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
WHOLE = "/v1beta/models/gemini-2.5-flash:generateContent"


def _post(server: FakeGeminiServer, path: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("POST", path, json.dumps(body), {"content-type": "application/json", "x-goog-api-key": "k"})
    response = conn.getresponse()
    data = response.read()
    headers = {k.lower(): v for k, v in response.getheaders()}
    conn.close()
    return response.status, headers, data


def _events(data: bytes) -> list[dict[str, Any]]:
    blocks = data.decode().split("\r\n\r\n")
    assert blocks[-1] == "", "every event ends with a blank line (CRLF framing, as the API sends)"
    return [json.loads(block.removeprefix("data: ")) for block in blocks[:-1]]


def _request() -> dict[str, Any]:
    return {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "generationConfig": {}}


def test_usage_metadata_follows_geminis_conventions() -> None:
    body = gemini_usage(FakeUsage(**USAGE))
    # prompt counts cached input (and what would be a cache write elsewhere); candidates exclude thoughts
    assert body["promptTokenCount"] == 11 + 5 + 3
    assert body["cachedContentTokenCount"] == 5
    assert body["candidatesTokenCount"] == 22 - 7 and body["thoughtsTokenCount"] == 7
    assert body["totalTokenCount"] == 19 + 15 + 7
    # zero counts are left out, as the API's JSON leaves them
    assert "thoughtsTokenCount" not in gemini_usage(FakeUsage(input=4, output=2))


def test_stream_sends_thoughts_text_then_calls_in_whole_responses(fake_gemini_server: FakeGeminiServer) -> None:
    server = fake_gemini_server
    server.add_reply(
        "Listing the files now.", thinking="I should look first.",
        tool_calls=[{"name": "run_shell_command", "arguments": {"command": "ls -la"}}], usage=USAGE,
    )
    status, headers, data = _post(server, STREAM, _request())
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    events = _events(data)
    assert len({e["responseId"] for e in events}) == 1 and {e["modelVersion"] for e in events} == {"gemini-2.5-pro"}
    parts = [part for e in events for part in e["candidates"][0]["content"]["parts"]]
    assert "".join(p["text"] for p in parts if p.get("thought")) == "I should look first."
    assert "".join(p["text"] for p in parts if "text" in p and not p.get("thought")) == "Listing the files now."
    (call,) = [p for p in parts if "functionCall" in p]
    assert call["functionCall"] == {"name": "run_shell_command", "args": {"command": "ls -la"}}  # no id unless scripted
    assert call["thoughtSignature"]
    # thoughts, then text, then the call in the last event, which alone finishes and has the full usage
    kinds = ["thought" if p.get("thought") else "text" if "text" in p else "call" for p in parts]
    assert kinds == sorted(kinds, key=["thought", "text", "call"].index)
    assert [("finishReason" in e["candidates"][0]) for e in events] == [False] * (len(events) - 1) + [True]
    assert events[-1]["candidates"][0]["finishReason"] == "STOP"
    assert events[-1]["usageMetadata"] == gemini_usage(FakeUsage(**USAGE))
    assert all(e["usageMetadata"] == {"promptTokenCount": 19, "totalTokenCount": 19} for e in events[:-1])
    (request,) = server.model_requests
    assert request.headers["x-goog-api-key"] == "k" and request.query == {"alt": "sse"}


def test_generate_content_is_one_response_with_scripted_call_ids(fake_gemini_server: FakeGeminiServer) -> None:
    server = fake_gemini_server
    server.add_reply("", tool_calls=[{"name": "write_file", "arguments": {"file_path": "a", "content": "x"}, "id": "c1"}],
                     usage={"input": 9, "output": 4})
    status, headers, data = _post(server, WHOLE, _request())
    assert status == 200 and headers["content-type"] == "application/json"
    body = json.loads(data)
    candidate = body["candidates"][0]
    assert candidate["finishReason"] == "STOP" and candidate["content"]["role"] == "model"
    call = {"name": "write_file", "args": {"file_path": "a", "content": "x"}, "id": "c1"}
    assert candidate["content"]["parts"] == [{"functionCall": call}]
    assert body["modelVersion"] == "gemini-2.5-flash"
    assert body["usageMetadata"]["promptTokenCount"] == 9 and body["usageMetadata"]["candidatesTokenCount"] == 4


def test_errors_are_googles_in_body_and_stream(fake_gemini_server: FakeGeminiServer) -> None:
    server = fake_gemini_server
    server.add_fault(401, message="API key not valid")
    server.add_fault(429)
    server.add_reply("a long answer that streams in pieces", error_after_events=1, stream_error_type="UNAVAILABLE")
    status, _, data = _post(server, STREAM, _request())
    assert status == 401
    assert json.loads(data) == {"error": {"code": 401, "message": "API key not valid", "status": "UNAUTHENTICATED"}}
    status, _, data = _post(server, WHOLE, _request())
    assert status == 429 and json.loads(data)["error"]["status"] == "RESOURCE_EXHAUSTED"
    status, _, data = _post(server, STREAM, _request())
    events = _events(data)
    assert status == 200 and "candidates" in events[0]
    assert events[-1] == {"error": {"code": 503, "message": "UNAVAILABLE", "status": "UNAVAILABLE"}}


def test_count_tokens_model_list_and_other_paths(fake_gemini_server: FakeGeminiServer) -> None:
    server = fake_gemini_server
    status, _, data = _post(server, "/v1beta/models/gemini-2.5-pro:countTokens", _request())
    assert status == 200 and json.loads(data)["totalTokens"] > 0
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("GET", "/v1beta/models")
    response = conn.getresponse()
    assert response.status == 200 and json.loads(response.read()) == {"models": []}
    conn.close()
    status, _, data = _post(server, "/v1beta/models/x:embedContent", _request())
    assert status == 404 and json.loads(data)["error"]["status"] == "NOT_FOUND"
    # none of those was a model call; an unscripted model call fails loudly
    assert server.model_requests == []
    status, _, data = _post(server, WHOLE, _request())
    assert status == 400 and "no scripted response" in json.loads(data)["error"]["message"]
    assert len(server.unscripted) == 1
