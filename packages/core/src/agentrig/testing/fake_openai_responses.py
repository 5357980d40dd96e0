"""OpenAI's Responses API (``POST /v1/responses``) as the fake OpenAI server renders it.

A streamed reply is the server-sent events OpenAI sends, each with its
``event:`` line and a ``sequence_number``: ``response.created`` and
``response.in_progress`` (the response object, ``status: in_progress``, no
output yet); per output item ``response.output_item.added``, its content
events and ``response.output_item.done``; then ``response.completed`` with the
whole response and its ``usage``. Output items come in OpenAI's order:
a ``reasoning`` item (summary parts and ``response.reasoning_summary_text.delta``)
when the reply thinks, a ``message`` (``response.content_part.added``,
``response.output_text.delta`` pieces, ``response.output_text.done``,
``response.content_part.done``), then one ``function_call`` per tool call
(``response.function_call_arguments.delta`` pieces and ``.done``). The Codex
CLI reads exactly these: items from ``output_item.added``/``.done``, text
deltas, and the usage of ``response.completed``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from agentrig.testing.fake_server import FakeReply, FakeUsage, RecordedRequest, chunks, sse

#: The paths answered as Responses calls (clients differ on whether the base URL carries /v1).
RESPONSES_PATHS = ("/v1/responses", "/responses")


def is_responses_request(request: RecordedRequest) -> bool:
    """Whether ``request`` is a Responses API call (rather than chat completions)."""
    return request.path in RESPONSES_PATHS


def responses_usage(usage: FakeUsage) -> dict[str, Any]:
    """A ``ResponseUsage``: input counts cache reads and writes (OpenAI's convention), output
    counts reasoning (``output_tokens_details.reasoning_tokens`` is part of it, not added)."""
    prompt = usage.input + usage.cache_read + usage.cache_write
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": usage.cache_read, "cache_write_tokens": usage.cache_write},
        "output_tokens": usage.output,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning},
        "total_tokens": prompt + usage.output,
    }


def responses_error_event(error_type: str, message: str, sequence_number: int = 0) -> bytes:
    """A ``response.failed`` event (what the SDK and Codex raise on mid-stream)."""
    body = {
        "type": "response.failed",
        "sequence_number": sequence_number,
        "response": {
            "id": "resp_failed",
            "object": "response",
            "status": "failed",
            "error": {"code": error_type, "message": message},
            "output": [],
            "usage": None,
        },
    }
    return sse(body, event="response.failed")


class ResponsesRenderer:
    """Renders one :class:`FakeReply` as a Responses API ``response`` (whole or streamed).

    ``new_id`` makes the server's identifiers (``resp_``, ``msg_``, ``fc_``, ``rs_``, ``call_``).
    """

    def __init__(self, request: RecordedRequest, reply: FakeReply, usage: FakeUsage, new_id: Callable[[str], str]) -> None:
        self.request = request
        self.reply = reply
        self.usage = usage
        self._new_id = new_id
        self.response_id = new_id("resp_")
        self.created_at = int(time.time())
        self._sequence = 0
        self.items = self._items()

    # -- the finished objects --------------------------------------------------------

    def _items(self) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        if self.reply.thinking is not None:
            items.append(
                {
                    "id": self._new_id("rs_"),
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": self.reply.thinking}],
                }
            )
        if self.reply.text or not self.reply.tool_calls:
            items.append(
                {
                    "id": self._new_id("msg_"),
                    "type": "message",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": self.reply.text, "annotations": [], "logprobs": []}],
                }
            )
        for call in self.reply.tool_calls:
            items.append(
                {
                    "id": self._new_id("fc_"),
                    "type": "function_call",
                    "status": "completed",
                    "call_id": call.id or self._new_id("call_"),
                    "name": call.name,
                    "arguments": call.arguments_json(),
                    **({"namespace": call.namespace} if call.namespace else {}),
                }
            )
        return items

    def response(self, status: str = "completed") -> dict[str, Any]:
        """The ``response`` object; in progress it has no output and no usage yet."""
        body = self.request.body if isinstance(self.request.body, dict) else {}
        done = status == "completed"
        return {
            "id": self.response_id,
            "object": "response",
            "created_at": self.created_at,
            "status": status,
            "error": None,
            "incomplete_details": None,
            "instructions": body.get("instructions"),
            "model": self.reply.model or self.request.model or "gpt-fake",
            "output": self.items if done else [],
            "parallel_tool_calls": bool(body.get("parallel_tool_calls", True)),
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools") or [],
            "temperature": body.get("temperature"),
            "top_p": body.get("top_p"),
            "reasoning": body.get("reasoning"),
            "store": body.get("store", False),
            "metadata": {},
            "usage": responses_usage(self.usage) if done else None,
        }

    # -- the stream ---------------------------------------------------------------------

    def _event(self, kind: str, **fields: Any) -> bytes:
        payload = {"type": kind, "sequence_number": self._sequence, **fields}
        self._sequence += 1
        return sse(payload, event=kind)

    def events(self) -> Iterator[bytes]:
        """Every server-sent event of the streamed response, in OpenAI's order."""
        yield self._event("response.created", response=self.response("in_progress"))
        yield self._event("response.in_progress", response=self.response("in_progress"))
        for index, item in enumerate(self.items):
            if item["type"] == "reasoning":
                yield from self._reasoning_events(index, item)
            elif item["type"] == "message":
                yield from self._message_events(index, item)
            else:
                yield from self._function_call_events(index, item)
        yield self._event("response.completed", response=self.response("completed"))

    def _reasoning_events(self, index: int, item: dict[str, Any]) -> Iterator[bytes]:
        text = item["summary"][0]["text"]
        ids = {"item_id": item["id"], "output_index": index, "summary_index": 0}
        yield self._event("response.output_item.added", output_index=index, item={**item, "summary": []})
        yield self._event("response.reasoning_summary_part.added", **ids, part={"type": "summary_text", "text": ""})
        for piece in chunks(text):
            yield self._event("response.reasoning_summary_text.delta", **ids, delta=piece)
        yield self._event("response.reasoning_summary_text.done", **ids, text=text)
        yield self._event("response.reasoning_summary_part.done", **ids, part={"type": "summary_text", "text": text})
        yield self._event("response.output_item.done", output_index=index, item=item)

    def _message_events(self, index: int, item: dict[str, Any]) -> Iterator[bytes]:
        part = item["content"][0]
        ids = {"item_id": item["id"], "output_index": index, "content_index": 0}
        yield self._event(
            "response.output_item.added", output_index=index, item={**item, "status": "in_progress", "content": []}
        )
        yield self._event("response.content_part.added", **ids, part={**part, "text": ""})
        for piece in chunks(part["text"]):
            yield self._event("response.output_text.delta", **ids, delta=piece, logprobs=[])
        yield self._event("response.output_text.done", **ids, text=part["text"], logprobs=[])
        yield self._event("response.content_part.done", **ids, part=part)
        yield self._event("response.output_item.done", output_index=index, item=item)

    def _function_call_events(self, index: int, item: dict[str, Any]) -> Iterator[bytes]:
        ids = {"item_id": item["id"], "output_index": index}
        yield self._event(
            "response.output_item.added", output_index=index, item={**item, "status": "in_progress", "arguments": ""}
        )
        for piece in chunks(item["arguments"]):
            yield self._event("response.function_call_arguments.delta", **ids, delta=piece)
        yield self._event("response.function_call_arguments.done", **ids, name=item["name"], arguments=item["arguments"])
        yield self._event("response.output_item.done", output_index=index, item=item)
