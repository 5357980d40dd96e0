"""agentrig-qwen-code: Qwen Code as an agentrig agent (``--agent qwen_code``)."""

__version__ = "0.1.0"
