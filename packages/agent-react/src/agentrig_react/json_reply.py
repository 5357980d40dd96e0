"""Reading a JSON value out of a model's reply, the way tool calls are read.

:func:`parse_json_reply` tries, in order, until one gives a value of the
expected type:

1. ``as-is``: the whole reply (trimmed) is JSON;
2. ``fenced block``: the body of a fenced code block (```` ```json ````, or none);
3. ``bracket matching``: the outermost ``{...}`` or ``[...]`` span in the text;
4. ``syntax fixes``: each of those candidates again after :func:`~agentrig_react.json_repair.repair_json`
   (single quotes, trailing commas, Python literals, unquoted keys, comments,
   invalid escapes, raw newlines, missing closing brackets).

When nothing works it raises :class:`JSONReplyError` whose message is one line::

    no JSON array in the reply (tried as-is, fenced block, bracket matching, syntax fixes): <first complaint>
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, NamedTuple

from agentrig_react.json_repair import JSONRepairError, loads_lenient

Strategy = Literal["as-is", "fenced block", "bracket matching", "syntax fixes"]
_FENCE_RE = re.compile(r"```[ \t]*[\w+-]*[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)
_KINDS: dict[type | None, str] = {dict: "JSON object", list: "JSON array", None: "JSON value"}
_OPENERS = {"{": "}", "[": "]"}


class JSONReplyError(ValueError):
    """No JSON value of the expected type could be read from a reply; the message says what was tried."""


class JSONReply(NamedTuple):
    """A value read from a reply and the strategy that found it."""

    value: Any
    strategy: Strategy


def parse_json_reply(text: str, expect: type[dict] | type[list] | None = None) -> Any:
    """The JSON value in a model's reply ``text`` (a ``dict`` or ``list`` when ``expect`` says so).

    Raises :class:`JSONReplyError` (one line: what was expected, the strategies
    tried, the first parser complaint) when no strategy yields such a value.
    """
    return read_json_reply(text, expect).value


def read_json_reply(text: str, expect: type[dict] | type[list] | None = None) -> JSONReply:
    """Like :func:`parse_json_reply`, also naming the strategy that worked."""
    if expect not in _KINDS:
        raise TypeError(f"expect must be dict, list or None, not {expect!r}")
    kind = _KINDS[expect]
    if not isinstance(text, str) or not text.strip():
        raise JSONReplyError(f"no {kind} in the reply: the reply is empty")
    complaints: list[str] = []
    candidates: list[tuple[Strategy, str]] = [("as-is", text.strip())]
    candidates += [("fenced block", body.strip()) for body in _FENCE_RE.findall(text) if body.strip()]
    candidates += [("bracket matching", span) for span in bracket_spans(text, expect)]
    for strategy, candidate in candidates:
        try:
            value = json.loads(candidate, strict=False)
        except json.JSONDecodeError as exc:
            complaints.append(f"{exc.msg} at character {exc.pos}")
            continue
        if _fits(value, expect):
            return JSONReply(value, strategy)
        complaints.append(f"found a {type(value).__name__}, not a {kind}")
    for _strategy, candidate in candidates:
        try:
            value = loads_lenient(candidate)
        except JSONRepairError:
            continue
        if _fits(value, expect):
            return JSONReply(value, "syntax fixes")
    first = complaints[0] if complaints else "nothing that looks like JSON"
    raise JSONReplyError(
        f"no {kind} in the reply (tried as-is, fenced block, bracket matching, syntax fixes): {first}"
    )


def _fits(value: Any, expect: type | None) -> bool:
    return expect is None or isinstance(value, expect)


def bracket_spans(text: str, expect: type[dict] | type[list] | None = None) -> list[str]:
    """The outermost bracketed spans of ``text`` (``{...}`` and/or ``[...]``), in order.

    Brackets inside quoted strings do not count; an unclosed last span runs to
    the end of the text (a reply cut off by ``max_tokens``).
    """
    openers = "{" if expect is dict else "[" if expect is list else "{["
    spans: list[str] = []
    i, n = 0, len(text)
    while i < n:
        starts = [p for p in (text.find(o, i) for o in openers) if p != -1]
        if not starts:
            break
        start = min(starts)
        stack: list[str] = []
        quote: str | None = None
        j = start
        while j < n:
            ch = text[j]
            if quote is not None:
                if ch == "\\":
                    j += 2
                    continue
                if ch == quote:
                    quote = None
            elif ch == '"':
                quote = ch
            elif ch in _OPENERS:
                stack.append(_OPENERS[ch])
            elif ch in "}]":
                if stack and stack[-1] == ch:
                    stack.pop()
                if not stack:
                    break
            j += 1
        spans.append(text[start : j + 1])
        i = j + 1
    return spans
