"""The records a run writes to disk, one pydantic model per file or line.

``run.json`` is :class:`RunRecord`; each line of ``results.jsonl`` a
:class:`CheckpointResultLine`; ``evaluation.json`` an :class:`EvaluationRecord`;
``diff.json`` a :class:`DiffRecord`; ``<problem>/problem.json`` a
:class:`ProblemRecord`. ``results.jsonl`` is the source of truth for what is
finished (``--resume`` reads it); ``run.json`` summarises.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentrig.usage import TokenUsage

SCHEMA_VERSION = 1

CheckpointStatus = Literal["passed", "failed", "not_evaluated", "error", "skipped"]
"""``passed``/``failed``: the test's verdict; ``not_evaluated``: the checkpoint has no
test; ``error``: the agent or the evaluation crashed; ``skipped``: not run (net cost
limit reached earlier)."""

ProblemStatus = Literal["pending", "running", "completed", "failed", "interrupted"]
RunStatus = Literal["running", "completed", "failed", "interrupted"]


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(timezone.utc)


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EvaluationRecord(_Record):
    """``evaluation.json``: how the checkpoint's test command went.

    ``passed`` is ``None`` when the checkpoint has no test. ``output_tail`` is the
    end of the combined output (stdout then stderr), at most a few KB.
    """

    command: str | None
    exit_code: int | None = None
    passed: bool | None = None
    timed_out: bool = False
    elapsed: float = 0.0
    started: datetime | None = None
    output_tail: str = ""
    error: str | None = None


class FileChange(_Record):
    """One path that differs between two snapshots; sizes in bytes, ``None`` when absent."""

    path: str
    old_size: int | None = None
    new_size: int | None = None


class DiffRecord(_Record):
    """``diff.json``: what the checkpoint changed in the workspace.

    ``base`` names what it is compared with: ``initial`` (the problem's starting
    workspace) or the previous checkpoint. ``patch`` is a unified diff of the
    changed text files, cut at ``patch_truncated``.
    """

    base: str
    added: list[FileChange] = Field(default_factory=list)
    modified: list[FileChange] = Field(default_factory=list)
    deleted: list[FileChange] = Field(default_factory=list)
    patch: str = ""
    patch_truncated: bool = False


class CheckpointResultLine(_Record):
    """One line of ``results.jsonl``: a finished (or skipped) checkpoint."""

    problem: str
    checkpoint: str
    index: int
    status: CheckpointStatus
    passed: bool | None = None
    exit_code: int | None = None
    had_error: bool = False
    stop_reason: str | None = None
    cost: float = 0.0
    cost_known: bool = True
    prior_cost: float = 0.0
    steps: int = 0
    tokens: TokenUsage = Field(default_factory=TokenUsage)
    agent_elapsed: float = 0.0
    evaluation_elapsed: float = 0.0
    elapsed: float = 0.0
    started: datetime | None = None
    completed: datetime | None = None


class Totals(_Record):
    """Sums over checkpoints: cost in USD, tokens, model steps, verdicts."""

    cost: float = 0.0
    tokens: TokenUsage = Field(default_factory=TokenUsage)
    steps: int = 0
    checkpoints: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0

    def add(self, line: CheckpointResultLine) -> None:
        """Count one result line in."""
        self.cost += line.cost
        self.tokens = self.tokens + line.tokens
        self.steps += line.steps
        self.checkpoints += 1
        self.passed += line.status == "passed"
        self.failed += line.status == "failed"
        self.errors += line.status == "error"
        self.skipped += line.status == "skipped"

    def merge(self, other: Totals) -> None:
        """Count ``other``'s checkpoints in."""
        self.cost += other.cost
        self.tokens = self.tokens + other.tokens
        self.steps += other.steps
        self.checkpoints += other.checkpoints
        self.passed += other.passed
        self.failed += other.failed
        self.errors += other.errors
        self.skipped += other.skipped

    @classmethod
    def of(cls, lines: list[CheckpointResultLine]) -> Totals:
        """The totals of ``lines``."""
        totals = cls()
        for line in lines:
            totals.add(line)
        return totals


