"""The fake model servers, driven by the official SDKs over real HTTP."""

from __future__ import annotations

import http.client
import json
import socket
import struct
import threading
import time
from pathlib import Path

import anthropic
import httpx2
import openai
import pytest

from agentrig.testing.fake_anthropic import FakeAnthropicServer
from agentrig.testing.fake_openai import FakeOpenAIServer
from agentrig.testing.fake_server import FakeReply, Fault, RawResponse, RecordedRequest

USAGE = {"input": 11, "output": 22, "cache_read": 5, "cache_write": 3, "reasoning": 7}


def _anthropic(server: FakeAnthropicServer, **kwargs: object) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="test-key", base_url=server.base_url, max_retries=0, **kwargs)


def _openai(server: FakeOpenAIServer, **kwargs: object) -> openai.OpenAI:
    return openai.OpenAI(api_key="test-key", base_url=server.base_url, max_retries=0, **kwargs)


# -- Anthropic ---------------------------------------------------------------


def test_anthropic_reply_with_thinking_text_and_tool_use(fake_anthropic_server: FakeAnthropicServer) -> None:
    fake_anthropic_server.add_reply(
        "Listing.", thinking="I should look.", tool_calls=[{"name": "bash", "arguments": {"command": "ls"}}], usage=USAGE
    )
    message = _anthropic(fake_anthropic_server).messages.create(
        model="claude-test", max_tokens=64, messages=[{"role": "user", "content": "hi"}]
    )
    assert [b.type for b in message.content] == ["thinking", "text", "tool_use"]
    assert message.content[0].thinking == "I should look."
    assert message.content[2].input == {"command": "ls"}
    assert message.stop_reason == "tool_use"
    assert message.model == "claude-test"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (11, 22)
    assert (message.usage.cache_read_input_tokens, message.usage.cache_creation_input_tokens) == (5, 3)
    assert message.usage.output_tokens_details.thinking_tokens == 7
    assert message._request_id and message._request_id.startswith("req_")


def test_anthropic_stream_event_sequence_and_final_message(fake_anthropic_server: FakeAnthropicServer) -> None:
    fake_anthropic_server.add_reply(
        "A long enough text to be split in pieces.",
        thinking="Some thoughts that span chunks.",
        tool_calls=[{"name": "edit", "arguments": {"path": "a.py", "text": "x = 1\n" * 5}}],
        usage=USAGE,
    )
    client = _anthropic(fake_anthropic_server)
    with client.messages.stream(model="claude-test", max_tokens=64, messages=[{"role": "user", "content": "hi"}]) as s:
        events = [e.type for e in s]
        final = s.get_final_message()
    assert events[0] == "message_start"
    assert events[-1] == "message_stop"
    assert "message_delta" in events and "content_block_stop" in events
    assert final.content[0].thinking == "Some thoughts that span chunks."
    assert final.content[0].signature
    assert final.content[1].text == "A long enough text to be split in pieces."
    assert final.content[2].input == {"path": "a.py", "text": "x = 1\n" * 5}
    assert final.usage.output_tokens == 22 and final.usage.input_tokens == 11
    assert final.usage.cache_read_input_tokens == 5


def test_anthropic_raw_sse_has_ping_and_input_json_deltas(fake_anthropic_server: FakeAnthropicServer) -> None:
    fake_anthropic_server.add_tool_call("bash", {"command": "echo hi"})
    conn = http.client.HTTPConnection("127.0.0.1", fake_anthropic_server.port, timeout=5)
    body = json.dumps({"model": "m", "max_tokens": 5, "stream": True, "messages": [{"role": "user", "content": "x"}]})
    conn.request("POST", "/v1/messages?beta=true", body, {"content-type": "application/json"})
    response = conn.getresponse()
    assert response.status == 200
    assert response.getheader("content-type", "").startswith("text/event-stream")
    text = response.read().decode()
    names = [line.split(": ", 1)[1] for line in text.splitlines() if line.startswith("event: ")]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    assert '"input_json_delta"' in text
    request = fake_anthropic_server.model_requests[0]
    assert request.query == {"beta": "true"} and request.stream


def test_anthropic_error_status_with_retry_after(fake_anthropic_server: FakeAnthropicServer) -> None:
    fake_anthropic_server.add_fault(529, retry_after=3)
    with pytest.raises(anthropic.APIStatusError) as caught:
        _anthropic(fake_anthropic_server).messages.create(
            model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}]
        )
    assert caught.value.status_code == 529
    assert caught.value.response.headers["retry-after"] == "3"
    assert caught.value.body["error"]["type"] == "overloaded_error"


