"""agentrig-gemini-cli: Google's Gemini CLI as an agentrig agent (``--agent gemini_cli``)."""

__version__ = "0.1.0"
