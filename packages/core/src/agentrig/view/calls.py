"""What a model call sent and received (``LLMCall.sent`` / ``received``), as the checkpoint page shows it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentrig.view.steps import CallData, MessageData

#: Finds the step that shows a sent message already (a tool's result, the task): its number, or ``None``.
StepLookup = Callable[[Any], "int | None"]


def message_data(message: Any, shown_at: int | None = None) -> MessageData:
    """A :class:`~agentrig.trajectory.RecordedMessage` as shown (its text left out when ``shown_at`` says
    where the page shows it already)."""
    data: MessageData = {"role": message.role}
    if shown_at is not None:
        data["shown_at"] = shown_at
    elif message.content:
        data["text"] = message.content
    if message.thinking:
        data["thinking"] = message.thinking
    if message.tool_calls:
        data["tool_calls"] = [f"{call.name} {call.arguments}" for call in message.tool_calls]
    if message.tool_call_id:
        data["tool_call_id"] = message.tool_call_id
    if message.cut:
        data["cut"] = message.cut
    return data


def call_data(step: Any, lookup: StepLookup | None = None) -> CallData | None:
    """The messages an ``llm_call`` step recorded; ``None`` when it recorded none (older runs, CLI agents).

    A sent message the page shows already (found by ``lookup``: a tool's result, the task, the system
    prompt) is shown as a reference to it, so that a call's messages do not double the page."""
    if step.sent is None and step.received is None:
        return None
    sent = step.sent or []
    sent_from = step.sent_from or 0
    sent_count = step.sent_count if step.sent_count is not None else len(sent)
    # "sent 2 new of 7 messages · received the reply": what the folded block holds
    summary = f"sent {len(sent)}{f' new of {sent_count}' if sent_from else ''} message{'s' if sent_count != 1 else ''}"
    if step.received is not None:
        summary += " · received the reply"
    data: CallData = {"summary": summary, "sent": [message_data(m, lookup(m) if lookup is not None else None) for m in sent]}
    if sent_from:
        data["sent_from"] = sent_from
    if step.tools:
        data["tools"] = ", ".join(step.tools)
    if step.received is not None:
        data["received"] = message_data(step.received)
    return data


def system_prompt(steps: list[Any]) -> str | None:
    """The system prompt of the first model call that recorded one, ``None`` when none did."""
    for step in steps:
        if getattr(step, "kind", None) == "llm_call":
            for message in step.sent or []:
                if message.role == "system":
                    return str(message.content)
    return None
