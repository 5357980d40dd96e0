"""Runtimes: where an agent's commands (or a CLI agent's whole process) run.

The interface lives in :mod:`agentrig.runtime.interface`; the core's
``local`` and ``docker`` runtimes in their own modules, imported on use.
"""
