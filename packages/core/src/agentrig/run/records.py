"""The records a run writes to disk, one pydantic model per file or line.

``run.json`` is :class:`RunRecord`; each line of ``results.jsonl`` a
:class:`CheckpointResultLine`; ``evaluation.json`` an :class:`EvaluationRecord`;
``diff.json`` a :class:`DiffRecord`; ``<problem>/problem.json`` a
:class:`ProblemRecord`. ``results.jsonl`` is the source of truth for what is
finished (``--resume`` reads it); ``run.json`` summarises.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeGuard

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from agentrig.boundary import NAME_RULE, BoundaryError, ascii_number, is_safe_name, shorten
from agentrig.evaluation.records import (
    EvaluationRecord as EvaluationRecord,  # evaluation.json: one of a run's records
    Metrics,
    TestCounts,
)
from agentrig.pathnames import RecordedPath
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


class _OmitsUnset(_Record):
    """A record whose ``_omit_when_none`` fields are left out of the JSON while ``None``.

    Fields added for attempts (``--attempts K``) are absent from the records of a
    one-attempt run, so its files stay byte for byte what they were before.
    """

    _omit_when_none: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for name in self._omit_when_none:
                if data.get(name, 0) is None:
                    del data[name]
        return data


ATTEMPT_PREFIX = "attempt_"
"""Attempt ``i`` of a problem lives in ``<problem>/attempt_<i>/`` (``--attempts K`` with K > 1)."""


def unit_name(problem: str, attempt: int | None) -> str:
    """What a problem run is called in the run directory, ``run.json`` and progress:
    the problem's name, or ``<problem>/attempt_<i>`` for attempt ``i`` of a run with ``--attempts K``."""
    return problem if attempt is None else f"{problem}/{ATTEMPT_PREFIX}{attempt}"


def split_unit(name: str) -> tuple[str, int | None]:
    """``(problem, attempt)`` of a unit name (:func:`unit_name`); attempt ``None`` without one."""
    problem, _, rest = name.rpartition("/")
    attempt = ascii_number(rest[len(ATTEMPT_PREFIX):]) if problem and rest.startswith(ATTEMPT_PREFIX) else None
    return (problem, attempt) if attempt is not None else (name, None)


def is_safe_unit(name: object) -> TypeGuard[str]:
    """Whether ``name`` is a problem run's name as the run machinery makes it: a problem's name
    (:func:`agentrig.boundary.is_safe_name`), or that and one ``/attempt_<i>``."""
    if not isinstance(name, str):
        return False
    problem, attempt = split_unit(name)
    return is_safe_name(problem) and (attempt is None or name == unit_name(problem, attempt))


def check_unit(name: object, where: str) -> str:
    """``name`` when :func:`is_safe_unit`; else :class:`~agentrig.boundary.BoundaryError` naming ``where``."""
    if is_safe_unit(name):
        return name
    raise BoundaryError(f"{where}: '{shorten(name)}' is not a valid problem name ({NAME_RULE}; an attempt adds '/{ATTEMPT_PREFIX}<i>')")


class FileChange(_Record):
    """One path that differs between two snapshots (quoted when not UTF-8: :mod:`agentrig.pathnames`);
    sizes in bytes, ``None`` when absent."""

    path: RecordedPath
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


class TriesSpent(_Record):
    """What a checkpoint's earlier tries (``tries/<n>/``, kept by ``--retries`` and ``--resume --retry-errors``)
    spent: money spent on a failed try is spent, so every total counts it.

    ``tries``: how many; ``cost`` in USD, null once a try's cost is unknown (no pricing for a model call, or its
    ``try.json`` unreadable); ``tokens`` and ``steps``: summed over them.
    """

    tries: int = 0
    cost: float | None = 0.0
    tokens: TokenUsage = Field(default_factory=TokenUsage)
    steps: int = 0

    @classmethod
    def of(cls, lines: list[CheckpointResultLine | None]) -> TriesSpent | None:
        """What the tries whose result lines are ``lines`` spent, each counted alone (``None``: a try whose record
        could not be read, its cost unknown); ``None`` without a try."""
        if not lines:
            return None
        spent = cls(tries=len(lines))
        for line in lines:
            cost = None if line is None else _known_cost(line)
            spent.cost = None if spent.cost is None or cost is None else spent.cost + cost
            if line is not None:
                spent.tokens = spent.tokens + line.tokens
                spent.steps += line.steps
        return spent

    def __add__(self, other: TriesSpent) -> TriesSpent:
        cost = None if self.cost is None or other.cost is None else self.cost + other.cost
        return TriesSpent(tries=self.tries + other.tries, cost=cost, tokens=self.tokens + other.tokens,
                          steps=self.steps + other.steps)


