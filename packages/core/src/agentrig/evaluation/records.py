"""``evaluation.json`` and its parts: one test's result, counts, the checkpoint's verdict."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, StringConstraints, model_serializer

TestOutcome = Literal["passed", "failed", "error", "skipped"]
"""``error``: the test could not run (a fixture or collection error); ``skipped``: not run on purpose."""

#: The groups SlopCodeBench reports; other formats may name their own.
CORE_GROUP = "Core"
DEFAULT_GROUP = CORE_GROUP

MESSAGE_LIMIT = 500

#: At most this many metrics per checkpoint (a verifier's ``reward.json`` with more is refused).
MAX_METRICS = 64
#: A metric's name: 1 to this many characters, no control characters.
METRIC_NAME_MAX = 100
METRIC_NAME_PATTERN = r"^[^\x00-\x1f\x7f-\x9f]+$"

MetricName = Annotated[str, StringConstraints(min_length=1, max_length=METRIC_NAME_MAX, pattern=METRIC_NAME_PATTERN)]
"""A metric's name as the verifier wrote it (``correctness``, ``reward``, ...)."""
MetricValue = Annotated[float, Field(strict=True, allow_inf_nan=False)]
"""A metric's value: a finite number, as the verifier wrote it (not clamped to [0, 1])."""
Metrics = Annotated[dict[MetricName, MetricValue], Field(min_length=1, max_length=MAX_METRICS)]
"""Every metric of a reward, by name (read back from a run directory: validated, at most
:data:`MAX_METRICS`, finite values)."""


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(timezone.utc)


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TestResult(_Record):
    """One test: ``id`` as the test runner names it (pytest's node id), its outcome,
    its group (``Core``, ``Functionality``, ``Error``, ``Regression``, ...), how long
    it took in seconds, its markers, and the first lines of its failure (at most
    a few hundred characters)."""

    __test__ = False  # not a pytest test class

    id: str
    outcome: TestOutcome
    group: str = DEFAULT_GROUP
    duration: float | None = None
    markers: list[str] = Field(default_factory=list)
    message: str | None = None


class TestCounts(_Record):
    """How many tests had each outcome."""

    __test__ = False

    total: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0

    def add(self, outcome: TestOutcome) -> None:
        """Count one test in."""
        self.total += 1
        if outcome == "passed":
            self.passed += 1
        elif outcome == "failed":
            self.failed += 1
        elif outcome == "error":
            self.errors += 1
        else:
            self.skipped += 1

    def merge(self, other: TestCounts) -> None:
        """Count ``other``'s tests in."""
        self.total += other.total
        self.passed += other.passed
        self.failed += other.failed
        self.errors += other.errors
        self.skipped += other.skipped

    @property
    def all_passed(self) -> bool:
        """At least one test, and none failed or errored."""
        return self.total > 0 and self.failed == 0 and self.errors == 0

    @classmethod
    def of(cls, tests: list[TestResult]) -> TestCounts:
        """The counts of ``tests``."""
        counts = cls()
        for test in tests:
            counts.add(test.outcome)
        return counts


class EvaluationRecord(_Record):
    """``evaluation.json``: how the checkpoint's tests went.

    ``command``, ``exit_code``, ``timed_out``, ``elapsed`` (the whole
    evaluation, in seconds), ``started`` and ``output_tail`` (the end of the
    combined output, stdout then stderr, at most a few KB) describe the test
    command; ``passed`` is the verdict (``None`` when the checkpoint has no
    test). Structured results, when the tests produced a report: ``tests``
    (one :class:`TestResult` each), ``counts`` (over all tests), ``groups``
    (counts per group), ``score`` in [0, 1] (the reward a reward file gave, else
    the fraction of tests passed, else 1 or 0 by the exit code), ``policy``
    (the pass policy that decided ``passed``), ``report`` (the file name of
    the test runner's raw report saved in the ``evaluation/`` directory beside
    this file) and ``test_elapsed`` (the test command's own wall time).
    ``metrics``: every metric a reward file gave, by name, as written (a
    Harbor ``reward.json`` of ``{"correctness": 1, "performance": 0}``, or
    ``{"reward": x}`` from a ``reward.txt``); ``score`` is the headline taken
    from them (see :mod:`agentrig.formats.harbor.reward`). ``None``, and left
    out of the file, when the tests gave no metrics (and in older runs).
    ``not_run``: tests the runner collected that never finished (a session
    stopped by a timeout); they are not in ``tests`` or ``counts`` and count as
    not passed in ``score``. A checkpoint whose tests timed out before giving any
    result, or that failed to run (``infrastructure_failure``), has no ``score``.
    ``infrastructure_failure`` says the tests could not be run or read (the
    runtime failed, the runner crashed, the report is missing or malformed):
    ``error`` then says why, and it is no verdict on the agent's work.
    """

    command: str | None
    exit_code: int | None = None
    passed: bool | None = None
    timed_out: bool = False
    elapsed: float = 0.0
    started: datetime | None = None
    output_tail: str = ""
    error: str | None = None
    infrastructure_failure: bool = False
    score: float | None = Field(default=None, ge=0.0, le=1.0)
    policy: str | None = None
    counts: TestCounts | None = None
    groups: dict[str, TestCounts] = Field(default_factory=dict)
    tests: list[TestResult] = Field(default_factory=list)
    report: str | None = None
    test_elapsed: float | None = None
    metrics: Metrics | None = None
    left_out: str | None = Field(
        default=None, description="What the read-back limits left out of the raw report (-c readback.*), one line."
    )

    @model_serializer(mode="wrap")
    def _omit_no_metrics(self, handler: SerializerFunctionWrapHandler) -> Any:
        """Leave ``metrics`` out while ``None``: a record without them is what older versions wrote."""
        data = handler(self)
        if isinstance(data, dict) and data.get("metrics", 0) is None:
            del data["metrics"]
        return data
    not_run: int | None = None
