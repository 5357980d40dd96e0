"""Reading the almost-JSON that models write.

Models asked for JSON write single quotes, trailing commas, Python's
``True``/``None``, unquoted keys, ``\\d`` in regexes, raw newlines and
unescaped quotes inside strings, comments, or stop before the last brace.
:func:`repair_json` rewrites such text into JSON in one pass that knows
whether it is inside a string, then parses it.
"""

from __future__ import annotations

import json
import re
from typing import Any

_VALID_ESCAPES = set('"\\/bfnrt')
_HEX = set("0123456789abcdefABCDEF")
_WORDS = {"True": "true", "False": "false", "None": "null", "true": "true", "false": "false", "null": "null"}
_CLOSERS = {"{": "}", "[": "]"}


class JSONRepairError(ValueError):
    """The text is not JSON and could not be repaired into it."""


def loads_lenient(text: str) -> Any:
    """Parse ``text`` as JSON, repairing it when plain parsing fails.

    Raises :class:`JSONRepairError` with the parser's complaint when even the
    repaired text is not JSON.
    """
    try:
        return json.loads(text, strict=False)
    except json.JSONDecodeError:
        pass
    repaired = repair_json(text)
    try:
        return json.loads(repaired, strict=False)
    except json.JSONDecodeError as exc:
        raise JSONRepairError(f"not valid JSON even after repair: {exc.msg} at character {exc.pos}") from None


def _next_significant(text: str, index: int) -> str:
    while index < len(text) and text[index] in " \t\r\n":
        index += 1
    return text[index] if index < len(text) else ""


def repair_json(text: str) -> str:
    """Rewrite almost-JSON ``text`` into JSON text (not parsed; see :func:`loads_lenient`)."""
    out: list[str] = []
    stack: list[str] = []
    quote: str | None = None
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if quote is not None:
            if ch == "\\" and i + 1 < n:
                nxt = text[i + 1]
                if nxt == "u" and i + 6 <= n and all(c in _HEX for c in text[i + 2 : i + 6]):
                    out.append(text[i : i + 6])
                    i += 6
                    continue
                if nxt in _VALID_ESCAPES and nxt != "u":
                    out.append("\\" + nxt)
                elif nxt == "'":
                    out.append("'")
                else:
                    # An escape JSON does not know (\d in a regex): keep the backslash literally.
                    out.append("\\\\" + (nxt if nxt != '"' else '\\"'))
                i += 2
                continue
            if ch == quote:
                # A quote followed by something that cannot follow a string is part of the text.
                if _next_significant(text, i + 1) in (",", "}", "]", ":", ""):
                    out.append('"')
                    quote = None
                else:
                    out.append('\\"')
                i += 1
                continue
            if ch == '"':
                out.append('\\"')
            elif ch == "\n":
                out.append("\\n")
            elif ch == "\t":
                out.append("\\t")
            elif ch == "\r":
                out.append("\\r")
            else:
                out.append(ch)
            i += 1
            continue
        if ch in "\"'":
            quote = ch
            out.append('"')
            i += 1
            continue
        if ch in "{[":
            stack.append(ch)
            out.append(ch)
        elif ch in "}]":
            if stack:
                stack.pop()
            out.append(ch)
        elif ch == ",":
            if _next_significant(text, i + 1) not in ("}", "]", ""):
                out.append(ch)
        elif (ch == "/" and text.startswith("//", i)) or ch == "#":
            end = text.find("\n", i)
            i = n if end == -1 else end
            continue
        elif ch.isalpha() or ch == "_":
            match = re.match(r"[A-Za-z_][A-Za-z0-9_]*", text[i:])
            assert match is not None
            word = match.group(0)
            if _next_significant(text, i + len(word)) == ":":
                out.append(json.dumps(word))
            else:
                out.append(_WORDS.get(word, word))
            i += len(word)
            continue
        else:
            out.append(ch)
        i += 1
    if quote is not None:
        out.append('"')
    # A reply cut off before its closing brackets (max_tokens) still carries the call.
    while stack:
        out.append(_CLOSERS[stack.pop()])
    return "".join(out)


def find_json_objects(text: str) -> list[str]:
    """The outermost ``{...}`` spans in ``text``, in order; an unclosed last one runs to the end."""
    spans: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        start = text.find("{", i)
        if start == -1:
            break
        depth = 0
        quote: str | None = None
        j = start
        while j < n:
            ch = text[j]
            if quote is not None:
                if ch == "\\":
                    j += 2
                    continue
                if ch == quote and (quote == '"' or _next_significant(text, j + 1) in (",", "}", "]", ":", "")):
                    quote = None
            elif ch in "\"'":
                quote = ch
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        spans.append(text[start : j + 1])
        i = j + 1
    return spans
