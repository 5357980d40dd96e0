"""What agentrig knows about a model: provider, pricing, limits, settings."""

from __future__ import annotations

import enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentrig.pricing import APIPricing


class ThinkingPreset(str, enum.Enum):
    """How much extended thinking / reasoning effort to ask of a model."""

    NONE = "none"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"

    def budget_tokens(self) -> int:
        """A thinking budget in tokens matching the preset (0 for ``none``)."""
        return {"none": 0, "low": 2048, "medium": 8192, "high": 32768}[self.value]


def model_label(provider: str, name: str) -> str:
    """How a model is shown (``show``, ``compare``, the viewer): ``provider/name``, or
    ``provider:PATH`` when the name is an absolute path (a replay file), which ``provider/name``
    would show with a double slash (``replay//tmp/replay.jsonl``)."""
    return f"{provider}:{name}" if name.startswith("/") else f"{provider}/{name}"


def model_spelling(model_id: str) -> str:
    """``--model`` as recorded (``replay//tmp/replay.jsonl``: ``replay/`` and an absolute path) spelt as
    :func:`model_label` shows it (``replay:/tmp/replay.jsonl``), which ``--model`` takes too; any other
    id unchanged (an alias stays an alias)."""
    provider, _, name = model_id.partition("/")
    return model_label(provider, name) if name.startswith("/") else model_id


class ModelDefinition(BaseModel):
    """One model of the catalog.

    ``pricing`` is ``None`` for a model the catalog does not know: its cost is
    then unknown, never silently zero.
    """

    model_config = ConfigDict(extra="forbid")

    provider: str = Field(description="Provider key: anthropic, openai, or an OpenAI-compatible server.")
    name: str = Field(description="The model name the provider's API expects.")
    aliases: list[str] = Field(default_factory=list)
    pricing: APIPricing | None = None
    context_window: int | None = Field(default=None, gt=0)
    max_output_tokens: int | None = Field(default=None, gt=0)
    supports_thinking: bool = False
    default_thinking: ThinkingPreset = ThinkingPreset.NONE
    base_url: str | None = Field(default=None, description="Default endpoint; the provider's env var overrides it.")
    agent_specific: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Per-agent settings, keyed by agent type."
    )
    replay_start: int = Field(
        default=0,
        ge=0,
        description="Provider replay only: the recorded reply to answer the first call with"
        " (a resumed run skips the replies its finished checkpoints used).",
    )

    @property
    def id(self) -> str:
        """``provider/name``, the form ``--model`` takes."""
        return f"{self.provider}/{self.name}"

    @property
    def label(self) -> str:
        """The model as shown to people (:func:`model_label`)."""
        return model_label(self.provider, self.name)

    def settings_for(self, agent_type: str) -> dict[str, Any]:
        """The per-agent settings for ``agent_type`` (empty when none)."""
        return dict(self.agent_specific.get(agent_type, {}))