def test_head_root_and_unknown_paths(fake_anthropic_server: FakeAnthropicServer) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", fake_anthropic_server.port, timeout=5)
    conn.request("HEAD", "/")
    response = conn.getresponse()
    response.read()
    assert response.status == 200
    conn.request("GET", "/v1/nothing-here")
    response = conn.getresponse()
    assert response.status == 404
    assert json.loads(response.read())["error"]["type"] == "not_found_error"
    assert [r.method for r in fake_anthropic_server.requests] == ["HEAD", "GET"]
    assert fake_anthropic_server.model_requests == []


def test_a_client_that_hangs_up_is_no_traceback(
    fake_anthropic_server: FakeAnthropicServer, capfd: pytest.CaptureFixture[str]
) -> None:
    # a killed agent resets its connection mid-request: normal for this server, nothing on stderr
    sock = socket.create_connection(("127.0.0.1", fake_anthropic_server.port), timeout=5)
    sock.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()  # RST, not FIN
    time.sleep(0.3)
    # the server still serves, and said nothing about the reset
    conn = http.client.HTTPConnection("127.0.0.1", fake_anthropic_server.port, timeout=5)
    conn.request("HEAD", "/")
    assert conn.getresponse().status == 200
    assert "Traceback" not in capfd.readouterr().err


def test_unscripted_request_fails_loudly(fake_anthropic_server: FakeAnthropicServer) -> None:
    with pytest.raises(anthropic.BadRequestError, match="no scripted response"):
        _anthropic(fake_anthropic_server).messages.create(
            model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}]
        )
    assert len(fake_anthropic_server.unscripted) == 1


# -- OpenAI ------------------------------------------------------------------


def test_openai_tool_call_and_usage(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.add_tool_call("bash", {"command": "ls"}, text="Looking.", usage=USAGE)
    completion = _openai(fake_openai_server).chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": "hi"}]
    )
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Looking."
    call = choice.message.tool_calls[0]
    assert call.function.name == "bash" and json.loads(call.function.arguments) == {"command": "ls"}
    usage = completion.usage
    assert usage is not None
    # OpenAI counts cached tokens inside prompt_tokens.
    assert usage.prompt_tokens == 11 + 5 + 3 and usage.completion_tokens == 22
    assert usage.prompt_tokens_details.cached_tokens == 5
    assert usage.completion_tokens_details.reasoning_tokens == 7
    assert completion._request_id


def test_openai_stream_chunks_with_tool_deltas_and_usage(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.add_reply(
        tool_calls=[
            {"name": "read", "arguments": {"path": "some/long/path/to/a/file.py"}},
            {"name": "bash", "arguments": {"command": "pytest -q"}},
        ],
        usage=USAGE,
    )
    stream = _openai(fake_openai_server).chat.completions.create(
        model="gpt-test",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    args: dict[int, str] = {}
    names: dict[int, str] = {}
    finish = usage = None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            finish = choice.finish_reason or finish
            for delta in choice.delta.tool_calls or []:
                if delta.function and delta.function.name:
                    names[delta.index] = delta.function.name
                args[delta.index] = args.get(delta.index, "") + ((delta.function and delta.function.arguments) or "")
    assert names == {0: "read", 1: "bash"}
    assert json.loads(args[1]) == {"command": "pytest -q"}
    assert finish == "tool_calls"
    assert usage is not None and usage.completion_tokens == 22


def test_openai_stream_without_include_usage_has_no_usage_chunk(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.add_reply("hi there")
    stream = _openai(fake_openai_server).chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    chunks = list(stream)
    assert all(c.usage is None for c in chunks)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "hi there"


def test_openai_error_body_and_status(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.add_fault(429, retry_after=1.5, message="slow down")
    with pytest.raises(openai.RateLimitError, match="slow down") as caught:
        _openai(fake_openai_server).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert caught.value.response.headers["retry-after"] == "1.5"


# -- scripting and faults ----------------------------------------------------


def test_function_of_the_request_and_callable_queue_items(fake_openai_server: FakeOpenAIServer) -> None:
    def echo(request: RecordedRequest) -> FakeReply:
        return FakeReply(text="echo: " + request.body["messages"][-1]["content"])

    fake_openai_server.enqueue(lambda request: FakeReply(text=f"first to {request.model}"))
    fake_openai_server.respond_with(echo)
    client = _openai(fake_openai_server)
    replies = [
        client.chat.completions.create(model="gpt-a", messages=[{"role": "user", "content": c}]).choices[0].message.content
        for c in ("one", "two", "three")
    ]
    assert replies == ["first to gpt-a", "echo: two", "echo: three"]
    assert [r.body["messages"][0]["content"] for r in fake_openai_server.model_requests] == ["one", "two", "three"]
    assert fake_openai_server.requests[0].headers["authorization"] == "Bearer test-key"


def test_raw_response_is_sent_verbatim(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.enqueue(RawResponse(status=400, body={"error": {"message": "context_length_exceeded here",
                                                                         "type": "invalid_request_error",
                                                                         "code": "context_length_exceeded"}}))
    with pytest.raises(openai.BadRequestError) as caught:
        _openai(fake_openai_server).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert caught.value.code == "context_length_exceeded"


def test_dropped_connection(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.enqueue(Fault(drop=True))
    with pytest.raises(openai.APIConnectionError):
        _openai(fake_openai_server).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert len(fake_openai_server.model_requests) == 1


def test_stream_dropped_midway(fake_anthropic_server: FakeAnthropicServer) -> None:
    fake_anthropic_server.add_reply("x" * 100, drop_after_events=4)
    client = _anthropic(fake_anthropic_server)
    with (
        pytest.raises((anthropic.APIConnectionError, httpx2.HTTPError)),
        client.messages.stream(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}]) as s,
    ):
        s.get_final_message()


def test_stalled_stream_hits_client_timeout_and_server_stops_promptly() -> None:
    server = FakeAnthropicServer().start()
    server.add_reply("x" * 100, stall_after_events=3)
    client = _anthropic(server, timeout=0.5)
    before = set(threading.enumerate())
    with (
        pytest.raises((anthropic.APITimeoutError, httpx2.ReadTimeout)),
        client.messages.stream(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}]) as s,
    ):
        s.get_final_message()
    stalled = [t for t in threading.enumerate() if t not in before and "process_request" in t.name]
    assert stalled, "the stalled stream's handler"
    server.stop()
    for handler in stalled:
        handler.join(timeout=30)  # a deadline for a hang, not a speed limit
    assert not [t for t in stalled if t.is_alive()], "stopping the server did not release its stalled stream"


def test_slow_stream_still_completes(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.add_reply("abcdefghijklmnopqrstuvwxyz", event_delay=0.01, delay=0.05)
    stream = _openai(fake_openai_server).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "x"}], stream=True
    )
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "abcdefghijklmnopqrstuvwxyz"


