"""Search within a trajectory and across runs, in the browser, for the served and the static report alike.

Each problem run gets one shard, ``search/<run>/<problem>.js``: a script that
hands ``agentrigSearch`` the trajectory lines of its checkpoints, which the
search page reads as the checkpoint pages do (``static/trajectory.js``) into
the searchable text of every step (at most 4,000 characters of each,
lower-cased once in the browser). A script, not JSON, so that a report opened from disk (``file://``,
where pages cannot ``fetch``) can load it with a ``<script>`` element. The
search page loads the shards it needs one after another and lists the steps
that hold every word of the query, with links to them; nothing is loaded
before a search starts, so a large report opens as fast as before.
"""

from __future__ import annotations

from typing import Any

from agentrig.report.reader import CheckpointDetail, LoadedRun
from agentrig.view.paths import STEPS_PER_PAGE, checkpoint_page, search_shard
from agentrig.view.steps import script_json


def shard_script(run_index: int, problem: str, details: list[CheckpointDetail]) -> str:
    """The shard of one problem run: ``agentrigSearch({run, problem, per_page, checkpoints: [{name, pages, text,
    bad, path}]});``: each checkpoint's trajectory lines as read (``text``; ``bad``: the lines that are not UTF-8;
    ``path``: the file, as a notice names it), which the checkpoint pages draw their steps from and the search page
    reads with the same rules (``static/trajectory.js``: every step numbered as its page numbers it, the text of
    each a search looks at); JSON made safe by :func:`script_json`."""
    from agentrig.report.reader import raw_trajectory_of

    checkpoints = []
    for detail in details:
        entry = detail.entry
        raw = raw_trajectory_of(detail)
        parts = raw.parts(STEPS_PER_PAGE)
        checkpoints.append({
            "name": entry.checkpoint,
            "pages": [checkpoint_page(run_index, problem, entry.checkpoint, n) for n in range(1, parts + 1)],
            "text": raw.text,
            "bad": raw.bad,
            "path": str(raw.path),
        })
    data = {"run": run_index, "problem": problem, "checkpoints": checkpoints, "per_page": STEPS_PER_PAGE}
    return f"agentrigSearch({script_json(data)});\n"


def search_page_context(runs: list[LoadedRun]) -> dict[str, Any]:
    """The search page: every shard of the report (run, problem run, its script), loaded on a search."""
    shards = []
    for index, run in enumerate(runs, 1):
        seen: dict[str, None] = {}
        for entry in run.entries():
            if entry.state != "pending":
                seen.setdefault(entry.problem, None)
        shards += [{"run": index, "problem": problem, "src": search_shard(index, problem)} for problem in seen]
    return {
        "shards_json": script_json(shards),
        "runs": [f"[{i}] {run.name} · {run.agent} · {run.model}" for i, run in enumerate(runs, 1)],
        "live": False,  # a search's results stay; each search loads the shards afresh
    }