class CheckpointResultLine(_OmitsUnset):
    """One line of ``results.jsonl``: a finished (or skipped) checkpoint.

    ``attempt`` (1..K) is present only in runs with ``--attempts K`` (K > 1);
    ``metrics`` (the reward's metrics, as in ``evaluation.json``) only where the tests gave them;
    ``not_run`` (collected tests that never finished: the test command's time
    was up) only when there were some. ``score`` is ``evaluation.json``'s.
    ``tries`` (how many tries the checkpoint took, the earlier ones kept in
    ``<checkpoint>/tries/<n>/``) only when it took more than one, and ``tries_spent``
    (what those earlier tries spent) only when one was kept. ``cost``, ``tokens`` and
    ``steps`` are the counted try's own; every total adds ``tries_spent`` to them.
    """

    _omit_when_none = ("attempt", "metrics", "not_run", "tries", "tries_spent")

    problem: str
    checkpoint: str
    index: int
    status: CheckpointStatus
    passed: bool | None = None
    exit_code: int | None = None
    had_error: bool = False
    stop_reason: str | None = None
    cost: float | None = Field(default=0.0, description="USD; null when unknown (no pricing for a model call), never 0.")
    cost_known: bool = Field(default=True, description="False exactly when cost is null (also read from older runs).")
    prior_cost: float = 0.0
    steps: int = 0
    tokens: TokenUsage = Field(default_factory=TokenUsage)
    agent_elapsed: float = 0.0
    evaluation_elapsed: float = 0.0
    elapsed: float = 0.0
    started: datetime | None = None
    completed: datetime | None = None
    score: float | None = None
    policy: str | None = None
    infrastructure_failure: bool = False
    timed_out: bool = False
    tests: TestCounts | None = None
    groups: dict[str, TestCounts] = Field(default_factory=dict)
    attempt: int | None = None
    metrics: Metrics | None = None
    not_run: int | None = None
    tries: int | None = Field(default=None, ge=2)
    tries_spent: TriesSpent | None = None

    @property
    def spent(self) -> float | None:
        """USD spent on the checkpoint, its earlier tries included; ``None`` when some of it is unknown."""
        own = _known_cost(self)
        tries = self.tries_spent.cost if self.tries_spent is not None else 0.0
        return None if own is None or tries is None else own + tries

    @property
    def unit(self) -> str:
        """The problem run this line belongs to: ``problem`` or ``problem/attempt_<i>``."""
        return unit_name(self.problem, self.attempt)

    @property
    def counted_score(self) -> float | None:
        """The score this checkpoint counts with in every mean (see :func:`counted_score`)."""
        return counted_score(self.passed, self.score)

    @property
    def without_results(self) -> bool:
        """Evaluated, but with nothing to grade (see :func:`without_results`)."""
        return without_results(self.passed, self.score, self.infrastructure_failure, self.timed_out)


TryReason = Literal["retries", "retry_errors"]
"""Why a try was kept and the checkpoint run again: ``retries`` (automatically, ``--retries N``)
or ``retry_errors`` (``--resume --retry-errors``)."""


class TryRecord(_Record):
    """``<checkpoint>/tries/<n>/try.json``: one earlier try of a checkpoint, kept beside its files
    (``prompt.txt``, ``inference_result.json``, ``evaluation.json``, ``trajectory.jsonl``, ...).

    ``result`` is the line the try would have committed (or did: a line
    ``--retry-errors`` took back), ``cause`` one line saying why it was tried
    again, ``delay`` the seconds waited before the next try (automatic retries).
    """

    number: int = Field(ge=1)
    reason: TryReason
    cause: str
    result: CheckpointResultLine | None = None
    delay: float | None = None
    kept: datetime = Field(default_factory=utcnow)


def counted_score(passed: bool | None, score: float | None) -> float | None:
    """The score a checkpoint counts with in every total (``run.json``, ``show``, ``compare``, pass@k):
    its evaluation's ``score`` (``results.jsonl`` copies ``evaluation.json``'s); a checkpoint evaluated
    without one (timed out before any result, an infrastructure failure; an exit-code test of a run
    older than per-checkpoint scores) counts by its verdict: 1 if it passed, else 0. ``None``: no test."""
    if score is not None:
        return score
    if passed is None:
        return None
    return 1.0 if passed else 0.0


def without_results(passed: bool | None, score: float | None, infrastructure_failure: bool, timed_out: bool) -> bool:
    """Whether an evaluated checkpoint had nothing to grade: its tests could not run or be read, or
    timed out before giving a result (no score); it counts as failed (or errored) in every total."""
    return passed is not None and score is None and (infrastructure_failure or timed_out)


