"""The stream-parser interface: turning an agent process's output into steps."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from agentrig.runtime.interface import RuntimeEvent
    from agentrig.trajectory import TrajectoryStep
    from agentrig.usage import UsageTracker


@runtime_checkable
class StreamParser(Protocol):
    """Consumes runtime events incrementally and yields trajectory steps.

    ``consume`` may receive partial lines; ``drain_steps`` yields the steps
    completed so far; ``finish`` flushes what remains at the end of the stream.
    ``usage`` is the live usage seen so far.
    """

    @property
    def usage(self) -> UsageTracker: ...

    def consume(self, event: RuntimeEvent) -> None: ...

    def drain_steps(self) -> Iterable[TrajectoryStep]: ...

    def finish(self) -> Iterable[TrajectoryStep]: ...
