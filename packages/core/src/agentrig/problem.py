"""The problem format: a directory with ``problem.yaml``, prompts and tests."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field


class Checkpoint(BaseModel):
    """One checkpoint of a problem, as written in ``problem.yaml``.

    ``prompt`` is a path relative to the problem directory; ``test`` is a
    shell command run in the workspace after the agent (exit 0 = pass).
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    prompt: str
    test: str | None = None


class Problem(BaseModel):
    """A whole problem as written in ``problem.yaml``; ``path`` is its directory."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    workspace: str | None = None
    tests: str = Field(
        default="tests",
        description="Directory (in the problem) whose files are put into the workspace only while a test runs.",
    )
    checkpoints: list[Checkpoint] = Field(min_length=1)
    path: Path = Field(default=Path("."), exclude=True)

    def prompt_text(self, checkpoint: Checkpoint) -> str:
        """The task text of ``checkpoint``, read from its prompt file."""
        return (self.path / checkpoint.prompt).read_text(encoding="utf-8")
