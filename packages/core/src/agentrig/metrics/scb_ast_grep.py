"""AST-grep violations per category, with rules in SlopCodeBench's layout: a directory of
``<category>.yaml`` files, each one or more ast-grep rules (YAML documents), the category being the
file's name. agentrig ships no such rules: the directory is named by the environment variable
:data:`RULES_VARIABLE` (e.g. a SlopCodeBench checkout's ``configs/ast-grep-rules``)."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from agentrig.metrics.interface import MetricError, SnapshotSources
from agentrig.metrics.tools import find_executable, run_tool

#: The environment variable naming the rules directory.
RULES_VARIABLE = "AGENTRIG_SLOPCODE_AST_GREP_RULES"
#: The categories the benchmark reports a count of (``sg_<category>_violations``).
CATEGORIES = ("verbosity", "naming", "performance", "types", "safety", "style", "complexity")
_BATCH = 400


def rules_directory() -> Path | None:
    """The rules directory named by :data:`RULES_VARIABLE`, ``None`` when unset; a set name that is
    not a directory is a :class:`MetricError`."""
    named = os.environ.get(RULES_VARIABLE, "").strip()
    if not named:
        return None
    path = Path(named).expanduser()
    if not path.is_dir():
        raise MetricError(f"{RULES_VARIABLE}={named} is not a directory of <category>.yaml ast-grep rules")
    return path


def _rule_count(path: Path) -> int:
    try:
        return sum(1 for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return 0


def _scan(binary: str, rule_file: Path, sources: SnapshotSources) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    paths = [source.path for source in sources.files]
    for start in range(0, len(paths), _BATCH):
        output = run_tool([binary, "scan", "--json=stream", "-r", str(rule_file), "--", *paths[start:start + _BATCH]],
                          sources.root, ok_codes=(0, 1))
        for line in output.splitlines():
            if line.strip():
                try:
                    found.append(json.loads(line))
                except json.JSONDecodeError:
                    raise MetricError(f"ast-grep printed a line that is not JSON for {rule_file.name}") from None
    # the benchmark scans file by file and drops a file's matches when ast-grep exits non-zero,
    # which it does when a rule of severity error matched in that file
    failing = {match.get("file") for match in found if match.get("severity") == "error"}
    return [match for match in found if match.get("file") not in failing]


def categorized_violations(rules: Path, sources: SnapshotSources) -> tuple[Counter[str], int]:
    """Violations per category (every category of the directory, 0 when none matched) and the
    number of rules checked."""
    binary = find_executable("ast-grep", "ast-grep-cli")
    by_category: Counter[str] = Counter()
    checked = 0
    for rule_file in sorted(rules.glob("*.yaml")):
        count = _rule_count(rule_file)
        if count == 0:
            continue
        checked += count
        by_category[rule_file.stem] += len(_scan(binary, rule_file, sources)) if sources.files else 0
    return by_category, checked
