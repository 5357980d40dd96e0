"""Cutting long tool output down to its head and tail, saying how much was cut."""

from __future__ import annotations


def truncate_middle(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` characters, else its head and tail around a marker.

    The marker says how many characters (and lines) were cut, so the model
    knows the output is incomplete and can ask for the part it needs.
    """
    if len(text) <= limit:
        return text
    cut_chars = len(text) - limit
    head_len = limit // 2
    tail_len = limit - head_len
    head = text[:head_len]
    tail = text[len(text) - tail_len :] if tail_len else ""
    cut = text[head_len : len(text) - tail_len]
    marker = (
        f"\n[... {cut_chars} characters ({cut.count(chr(10))} lines) cut from the middle "
        f"of {len(text)} characters of output ...]\n"
    )
    return head + marker + tail
