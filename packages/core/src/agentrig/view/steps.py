"""A checkpoint's trajectory steps as page data: what each step shows, embedded in the page as one JSON
element that the page's script (``static/app.js``, ``drawSteps``) turns into the ``<li>`` of each step,
with a model call's messages folded under it and a subagent's steps nested under the tool call that
started it.

Data rather than markup because a report holds every step of every checkpoint (50,000 steps for
1,000 checkpoints x 50): writing each step's markup in Python, with an escape per value read from the
run, was the largest part of the static report's writing time, where one :func:`json.dumps` of the
page's steps costs a fraction of it. The JSON is made safe inside the ``<script>`` element by
:func:`script_json` (``<``, ``>``, ``&``, U+2028/U+2029 escaped); the script sets every value as text
(``textContent``), never as markup.

The values are formatted here (badges, titles, folded or not): the script only lays them out, in the
markup the stylesheets, the in-page search and the browser tests know.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any, TypedDict

from markupsafe import Markup


class MessageData(TypedDict, total=False):
    """One recorded message of a model call: ``role`` (always there), its texts, and its tool calls as
    ``name arguments`` lines; ``shown_at``: the step of the page that shows its text already (the text is
    then left out), ``0`` for the system prompt shown above the trajectory."""

    role: str
    text: str
    thinking: str
    tool_calls: list[str]
    tool_call_id: str
    cut: int
    shown_at: int


class CallData(TypedDict, total=False):
    """What a model call sent (``sent``: the new part of the request, from message ``sent_from`` on),
    the tools it offered and what it received; ``summary`` is the line of its folded block."""

    summary: str
    sent: list[MessageData]
    sent_from: int
    tools: str
    received: MessageData


class SubagentData(TypedDict, total=False):
    """A subagent's trajectory, shown under the tool call that started it."""

    label: str
    steps: list[StepData]
    notices: list[str]


class StepData(TypedDict, total=False):
    """One trajectory step as the page shows it. ``number``, ``kind``, ``offset`` and ``title`` are always
    there; the other keys only when they have something to show (a ``tool_use`` step always has
    ``result``, ``None`` when none was recorded)."""

    number: int
    kind: str
    offset: str
    title: str
    text: str
    folded: bool
    lines: int
    arguments: str
    result: str | None
    result_folded: bool
    result_lines: int
    badges: list[str]
    error: bool
    call: CallData
    subagent: SubagentData


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
    for char, replacement in _SCRIPT_ESCAPES:
        if char in text:
            text = text.replace(char, replacement)
    return text


def steps_script(steps: list[StepData], prefix: str = "step-") -> Markup:
    """The ``<script type="application/json" class="steps-data">`` element that the page's script replaces
    with the ``<li>`` of each of ``steps``, in place (put it inside the ``<ol class="steps">`` they belong
    to); ``prefix`` starts each step's id (``<prefix><number>``), unique for a nested trajectory."""
    return Markup(f'<script type="application/json" class="steps-data" data-prefix="{escape(prefix)}">'
                  f"{script_json(steps)}</script>")


__all__ = ["CallData", "MessageData", "StepData", "SubagentData", "script_json", "steps_script"]
