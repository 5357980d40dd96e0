"""The exceptions agentrig raises and agents raise."""

from __future__ import annotations


class AgentError(Exception):
    """Base class of every error an agent raises."""


class AgentSetupError(AgentError):
    """The agent could not be set up (missing binary, bad credential, ...)."""


class AgentStepError(AgentError):
    """One step of the agent failed in a way it cannot recover from."""


class UnsupportedEnvironmentError(AgentError):
    """The agent cannot run in the given runtime or workspace."""


class AgentLimitError(AgentError):
    """A cost, step or time limit stopped the agent.

    ``reason`` is a short machine-readable token such as ``cost_limit``,
    ``net_cost_limit``, ``step_limit`` or ``wall_clock_limit``.
    """

    def __init__(self, reason: str, message: str | None = None) -> None:
        super().__init__(message or f"agent stopped: {reason}")
        self.reason = reason


class PluginError(Exception):
    """A plugin failed to load, validate or resolve (raised in strict mode)."""


class UnknownAgentError(LookupError):
    """No installed plugin declares the requested agent type."""

    def __init__(self, name: str, available: list[str]) -> None:
        import difflib

        self.name = name
        self.available = available
        close = difflib.get_close_matches(name, available, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        installed = ", ".join(available) if available else "none"
        super().__init__(
            f"unknown agent '{name}' (installed: {installed}){hint}"
        )
        self.closest = close[0] if close else None
