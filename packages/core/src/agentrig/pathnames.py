"""File names as records keep them: a name that is not UTF-8 quoted as git quotes it.

POSIX file names are bytes; Python gives a name that is not valid UTF-8 (an agent's
``open(b'bad\\xff.txt', 'wb')``) as a string holding lone surrogates (``surrogateescape``), which
no JSON record can hold. Such a name is recorded as git's ``core.quotePath`` writes it: in double
quotes, each byte that is not UTF-8 as a three-digit octal escape, ``"`` and ``\\`` escaped, so
``bad\\xff.txt`` is recorded as ``"bad\\377.txt"``. A name that starts with ``"`` is quoted too, so
that reading a record back is never ambiguous; every other name is recorded as it is.
:func:`unquote_path` gives back the exact name, so a snapshot restores the file it recorded.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BeforeValidator, PlainSerializer, ValidationInfo

_SURROGATE = re.compile("[\udc80-\udcff]")
_C_ESCAPES = {"\a": "a", "\b": "b", "\t": "t", "\n": "n", "\v": "v", "\f": "f", "\r": "r", '"': '"', "\\": "\\"}
_C_UNESCAPES = {v: k for k, v in _C_ESCAPES.items()}
_ESCAPE = re.compile(r'\\(?:([0-7]{3})|(.))', re.DOTALL)


def needs_quoting(name: str) -> bool:
    """Whether ``name`` is recorded quoted: it holds bytes that are not UTF-8, or starts with ``"``."""
    return name.startswith('"') or _SURROGATE.search(name) is not None


def quote_path(name: str) -> str:
    """``name`` as a record keeps it (see the module docstring): quoted when :func:`needs_quoting`."""
    if not needs_quoting(name):
        return name
    out = []
    for char in name:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8
            out.append(f"\\{code - 0xDC00:03o}")
        elif char in _C_ESCAPES:
            out.append("\\" + _C_ESCAPES[char])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\{code:03o}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _unescape_bytes(body: str) -> bytes:
    def one(match: re.Match[str]) -> str:
        if match.group(1) is not None:
            return chr(0xDC00 + int(match.group(1), 8)) if int(match.group(1), 8) >= 0x80 else chr(int(match.group(1), 8))
        return _C_UNESCAPES.get(match.group(2), match.group(2))

    return _ESCAPE.sub(one, body).encode("utf-8", "surrogateescape")


def unquote_path(recorded: str) -> str:
    """The name a record's ``recorded`` stands for (the inverse of :func:`quote_path`); a name that is
    not quoted is returned as it is."""
    if len(recorded) < 2 or not (recorded.startswith('"') and recorded.endswith('"')):
        return recorded
    return _unescape_bytes(recorded[1:-1]).decode("utf-8", "surrogateescape")


def escape_undecodable(text: str) -> str:
    """``text`` with each byte that was not UTF-8 (a lone surrogate of ``surrogateescape``) written as
    ``\\xNN``: for text shown rather than recorded (a page, a terminal line)."""
    return _SURROGATE.sub(lambda match: f"\\x{ord(match.group()) - 0xDC00:02x}", text)


def _unquote(value: object, info: ValidationInfo) -> object:
    # only a record read as JSON holds quoted names: a name built in memory is the file's own
    return unquote_path(value) if isinstance(value, str) and info.mode == "json" else value


#: A file name (a POSIX path relative to a workspace) in a record: the exact name in memory, quoted
#: when written as JSON (:func:`quote_path`) and unquoted when a record is read as JSON
#: (``model_validate_json``; a record validated from a parsed document keeps the quoted form, which
#: is what a reader shows).
RecordedPath = Annotated[str, BeforeValidator(_unquote), PlainSerializer(quote_path, return_type=str, when_used="json")]

__all__ = ["RecordedPath", "escape_undecodable", "needs_quoting", "quote_path", "unquote_path"]
