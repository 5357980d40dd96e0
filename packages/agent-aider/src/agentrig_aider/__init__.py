"""agentrig-aider: Aider (PyPI ``aider-chat``, pinned) as an agentrig agent.

The agent is declared through the ``agentrig`` entry point (:mod:`agentrig_aider.plugin`);
nothing here imports aider, which runs from an environment of its own.
"""

__all__: list[str] = []
