"""example-bench: an agentrig dataset shipped as package data (see plugin.py)."""
