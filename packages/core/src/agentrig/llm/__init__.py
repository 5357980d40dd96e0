"""Chat clients: one interface over the OpenAI and Anthropic SDKs, and replay.

The SDKs are optional extras, imported only by the client that uses them
(``agentrig.llm`` itself imports neither).
"""

from agentrig.llm.anthropic_chat import AnthropicChat
from agentrig.llm.factory import create_chat_model, resolve_base_url
from agentrig.llm.interface import ChatMessage, ChatModel, ChatResponse, ToolCall, ToolSpec
from agentrig.llm.openai_chat import OpenAIChat
from agentrig.llm.options import ChatOptions
from agentrig.llm.replay import RecordingChatModel, ReplayModel
from agentrig.llm.retry import RetryEvent, RetryPolicy

__all__ = [
    "AnthropicChat",
    "OpenAIChat",
    "ChatMessage",
    "ChatModel",
    "ChatOptions",
    "ChatResponse",
    "RecordingChatModel",
    "ReplayModel",
    "RetryEvent",
    "RetryPolicy",
    "ToolCall",
    "ToolSpec",
    "create_chat_model",
    "resolve_base_url",
]