class ProblemRecord(_Record):
    """A problem's status in ``run.json`` (and in ``<problem>/problem.json``).

    ``error`` is one line saying why a problem failed outside its checkpoints
    (setup, runtime, a crash); checkpoint verdicts live in ``results.jsonl``.
    """

    name: str
    path: str
    status: ProblemStatus = "pending"
    checkpoints: list[str] = Field(default_factory=list)
    finished: int = 0
    totals: Totals = Field(default_factory=Totals)
    started: datetime | None = None
    ended: datetime | None = None
    error: str | None = None


class AgentRecord(_Record):
    """The agent of a run: its type, the distribution providing it, and its full config."""

    type: str
    distribution: str | None = None
    version: str | None = None
    config: dict[str, Any]


class ModelRecord(_Record):
    """The model of a run, as ``--model`` named it and as resolved."""

    id: str
    provider: str
    name: str


class RuntimeRecord(_Record):
    """Where commands ran.

    ``image`` is ``--image``; ``agent_image`` the agent's own image built from
    it (its config's ``docker_template``), which the sessions ran in.
    """

    name: str
    image: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    agent_image: str | None = None


class RunSettings(_Record):
    """How the run drives every agent, whatever its type.

    ``reset_context``: start each checkpoint with a fresh conversation
    (``--reset-context``) or continue the previous one (``--keep-context``,
    the default); an agent config's own ``reset_context`` overrides it.
    ``thinking`` and ``thinking_max_tokens``: ``--thinking`` and
    ``--thinking-max-tokens``, handed to ``Agent.from_config``.
    """

    reset_context: bool = False
    thinking: str | None = None
    thinking_max_tokens: int | None = None


class RunIdentity(_Record):
    """What makes two invocations the same run (``--resume`` compares these)."""

    agent: AgentRecord
    model: ModelRecord
    runtime: RuntimeRecord
    problems: list[str]
    settings: RunSettings = Field(default_factory=RunSettings)

    def differences(self, other: RunIdentity) -> list[str]:
        """Names of the settings that differ from ``other``, for an error message."""
        out = []
        if self.agent.type != other.agent.type:
            out.append(f"agent '{other.agent.type}' vs '{self.agent.type}'")
        elif self.agent.config != other.agent.config:
            keys = sorted(
                k for k in set(self.agent.config) | set(other.agent.config)
                if self.agent.config.get(k) != other.agent.config.get(k)
            )
            out.append(f"agent config ({', '.join(keys)})")
        if self.model.id != other.model.id:
            out.append(f"model '{other.model.id}' vs '{self.model.id}'")
        # the agent image follows from the agent config and --image, both compared already
        if self.runtime.model_dump(exclude={"agent_image"}) != other.runtime.model_dump(exclude={"agent_image"}):
            out.append(f"runtime '{other.runtime.name}' vs '{self.runtime.name}'")
        if self.problems != other.problems:
            out.append(f"problems {other.problems} vs {self.problems}")
        if self.settings != other.settings:
            mine, theirs = self.settings.model_dump(), other.settings.model_dump()
            out.append(f"run settings ({', '.join(k for k in mine if mine[k] != theirs[k])})")
        return out


class RunRecord(_Record):
    """``run.json``: the whole run, rewritten atomically as problems start and finish
    (at most twice a second while problems run concurrently) and when the run ends."""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    identity: RunIdentity
    versions: dict[str, str] = Field(default_factory=dict)
    jobs: int = 1
    executor: str = "local"  # the executor of the latest start or resume (--executor)
    status: RunStatus = "running"
    started: datetime = Field(default_factory=utcnow)
    ended: datetime | None = None
    elapsed: float = 0.0
    resumed: list[datetime] = Field(default_factory=list)
    problems: dict[str, ProblemRecord] = Field(default_factory=dict)
    totals: Totals = Field(default_factory=Totals)
