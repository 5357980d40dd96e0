"""agentrig-react: a tool-calling ReAct agent for agentrig (agent type ``react``)."""

__version__ = "0.1.0"
