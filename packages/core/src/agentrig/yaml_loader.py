"""agentrig's one YAML loader: every YAML file or value agentrig reads goes through :func:`load_yaml`.

A document is refused when its lists and mappings nest deeper than
:data:`~agentrig.boundary.NESTING_MAX`, with one line naming the file and the line. agentrig counts
the depth itself, on the parser's event stream, before a loader builds the document: the builds
of PyYAML differ here, and no answer may depend on which one a machine has. libyaml's composer
recurses on the C stack (30,000 levels: SIGSEGV), the pure-Python one on the Python stack
(``RecursionError``), and PyYAML 6.0.4's libyaml refuses more than 1,000 levels with an error of
its own. The event parsers of both keep their state on the heap: walking the events is safe at
any depth.

libyaml's loader builds the document when it is built in (several times faster); a document it
refuses is read again by the pure-Python one, whose error then names the line, so the message is
the same on every machine.
"""

from __future__ import annotations

import re
from typing import Any

from agentrig.boundary import NESTING_MAX, BoundaryError, check_nesting, nesting_message, shorten

__all__ = ["YamlError", "YamlNestingError", "load_yaml", "nesting_bound", "yaml_nesting_line"]

# What may stand before a block collection's first token on its line: indentation and the
# compact indicators (``- - key: v``, ``? - a``, ``: - b``). A line starts after any of YAML's line
# breaks (a bare ``\r``, NEL, the Unicode line and paragraph separators), not only ``\n``.
_LINE_PREFIX = re.compile(r"(?:^|(?<=[\r\x85\u2028\u2029]))[ \t?:-]*", re.MULTILINE)


class YamlError(ValueError):
    """A YAML document that is not read; the message is one line naming the file (and line)."""


class YamlNestingError(YamlError):
    """A YAML document whose lists and mappings nest deeper than :data:`~agentrig.boundary.NESTING_MAX`."""


def nesting_bound(text: str) -> int:
    """An upper bound, never low, of how deeply the YAML ``text``'s lists and mappings nest, found
    without parsing it: a small ordinary file comes out below :data:`~agentrig.boundary.NESTING_MAX`
    and is not counted on its events (for the others that costs a sixth of libyaml's load).

    A flow collection opens with ``[`` or ``{``, and a flow sequence's entry ``a: b`` is a mapping
    of its own: twice the brackets (strings' brackets counted too). A block collection nested in
    another starts right of it, but for a mapping's sequence at the mapping's own column: twice
    the columns, the widest line prefix of indentation and indicators, plus one pair for a
    collection that starts after a tag or anchor.
    """
    brackets = text.count("[") + text.count("{")
    widest = max((len(prefix) for prefix in _LINE_PREFIX.findall(text)), default=0)
    return 2 * brackets + 2 * (widest + 2)


def yaml_nesting_line(text: str) -> int | None:
    """The line (from 1) where the YAML ``text``'s lists and mappings first nest deeper than
    :data:`~agentrig.boundary.NESTING_MAX`, or ``None`` (invalid YAML too: the loader names its error).

    Counted on the event stream: libyaml's when built in (fast), the pure-Python parser's when not
    or when libyaml stops with an error (its own depth limit in some builds), so the answer is the
    same on every machine.
    """
    if nesting_bound(text) <= NESTING_MAX:
        return None
    import yaml

    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        try:
            return _deep_line(text, fast)
        except yaml.YAMLError:
            pass
    try:
        return _deep_line(text, yaml.SafeLoader)
    except yaml.YAMLError:
        return None


def _deep_line(text: str, loader: Any) -> int | None:
    import yaml

    depth = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > NESTING_MAX:
                return event.start_mark.line + 1 if event.start_mark is not None else 1
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
    return None


def load_yaml(text: str, where: str) -> Any:
    """The YAML document ``text`` (``yaml.safe_load``'s result), read from ``where`` (a file, a
    command-line option).

    Raises :class:`YamlNestingError` ``"{where}: line N: nested more than 100 levels deep; not
    read"`` for a document nested deeper than :data:`~agentrig.boundary.NESTING_MAX` (through
    aliases too, without the line), and :class:`YamlError` ``"{where}: invalid YAML at line L,
    column C: {reason}"`` for one that is not YAML, whichever loader the machine has.
    """
    import yaml

    line = yaml_nesting_line(text)
    if line is not None:
        raise YamlNestingError(nesting_message(where, line=line))
    fast = getattr(yaml, "CSafeLoader", None)
    try:
        try:
            data = yaml.load(text, Loader=fast or yaml.SafeLoader)
        except yaml.YAMLError:
            if fast is None:
                raise
            data = yaml.load(text, Loader=yaml.SafeLoader)  # the pure-Python parser names the error
    except yaml.YAMLError as exc:
        raise YamlError(_invalid(exc, where)) from None
    except RecursionError:  # not reached below the depth limit; a crash must still not be the answer
        raise YamlNestingError(nesting_message(where)) from None
    try:
        return check_nesting(data, where)  # what aliases make deep
    except BoundaryError as exc:
        raise YamlNestingError(str(exc)) from None


def _invalid(exc: Exception, where: str) -> str:
    mark = getattr(exc, "problem_mark", None)
    at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    reason = getattr(exc, "problem", None) or str(exc)
    return f"{where}: invalid YAML{at}: {shorten(' '.join(str(reason).split()))}"