def test_server_binds_loopback_only(fake_openai_server: FakeOpenAIServer) -> None:
    assert fake_openai_server.base_url.startswith("http://127.0.0.1:")
    with socket.create_connection(("127.0.0.1", fake_openai_server.port), timeout=2):
        pass


# -- the real Claude Code CLI against the fake Messages API ----------------------


def _claude_bin() -> str:
    import os

    path = os.environ.get("AGENTRIG_TEST_CLAUDE_BIN") or str(
        Path(__file__).resolve().parents[3] / ".cache" / "claude-code" / "node_modules" / ".bin" / "claude"
    )
    if not Path(path).exists():
        if os.environ.get("CI"):
            pytest.fail(f"Claude Code CLI not found at {path} (CI is set: install it, see .ci/run)")
        pytest.skip(f"Claude Code CLI not found at {path}")
    return path


@pytest.mark.claude_cli
def test_claude_cli_runs_a_tool_turn_against_the_fake(fake_anthropic_server: FakeAnthropicServer, tmp_path: Path) -> None:
    import subprocess

    claude = _claude_bin()
    fake_anthropic_server.add_reply(
        "Running it.",
        thinking="Use Bash.",
        tool_calls=[{"name": "Bash", "arguments": {"command": "echo hello-from-tool", "description": "echo"}}],
    )
    fake_anthropic_server.add_reply("Saw hello-from-tool.", usage={"input": 50, "output": 10, "cache_read": 20, "cache_write": 5})
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "CLAUDE_CONFIG_DIR": str(tmp_path / ".claude"),
        "ANTHROPIC_BASE_URL": fake_anthropic_server.base_url,
        "ANTHROPIC_API_KEY": "sk-fake",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "IS_SANDBOX": "1",
    }
    done = subprocess.run(
        [claude, "--print", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions",
         "--max-turns", "3", "say hi"],
        env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    blocks = [b for e in events if e["type"] == "assistant" for b in e["message"]["content"]]
    assert [b["type"] for b in blocks] == ["thinking", "text", "tool_use", "text"]
    results = [b for e in events if e["type"] == "user" for b in e["message"]["content"] if b.get("type") == "tool_result"]
    assert "hello-from-tool" in str(results[0]["content"])
    final = events[-1]
    assert final["type"] == "result" and not final["is_error"] and final["result"] == "Saw hello-from-tool."
    calls = fake_anthropic_server.model_requests
    assert len(calls) == 2 and all(r.stream and r.query.get("beta") == "true" for r in calls)
    # The tool result went back to the model in the second call.
    assert "hello-from-tool" in json.dumps(calls[1].body["messages"][-1])