def _known_cost(line: CheckpointResultLine) -> float | None:
    return line.cost if line.cost_known else None


class Totals(_OmitsUnset):
    """Sums over checkpoints: cost in USD (null once any checkpoint's cost is unknown), tokens, model steps, verdicts.

    ``cost`` and ``tokens`` count every try of a checkpoint, the failed tries kept in
    ``tries/<n>/`` included (``tries_spent`` says how much of them was theirs; absent
    when no checkpoint took more than one try); ``steps`` counts the counted tries'.

    ``tests`` sums the per-test counts of every checkpoint that had them (the
    tests that ran; ``tests_not_run`` those collected that never finished); ``mean_score`` is the mean of the evaluated checkpoints'
    scores (``scored`` of them: every checkpoint with a test, one without
    results counted as failed, see :func:`counted_score`); ``without_results``
    counts those evaluated checkpoints whose tests timed out before giving a
    result or could not run; ``problems_solved`` / ``problems_partial`` count
    problems with every / some (not all) checkpoints passed (run totals only).
    """

    cost: float | None = 0.0
    tokens: TokenUsage = Field(default_factory=TokenUsage)
    steps: int = 0
    checkpoints: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    tests: TestCounts = Field(default_factory=TestCounts)
    scored: int = 0
    score_sum: float = 0.0
    mean_score: float | None = None
    without_results: int = 0
    tests_not_run: int = 0
    problems: int = 0
    problems_solved: int = 0
    problems_partial: int = 0
    tries_spent: TriesSpent | None = None

    _omit_when_none = ("tries_spent",)

    def add(self, line: CheckpointResultLine) -> None:
        """Count one result line in (what its earlier tries spent too)."""
        cost = _known_cost(line)
        self.cost = None if self.cost is None or cost is None else self.cost + cost
        self.tokens = self.tokens + line.tokens
        if line.tries_spent is not None:
            self._add_tries(line.tries_spent)
        self.steps += line.steps
        self.checkpoints += 1
        self.passed += line.status == "passed"
        self.failed += line.status == "failed"
        self.errors += line.status == "error"
        self.skipped += line.status == "skipped"
        if line.tests is not None:
            self.tests.merge(line.tests)
        score = line.counted_score
        if score is not None:
            self.scored += 1
            self.score_sum += score
        self.without_results += line.without_results
        self.tests_not_run += line.not_run or 0
        self.mean_score = self.score_sum / self.scored if self.scored else None

    def merge(self, other: Totals, expected_checkpoints: int | None = None) -> None:
        """Count ``other``'s checkpoints in; with ``expected_checkpoints`` (how many the
        problem has), ``other`` is one problem's totals and counts as solved or partial."""
        self.cost = None if self.cost is None or other.cost is None else self.cost + other.cost
        self.tokens = self.tokens + other.tokens
        if other.tries_spent is not None:  # in other's cost and tokens already
            self.tries_spent = other.tries_spent if self.tries_spent is None else self.tries_spent + other.tries_spent
        self.steps += other.steps
        self.checkpoints += other.checkpoints
        self.passed += other.passed
        self.failed += other.failed
        self.errors += other.errors
        self.skipped += other.skipped
        self.tests.merge(other.tests)
        self.scored += other.scored
        self.score_sum += other.score_sum
        self.without_results += other.without_results
        self.tests_not_run += other.tests_not_run
        self.mean_score = self.score_sum / self.scored if self.scored else None
        if expected_checkpoints is not None:
            self.problems += 1
            if expected_checkpoints and other.passed >= expected_checkpoints:
                self.problems_solved += 1
            elif other.passed:
                self.problems_partial += 1

    def _add_tries(self, spent: TriesSpent) -> None:
        self.cost = None if self.cost is None or spent.cost is None else self.cost + spent.cost
        self.tokens = self.tokens + spent.tokens
        self.tries_spent = spent if self.tries_spent is None else self.tries_spent + spent

    @classmethod
    def of(cls, lines: list[CheckpointResultLine]) -> Totals:
        """The totals of ``lines``."""
        totals = cls()
        for line in lines:
            totals.add(line)
        return totals


class ProblemScore(_Record):
    """A problem's own score, where its format defines one from its checkpoints' (a Harbor
    multi-step task's reward): ``score`` and the ``rule`` that made it (``mean of 2 steps``)."""

    score: float
    rule: str


