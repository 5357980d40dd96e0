"""agentrig-claude-code: the Claude Code CLI as an agentrig agent (agent type ``claude_code``)."""

__version__ = "0.1.0"
