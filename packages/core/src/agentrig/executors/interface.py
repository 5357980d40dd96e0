"""The executor interface: what a plugin implements to run problem jobs somewhere.

An executor is declared by a plugin through the ``agentrig_executors`` hook as
an :class:`agentrig.ExecutorSpec` naming its class by import path; ``agentrig
run --executor NAME`` builds it as ``factory(options, jobs=N)`` with the
``-c executor.KEY=VALUE`` options and ``--jobs``.

The dispatcher (:func:`agentrig.run.runner.execute`) alone writes ``run.json``,
``results.jsonl`` and the ``problem.json`` files; the executor moves
:class:`~agentrig.run.job.ProblemJob` records to wherever problems run, runs
each through :func:`agentrig.run.problem_run.run_problem` there, and brings
back what that reports: its :class:`ProgressEvent` stream and its final
:class:`ProblemRecord`. A checkpoint's ``checkpoint_end`` event carries its
``results.jsonl`` line (``event.result``); the dispatcher records it when the
event reaches ``emit`` (the checkpoint's commit point), so a worker needs no
write access to those files. A job carries the checkpoints the dispatcher had
recorded for it (``job.finished``); a worker never reads ``results.jsonl``.

Artifacts (prompt, trajectory, evaluation, the agent's files, the workspace
snapshot) are written by the problem run under its job's ``output_dir``. Two
ways to get them into the run directory:

* **shared storage**: the run directory is visible to the workers at the
  same path (the local disk for ``local``, NFS or a cluster file system on a
  cluster) and ``output_dir`` is the run directory itself;
* **shipped**: the worker runs the job with ``output_dir`` pointing at a
  directory of its own, packs each finished checkpoint's directory
  (:func:`agentrig.run.shipping.pack_checkpoint`) and passes it with that
  checkpoint's event, ``emit(event, artifacts)``: the dispatcher writes it
  into the run directory (atomically, only if the checkpoint was not
  recorded before) and then records the line. A job run on such a worker
  needs the finished checkpoints' files (:func:`agentrig.run.shipping.pack_resume`,
  unpacked there with :func:`agentrig.run.shipping.unpack`).

What every executor guarantees (``docs/plugins.md`` has the long form):

* **At most one completion per checkpoint.** ``done`` is called exactly once
  per job. A problem run starts after the checkpoints in ``job.finished``; a
  job run again (a retry after its worker died) must first be made anew in
  the dispatcher's process with :meth:`ProblemJob.resumed`, so it starts
  after the last checkpoint the dispatcher recorded. The dispatcher records
  each checkpoint once: a result delivered again (a worker that died after
  sending it, then redid it) is dropped with its artifacts.
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
from typing import Any, ClassVar, Protocol, TypeVar

from pydantic import BaseModel

from agentrig.run.job import ProblemJob
from agentrig.run.progress import ProgressEvent
from agentrig.run.records import ProblemRecord

DoneCallback = Callable[[ProblemJob, ProblemRecord], None]
"""Called once per problem with its final record, in the dispatcher's process."""


class EventReceiver(Protocol):
    """The dispatcher's ``emit``: takes a problem's events in order, and a checkpoint's shipped artifacts.

    ``artifacts``, only with a ``checkpoint_end`` event carrying a result: the
    checkpoint's directory as packed by :func:`agentrig.run.shipping.pack_checkpoint`,
    from a worker that does not share the run directory's storage. A
    :data:`~agentrig.run.progress.EventSink` is what ``run_problem`` takes:
    pass ``emit`` itself where the run directory is shared.
    """

    def __call__(self, event: ProgressEvent, artifacts: bytes | None = None) -> None:
        """Take one event (recording ``event.result`` of a ``checkpoint_end``)."""

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
    def run(self, jobs: Sequence[ProblemJob], emit: EventReceiver, done: DoneCallback, tick: Callable[[], None]) -> None:
        """Run every job; call ``emit`` with each event and ``done`` once per job.

        A ``checkpoint_end`` event's result is recorded when it reaches
        ``emit``: pass every event on, in order, before the job's ``done``.

        ``tick`` is to be called about every :attr:`tick_interval` seconds
        while jobs run. ``KeyboardInterrupt`` propagates after every job has
        stopped and cleaned up.
        """

    def close(self) -> None:
        """Release what :meth:`open` acquired; called once after the run, also after a failure."""
