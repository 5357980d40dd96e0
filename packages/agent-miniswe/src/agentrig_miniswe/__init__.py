"""agentrig-miniswe: mini-swe-agent as an agentrig agent (agent type ``miniswe``)."""

__version__ = "0.1.0"
