"""Test kit for agentrig and for plugin authors (registered as a pytest plugin)."""
