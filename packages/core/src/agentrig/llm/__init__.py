"""Chat clients: one interface over the OpenAI and Anthropic SDKs, and replay.

The SDKs are optional extras, imported only by the client that uses them.
"""

from agentrig.llm.interface import ChatMessage, ChatModel, ChatResponse, ToolCall, ToolSpec

__all__ = ["ChatMessage", "ChatModel", "ChatResponse", "ToolCall", "ToolSpec"]
