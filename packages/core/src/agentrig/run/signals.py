"""Signals: SIGTERM ends a run like Ctrl-C does, and cleanup is not cut short by a second one."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived; handled like Ctrl-C (cleanup, records written), but the exit status is 143."""


def interrupt_status(exc: BaseException) -> int:
    """The exit status after an interrupt: 143 (128 + SIGTERM) for SIGTERM, 130 (128 + SIGINT) for Ctrl-C."""
    return 128 + (signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT)


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated(f"signal {signum}")


def install_termination_handler() -> None:
    """Make SIGTERM raise :class:`Terminated` in the main thread (no-op elsewhere)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise_terminated)


@contextmanager
def deferred_interrupts() -> Iterator[None]:
    """Hold SIGINT and SIGTERM while cleaning up; one that arrived is raised afterwards.

    A second Ctrl-C must not leave a container or a half-written record behind.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        received.append(signum)

    old_int = signal.signal(signal.SIGINT, hold)
    old_term = signal.signal(signal.SIGTERM, hold)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)
    if received:
        raise Terminated(f"signal {received[0]}") if received[0] == signal.SIGTERM else KeyboardInterrupt()
