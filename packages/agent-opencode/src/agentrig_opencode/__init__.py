"""agentrig-opencode: OpenCode (npm ``opencode-ai``) as an agentrig agent (``--agent opencode``)."""

__version__ = "0.1.0"
