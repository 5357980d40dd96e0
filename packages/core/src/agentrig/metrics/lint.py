"""``lint``: ruff's violations, by rule and by rule family (ruff run as a subprocess, its JSON read)."""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

from agentrig.metrics.interface import Metric, MetricError, SnapshotSources, ToolMissingError
from agentrig.metrics.tools import executable_candidates, run_tool

#: Files per ruff run: keeps each command line well under the system's limit.
_BATCH = 400
#: The ruff the lint figures are defined by: SlopCodeBench's (its ``uv.lock``). Another release
#: adds, drops and changes rules, so its counts differ; the ``metrics`` extra installs this one.
RUFF_VERSION = "0.14.1"
RUFF_PACKAGE = f"ruff=={RUFF_VERSION}"


def ruff_version(ruff: str, cwd: Path) -> str:
    """The version ``ruff --version`` prints (``ruff 0.14.1``: ``0.14.1``)."""
    words = run_tool([ruff, "--version"], cwd, ok_codes=(0,)).split()
    return words[1] if len(words) >= 2 and words[0] == "ruff" else " ".join(words)[:40] or "unknown"


def pinned_ruff(candidates: list[str], cwd: Path) -> str:
    """The first of ``candidates`` (ruff executables) that is ruff :data:`RUFF_VERSION`;
    :class:`ToolMissingError` when there is none, :class:`MetricError` naming the versions found
    when none is that version."""
    if not candidates:
        raise ToolMissingError("ruff", RUFF_PACKAGE)
    found: list[str] = []
    for ruff in candidates:
        version = ruff_version(ruff, cwd)
        if version == RUFF_VERSION:
            return ruff
        found.append(f"{version} ({ruff})")
    raise MetricError(
        f"ruff {', '.join(found)} is not the ruff {RUFF_VERSION} the lint figures are defined by:"
        f" pip install '{RUFF_PACKAGE}' beside agentrig (or pip install 'agentrig[metrics]')"
    )


def selected_rules() -> list[str]:
    """The rule codes and prefixes the metric selects (``lint_rules.txt``, shipped as data)."""
    text = resources.files("agentrig.metrics").joinpath("lint_rules.txt").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def _families(ruff: str, cwd: Path) -> list[str]:
    """Every rule family prefix ruff knows (``F``, ``PLR``, ``C4``, ``C90``...), longest first."""
    linters = json.loads(run_tool([ruff, "linter", "--output-format", "json"], cwd, ok_codes=(0,)))
    prefixes: set[str] = set()
    for linter in linters:
        prefix = linter.get("prefix") or ""
        prefixes.add(prefix)
        prefixes.update(prefix + category["prefix"] for category in linter.get("categories") or [])
    return sorted((p for p in prefixes if p), key=len, reverse=True)


def family_of(code: str, families: list[str]) -> str:
    """The family of a rule code: the longest known prefix it starts with, followed by digits."""
    for prefix in families:
        if code.startswith(prefix) and code[len(prefix):].isdigit():
            return prefix
    return code.rstrip("0123456789") or code


class LintMetric(Metric):
    """Figures: ``violations``, ``fixable`` (violations with a safe fix) and ``family.<F>`` per rule
    family. Details: counts by rule code (``by_rule``), by family and by file, and ``ruff_version``:
    always :data:`RUFF_VERSION`, the only ruff the metric runs (found beside the interpreter, then on
    ``PATH``; another version is a failure naming the one to install). Ruff runs with
    ``--isolated`` (the snapshot's own ruff settings are ignored: every run is measured alike),
    ``--preview``, ``--no-cache`` (nothing is written into the snapshot) and the rules of
    ``lint_rules.txt``."""

    def check_tools(self) -> None:
        """ruff :data:`RUFF_VERSION`."""
        pinned_ruff(executable_candidates("ruff"), Path.cwd())

    def compute(self, sources: SnapshotSources) -> tuple[dict[str, float], dict[str, Any]]:
        """Run ruff over the snapshot's files and count what it reports."""
        ruff = pinned_ruff(executable_candidates("ruff"), sources.root)
        select = [flag for rule in selected_rules() for flag in ("--select", rule)]
        base = [ruff, "check", "--output-format", "json", "--isolated", "--preview", "--no-cache", "--exit-zero", *select]
        found: list[dict[str, Any]] = []
        paths = [source.path for source in sources.files]
        for start in range(0, len(paths), _BATCH):
            output = run_tool([*base, "--", *paths[start:start + _BATCH]], sources.root, ok_codes=(0,))
            try:
                found.extend(json.loads(output or "[]"))
            except json.JSONDecodeError:
                raise MetricError("ruff printed no JSON report") from None
        families = _families(ruff, sources.root)
        by_rule: Counter[str] = Counter()
        by_family: Counter[str] = Counter()
        by_file: Counter[str] = Counter()
        fixable = 0
        for item in found:
            code = item.get("code")
            if not isinstance(code, str):  # a file ruff could not parse: no rule to count
                continue
            by_rule[code] += 1
            by_family[family_of(code, families)] += 1
            by_file[Path(item.get("filename", "")).resolve().relative_to(sources.root.resolve()).as_posix()] += 1
            fix = item.get("fix")
            fixable += bool(fix and fix.get("applicability") == "safe")
        figures = {"violations": float(sum(by_rule.values())), "fixable": float(fixable)}
        figures.update({f"family.{name}": float(count) for name, count in sorted(by_family.items())})
        details = {"ruff_version": RUFF_VERSION, "by_rule": dict(sorted(by_rule.items())),
                   "by_family": dict(sorted(by_family.items())), "by_file": dict(sorted(by_file.items()))}
        return figures, details
