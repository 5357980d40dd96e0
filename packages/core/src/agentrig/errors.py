"""The exceptions agentrig raises and agents raise."""

from __future__ import annotations

from collections.abc import Sequence


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


class UnknownPluginError(LookupError):
    """No installed plugin declares the requested name, for any kind of plugin (agent, runtime,
    executor, problem format, dataset, model provider, stream parser).

    One message for every kind: ``unknown NOUN 'NAME' (installed: ...)`` (or ``SOURCE: unknown
    NOUN (installed: ...)`` when ``source`` names where the name came from, such as
    ``--executor ray``), then the closest installed name, or else ``hint``, what the plugin
    kind declares about installing one. ``name``, ``available``, ``closest``, ``noun`` and
    ``hint`` stay on the error for callers.

    ``UnknownPluginError(message)`` alone (no ``available``) carries a ready message, the form
    the older per-kind errors were raised with.
    """

    #: What the error's kind calls one of its plugins; subclasses of a kind set their own.
    noun = "plugin"

    def __init__(
        self,
        name: str,
        available: Sequence[str] | None = None,
        *,
        noun: str | None = None,
        source: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.name = name
        self.available = list(available or [])
        self.noun = noun or type(self).noun
        self.source = source
        self.hint = hint
        self.closest: str | None = None
        if available is None:
            super().__init__(name)
            return
        import difflib

        close = difflib.get_close_matches(name, self.available, n=1)
        self.closest = close[0] if close else None
        what = f"unknown {self.noun} '{name}'"
        if source:  # the source names the name itself (`--executor ray`), or the name follows (`-c metrics`)
            what = f"{source}: unknown {self.noun}" if name in source else f"{source}: {what}"
        message = f"{what} (installed: {', '.join(self.available) or 'none'})"
        if self.closest is not None:
            message += f"; did you mean '{self.closest}'?"
        elif hint:
            message += f"; {hint}"
        super().__init__(message)


class UnknownAgentError(UnknownPluginError):
    """No installed plugin declares the requested agent type."""

    noun = "agent"