class NetworkRecord(_OmitsUnset):
    """The network a problem's container ran with (the docker runtime's), per phase.

    ``agent`` and ``verifier`` are ``none``, ``host``, ``bridge`` or the name of
    the network the run named; ``bridge`` is the engine's default bridge, or a
    private bridge network made for the container (named in ``bridge_network``).
    ``verifier`` is the network while the format's verifier ran (a Harbor task's
    verifier phase). ``notices``: where the problem got less than it asked for.
    """

    agent: str
    verifier: str
    bridge_network: str | None = None
    notices: list[str] = Field(default_factory=list)

    _omit_when_none = ("bridge_network",)


class ProblemRecord(_OmitsUnset):
    """A problem's status in ``run.json`` (and in ``<problem>/problem.json``).

    ``error`` is one line saying why a problem failed outside its checkpoints
    (setup, runtime, a crash); checkpoint verdicts live in ``results.jsonl``.
    ``score`` is the problem's own score where its format defines one
    (:meth:`~agentrig.formats.interface.ProblemFormat.problem_score`); absent otherwise.
    ``network``: what its container's network was (docker runtime; absent otherwise).
    """

    _omit_when_none = ("score", "network")

    name: str
    path: str
    format: str | None = None
    status: ProblemStatus = "pending"
    checkpoints: list[str] = Field(default_factory=list)
    finished: int = 0
    totals: Totals = Field(default_factory=Totals)
    started: datetime | None = None
    ended: datetime | None = None
    error: str | None = None
    score: ProblemScore | None = None
    network: NetworkRecord | None = None


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

    @property
    def label(self) -> str:
        """The model as shown to people: ``provider/name``, ``replay:/path/replay.jsonl`` for a replay file."""
        from agentrig.model_definition import model_label

        return model_label(self.provider, self.name)


class RuntimeRecord(_Record):
    """Where commands ran.

    ``image`` is ``--image``; ``agent_image`` the agent's own image built from
    it (its config's ``docker_template``), which the sessions ran in.
    """

    name: str
    image: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    agent_image: str | None = None


class RunSettings(_OmitsUnset):
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
    #: ``--attempts K`` when K > 1 (``None``: one attempt, the layout without attempt directories).
    attempts: int | None = None

    _omit_when_none = ("attempts",)


class ForkRecord(_Record):
    """Where a forked run (``agentrig run ... --from RUN/PROBLEM/CHECKPOINT``) started: the recorded
    checkpoint whose snapshot it took its workspace from (and, with ``keep_context``, its agent's conversation).

    The checkpoints up to and including ``checkpoint`` are inherited: the forked run neither runs nor
    records them (no ``results.jsonl`` line, not in its problem's ``checkpoints``), so its totals and
    pass rates count only the checkpoints it ran.
    """

    #: The source run directory, absolute (as it was when the fork started).
    run: str
    #: The source run's ``run_id`` (``None``: its ``run.json`` did not say).
    run_id: str | None = None
    #: The source's problem run: ``<problem>`` or ``<problem>/attempt_<i>``.
    problem: str
    checkpoint: str
    #: ``--keep-context``: the agent's recorded conversation at ``checkpoint`` was restored.
    keep_context: bool = False

    @property
    def label(self) -> str:
        """``RUN/PROBLEM/CHECKPOINT`` as people read it (the run by its directory's name)."""
        from pathlib import PurePath

        return f"{PurePath(self.run).name}/{self.problem}/{self.checkpoint}"


class RunIdentity(_OmitsUnset):
    """What makes two invocations the same run (``--resume`` compares these).

    ``forked_from`` is present only in a forked run (``--from``).
    """

    _omit_when_none = ("forked_from",)

    agent: AgentRecord
    model: ModelRecord | None = None  # None: the agent needs no model and none was given
    runtime: RuntimeRecord
    problems: list[str]
    settings: RunSettings = Field(default_factory=RunSettings)
    datasets: list[str] = Field(default_factory=list)  # installed datasets run, as NAME@VERSION
    forked_from: ForkRecord | None = None

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
        mine, theirs = (self.model.id if self.model else None), (other.model.id if other.model else None)
        if mine != theirs:
            from agentrig.model_definition import model_spelling

            out.append(f"model '{model_spelling(theirs or 'none')}' vs '{model_spelling(mine or 'none')}'")
        # the agent image follows from the agent config and --image, both compared already
        if self.runtime.model_dump(exclude={"agent_image"}) != other.runtime.model_dump(exclude={"agent_image"}):
            out.append(f"runtime '{other.runtime.name}' vs '{self.runtime.name}'")
        if self.problems != other.problems:
            out.append(f"problems {other.problems} vs {self.problems}")
        if self.datasets != other.datasets:
            out.append(f"datasets {other.datasets} vs {self.datasets}")
        if self.forked_from != other.forked_from:
            mine_fork, their_fork = self.forked_from, other.forked_from
            out.append(f"--from '{their_fork.label if their_fork else 'none'}' vs '{mine_fork.label if mine_fork else 'none'}'"
                       + (" (--keep-context)" if mine_fork and their_fork and mine_fork.label == their_fork.label else ""))
        if self.settings != other.settings:
            mine, theirs = self.settings.model_dump(), other.settings.model_dump()
            out.append(f"run settings ({', '.join(k for k in mine if mine[k] != theirs[k])})")
        return out


