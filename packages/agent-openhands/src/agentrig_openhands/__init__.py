"""agentrig-openhands: OpenHands (its SDK, in a Python 3.12 environment of its own) as an agentrig agent (``--agent openhands``)."""

__version__ = "0.1.0"
