"""The pluggy markers of the ``agentrig`` project.

Kept in a module of their own so that a plugin module doing
``import agentrig`` and ``@agentrig.hookimpl`` pulls in nothing but pluggy.
"""

from __future__ import annotations

import pluggy

PROJECT_NAME = "agentrig"
"""The pluggy project name, and the name of the entry-point group."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
"""Marks a function in :mod:`agentrig.hookspecs` as a hook specification."""

hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""Marks a plugin function as the implementation of an agentrig hook."""