class PassAtK(_Record):
    """The reducers over ``n`` finished attempts, ``c`` of them correct; each ``None`` while no
    attempt has finished (:mod:`agentrig.run.pass_at_k` computes them).

    ``pass_at_1`` and ``pass_at_k``: the unbiased estimator ``1 - C(n-c, k) / C(n, k)``
    (some of k attempts pass); ``pass_hat_k`` (pass^k): ``C(c, k) / C(n, k)`` (all k attempts
    pass); ``majority``: 1 when more than half the attempts passed, else 0; ``mean_score`` and
    ``max_score``: the mean and the highest of the attempts' scores (``None`` where evaluations
    give none). ``k`` is the run's ``--attempts``; with fewer than ``k`` attempts finished, the
    estimators take ``k = n``. Over several problems each figure is the mean of theirs.
    """

    n: int = 0
    c: int = 0
    pass_at_1: float | None = None
    pass_at_k: float | None = None
    mean_score: float | None = None
    pass_hat_k: float | None = None
    majority: float | None = None
    max_score: float | None = None


class ProblemPassAtK(_Record):
    """A problem's pass@k: solved (every checkpoint passed) per attempt, and each checkpoint's."""

    solved: PassAtK = Field(default_factory=PassAtK)
    checkpoints: dict[str, PassAtK] = Field(default_factory=dict)


class PassAtKSummary(_Record):
    """``run.json``'s ``pass_at_k`` (runs with ``--attempts K``, K > 1).

    ``run``: the mean over problems of their ``solved`` estimates (``n``, ``c``
    summed); ``checkpoints``: the mean over problems per checkpoint name.
    """

    k: int
    run: PassAtK = Field(default_factory=PassAtK)
    checkpoints: dict[str, PassAtK] = Field(default_factory=dict)
    problems: dict[str, ProblemPassAtK] = Field(default_factory=dict)


class CacheRecord(_OmitsUnset):
    """``run.json``'s ``cache``: the model-call cache (``--cache [DIR]``, ``--cache-policy``, ``--cache-ttl``)
    of the run's latest start or resume; ``--resume`` without cache options uses it again.

    ``directory`` is absolute; ``ttl`` the seconds an entry is good for (absent: for ever).
    """

    _omit_when_none = ("ttl",)

    directory: str
    policy: Literal["read", "write", "readwrite"] = "readwrite"
    ttl: float | None = Field(default=None, gt=0)

    @classmethod
    def of(cls, cache: Any) -> CacheRecord | None:
        """The record of a :class:`~agentrig.llm.cache.ModelCallCache` (``None``: no cache)."""
        if cache is None:
            return None
        return cls(directory=str(cache.directory), policy=cache.policy, ttl=cache.ttl)

    def to_cache(self) -> Any:
        """The :class:`~agentrig.llm.cache.ModelCallCache` it records; :class:`ValueError` (one line) when its
        directory, read back from a run directory, is not an absolute path or is not a directory."""
        from pathlib import PurePath

        from agentrig.llm.cache import ModelCallCache

        path = Path(self.directory)
        if not PurePath(self.directory).is_absolute() or ".." in PurePath(self.directory).parts:
            raise ValueError(f"cache.directory '{shorten(self.directory)}' is not an absolute path")
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            raise ValueError(f"cache.directory '{shorten(self.directory)}' is not a directory")
        return ModelCallCache(directory=path, policy=self.policy, ttl=self.ttl)


class RunRecord(_OmitsUnset):
    """``run.json``: the whole run, rewritten atomically as problems start and finish
    (at most twice a second while problems run concurrently) and when the run ends.

    With ``--attempts K`` (K > 1), ``problems`` holds one record per attempt, keyed
    ``<problem>/attempt_<i>``, and ``pass_at_k`` the estimates. ``cache`` (absent without one): the
    model-call cache of the latest start or resume.
    """

    _omit_when_none = ("pass_at_k", "cache")

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
    pass_at_k: PassAtKSummary | None = None
    cache: CacheRecord | None = None
