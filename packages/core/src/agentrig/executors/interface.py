"""The executor interface: what a plugin implements to run problem jobs somewhere.

An executor is declared by a plugin through the ``agentrig_executors`` hook as
an :class:`agentrig.ExecutorSpec` naming its class by import path; ``agentrig
run --executor NAME`` builds it as ``factory(options, jobs=N)`` with the
``-c executor.KEY=VALUE`` options and ``--jobs``.

The dispatcher (:func:`agentrig.run.runner.execute`) owns ``run.json``; the
executor moves :class:`~agentrig.run.job.ProblemJob` records to wherever
problems run, runs each through :func:`agentrig.run.problem_run.run_problem`
there, and brings back what that reports: its :class:`ProgressEvent` stream
and its final :class:`ProblemRecord`. A problem run writes its own
artifacts and appends its ``results.jsonl`` lines (the commit point of a
checkpoint) into the run directory, so the run directory must be visible to
the workers at the same path: the local disk for ``local``, shared storage
on a cluster.

What every executor guarantees (``docs/plugins.md`` has the long form):

* **At most one completion per checkpoint.** A problem runs in at most one
  place at a time; a problem retried after its worker died is run again
  through ``run_problem``, which starts after its last finished checkpoint
  (the ``results.jsonl`` lines) and never redoes or records a finished one
  twice. ``done`` is called exactly once per job.
* **Events in order per problem.** The events of one problem reach ``emit``
  in the order the problem run emitted them, and before its ``done``.
  Events of different problems may interleave.
* **Cancellation.** ``KeyboardInterrupt`` (Ctrl-C, SIGTERM) in ``run``
  stops every job: running problems get the same interrupt (the agent and
  its containers are cleaned up, what finished is written), queued ones
  never start, and ``run`` re-raises once nothing runs any more. Nothing the
  executor started (processes, tasks, containers) outlives ``run``.
* **Nothing shared.** A problem run gets nothing from the dispatcher but its
  job (and the environment); it may run on another machine.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel

from agentrig.run.job import ProblemJob
from agentrig.run.progress import EventSink
from agentrig.run.records import ProblemRecord

DoneCallback = Callable[[ProblemJob, ProblemRecord], None]
"""Called once per problem with its final record, in the dispatcher's process."""

_O = TypeVar("_O", bound=BaseModel)


class ExecutorError(Exception):
    """An executor cannot be used as configured; the message is one line naming what to fix."""


class ExecutorUnavailableError(ExecutorError):
    """What runs the jobs cannot be reached (a cluster address that does not answer)."""


class Executor(ABC):
    """Runs problem jobs and reports each one's events and final record.

    Subclasses are built as ``cls(options, jobs=N)``: ``options`` are the
    ``-c executor.*`` values (validate them with :meth:`parse_options` and an
    ``options_model``), ``jobs`` is ``--jobs``. Construction must be cheap
    and connect to nothing; :meth:`open` connects.
    """

    #: The pydantic model of this executor's ``-c executor.*`` options (``None``: takes none).
    options_model: ClassVar[type[BaseModel] | None] = None

    #: Seconds between calls of ``tick`` while jobs run; ``None``: not called while a job runs.
    tick_interval: float | None = None

    #: The name it is registered under (set by :func:`agentrig.executors.resolve.create_executor`).
    name: str = ""

    def __init__(self, options: Mapping[str, Any] | None = None, *, jobs: int = 1) -> None:
        """Keep the options (validated against :attr:`options_model`) and ``--jobs``."""
        self.jobs = max(1, jobs)
        self.options: BaseModel | None = None
        if self.options_model is not None:
            self.options = self.parse_options(self.options_model, options or {})
        elif options:
            raise ExecutorError(f"-c executor.{next(iter(options))}: this executor takes no options")

    def parse_options(self, model: type[_O], options: Mapping[str, Any]) -> _O:
        """Validate ``options``; a bad one raises :class:`ExecutorError` naming ``-c executor.FIELD``."""
        from pydantic import ValidationError

        try:
            return model.model_validate(dict(options))
        except ValidationError as exc:
            error = exc.errors()[0]
            field = ".".join(str(part) for part in error["loc"]) or "options"
            raise ExecutorError(f"-c executor.{field}: {error['msg']}") from None

    def open(self) -> None:
        """Connect to whatever runs the jobs; called before the run directory is created.

        Raise :class:`ExecutorUnavailableError` (one line naming the address
        or setting) when it cannot be reached. The default does nothing.
        """

    @abstractmethod
    def run(self, jobs: Sequence[ProblemJob], emit: EventSink, done: DoneCallback, tick: Callable[[], None]) -> None:
        """Run every job; call ``emit`` with each event and ``done`` once per job.

        ``tick`` is to be called about every :attr:`tick_interval` seconds
        while jobs run. ``KeyboardInterrupt`` propagates after every job has
        stopped and cleaned up.
        """

    def close(self) -> None:
        """Release what :meth:`open` acquired; called once after the run, also after a failure."""
