"""A checkpoint's trajectory as page data: its ``trajectory.jsonl`` lines, embedded as they were read, for the
page's scripts to read and draw (``static/trajectory.js`` reads the steps and makes each step's view with
agentrig's rules; ``static/app.js``, ``drawSteps``, turns the views into the ``<li>`` of each step, with a model
call's messages folded under it and a subagent's steps nested under the tool call that started it).

Raw lines rather than steps read in Python because a report holds every step of every checkpoint (50,000 steps
for 1,000 checkpoints x 50): reading, checking and formatting each in Python was most of the static report's
writing time, where embedding the lines costs a few replacements per page.

Everything embedded is made safe inside its ``<script>`` element: in the lines, ``<``, ``>`` and ``&`` are
written as ``\\u003c``, ``\\u003e`` and ``\\u0026`` (the same characters to JSON inside a string, and no JSON
has them outside one), so no text can close the element; attributes are HTML-escaped; the scripts set every
value as text (``textContent``), never as markup.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from markupsafe import Markup

from agentrig.report.raw_trajectory import RawTrajectory

#: What :func:`script_json` writes for the characters that could end or change a ``<script>`` element's
#: data (``</script>``, ``<!--`` and ``<script`` inside it) or start an HTML character reference; U+2028
#: and U+2029 (which end a JavaScript line) never reach the text: :func:`json.dumps` writes every
#: character beyond ASCII as an escape. JSON reads each escape back as the same character.
_SCRIPT_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"))


def script_json(data: Any) -> str:
    """``data`` as JSON safe inside a ``<script>`` element of a page, the one way every page embeds JSON.

    ``<``, ``>`` and ``&`` are written as ``\\u003c``, ``\\u003e`` and ``\\u0026`` (and U+2028/U+2029, as
    every character beyond ASCII, as escapes), so no value (a model name ``<!--<script>`` in ``run.json``,
    say) can close the element or pull the rest of the page into it; ``JSON.parse`` of the element's text
    gives ``data`` back unchanged.
    """
    text = json.dumps(data, check_circular=False)  # ensure_ascii: U+2028 and U+2029 are written as escapes
    return script_text(text)


def script_text(text: str) -> str:
    """JSON ``text`` (or JSON lines) safe inside a ``<script>`` element: ``<``, ``>`` and ``&`` escaped as
    :func:`script_json` escapes them."""
    for char, replacement in _SCRIPT_ESCAPES:
        if char in text:
            text = text.replace(char, replacement)
    return text


def trajectory_script(raw: RawTrajectory | None, prefix: str = "step-", *, shown: tuple[int, int] | None = None,
                      limit: int | None = None, subagents: dict[str, dict[str, Any]] | None = None,
                      shard: tuple[str, str] | None = None) -> Markup:
    """The ``<script type="text/x-agentrig-jsonl" class="trajectory-data">`` element that the page's script replaces
    with the ``<li>`` of each step, in place (put it inside the ``<ol class="steps">`` the steps belong to).

    ``prefix`` starts each step's id (``<prefix><number>``, unique for a trajectory nested in the page); ``shown``:
    the numbers of the first and last step drawn (a part of a long trajectory; all by default); ``limit``: only the
    first ``limit`` steps are read and drawn (an earlier try's); ``subagents``: the trajectories of the subagents
    its tool calls started (:func:`agentrig.view.subagents.subagent_trajectories`), embedded beside it.

    ``shard``: ``(shard key, checkpoint)``: the lines are not embedded but read from the problem run's search shard,
    which the page loads (a checkpoint page: each trajectory is written once in a report, and the search page reads
    the same shard); the element then holds the trajectory's size, so that a live page's version changes as it grows."""
    attributes = {"data-prefix": prefix}
    if shard is not None:
        attributes["data-shard"], attributes["data-checkpoint"] = shard
        attributes["data-size"] = str(len(raw.text)) if raw is not None else "0"
    elif raw is not None:
        attributes["data-path"] = str(raw.path)
        if raw.bad:
            attributes["data-bad"] = json.dumps(raw.bad)
    if shown is not None:
        attributes["data-from"], attributes["data-to"] = str(shown[0]), str(shown[1])
    if limit is not None:
        attributes["data-limit"] = str(limit)
    spelled = "".join(f' {name}="{escape(value)}"' for name, value in attributes.items())
    text = script_text(raw.text) if raw is not None and shard is None else ""
    element = f'<script type="text/x-agentrig-jsonl" class="trajectory-data"{spelled}>{text}</script>'
    if subagents:
        element += f'<script type="application/json" class="subagents-data">{script_json(subagents)}</script>'
    return Markup(element)


__all__ = ["script_json", "script_text", "trajectory_script"]
