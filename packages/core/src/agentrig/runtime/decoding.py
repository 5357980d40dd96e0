"""Incremental output decoding and bounded output buffers.

Bytes arrive in arbitrary chunks: a UTF-8 character may be split across two
reads. An incremental decoder holds the partial character back until the
rest arrives, so nothing is dropped or garbled; invalid bytes become U+FFFD.
"""

from __future__ import annotations

import codecs
from collections import deque


class StreamDecoder:
    """Decodes one output stream chunk by chunk (UTF-8, invalid bytes replaced)."""

    def __init__(self, encoding: str = "utf-8") -> None:
        """A decoder for ``encoding``."""
        self._decoder = codecs.getincrementaldecoder(encoding)(errors="replace")

    def feed(self, data: bytes) -> str:
        """Text completed by ``data`` (a trailing partial character is held back)."""
        return self._decoder.decode(data)

    def finish(self) -> str:
        """Whatever is held back at end of stream (an unfinished character becomes U+FFFD)."""
        return self._decoder.decode(b"", final=True)


class OutputBuffer:
    """Keeps a stream's text for the final result, up to ``limit`` characters.

    Past the limit the oldest text is dropped (the end of an output is what
    explains a failure) and ``truncated`` is set; streamed events still carry
    everything.
    """

    def __init__(self, limit: int) -> None:
        """A buffer keeping at most ``limit`` characters."""
        self.limit = limit
        self.truncated = False
        self._parts: deque[str] = deque()
        self._size = 0

    def append(self, text: str) -> None:
        """Add ``text``, dropping the oldest text beyond the limit."""
        if not text:
            return
        self._parts.append(text)
        self._size += len(text)
        while self._size > self.limit and self._parts:
            excess = self._size - self.limit
            head = self._parts[0]
            self.truncated = True
            if len(head) <= excess:
                self._parts.popleft()
                self._size -= len(head)
            else:
                self._parts[0] = head[excess:]
                self._size -= excess

    def text(self) -> str:
        """The kept text."""
        return "".join(self._parts)
