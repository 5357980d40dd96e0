"""``patterns``: AST pattern violations found by ast-grep (PyPI ``ast-grep-cli``) with the rules
shipped as data in ``agentrig/metrics/rules/`` (one YAML file per rule)."""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

from agentrig.metrics.interface import Metric, MetricError, SnapshotSources
from agentrig.metrics.tools import find_executable, run_tool

_BATCH = 400


def rule_ids(rules: Path) -> list[str]:
    """The ids of the shipped rules (the files under ``rules/python``)."""
    ids = []
    for path in sorted((rules / "python").glob("*.yml")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("id:"):
                ids.append(line.partition(":")[2].strip())
    return ids


class PatternsMetric(Metric):
    """Figures: ``violations`` and ``rule.<id>`` per shipped rule (0 when none matched). Details:
    counts by rule and by file, and how many rules were checked."""

    def check_tools(self) -> None:
        """ast-grep (PyPI ``ast-grep-cli``)."""
        find_executable("ast-grep", "ast-grep-cli")

    def compute(self, sources: SnapshotSources) -> tuple[dict[str, float], dict[str, Any]]:
        """Run ``ast-grep scan`` with the shipped rules over the snapshot's files."""
        binary = find_executable("ast-grep", "ast-grep-cli")
        with resources.as_file(resources.files("agentrig.metrics").joinpath("rules")) as rules:
            ids = rule_ids(rules)
            base = [binary, "scan", "--config", str(rules / "sgconfig.yml"), "--json=compact"]
            found: list[dict[str, Any]] = []
            paths = [source.path for source in sources.files]
            for start in range(0, len(paths), _BATCH):
                output = run_tool([*base, "--", *paths[start:start + _BATCH]], sources.root, ok_codes=(0, 1))
                try:
                    found.extend(json.loads(output or "[]"))
                except json.JSONDecodeError:
                    raise MetricError("ast-grep printed no JSON report") from None
        by_rule: Counter[str] = Counter(dict.fromkeys(ids, 0))
        by_file: Counter[str] = Counter()
        for match in found:
            by_rule[str(match.get("ruleId"))] += 1
            by_file[str(match.get("file"))] += 1
        figures = {"violations": float(len(found))}
        figures.update({f"rule.{rule}": float(count) for rule, count in sorted(by_rule.items())})
        return figures, {"by_rule": dict(sorted(by_rule.items())), "by_file": dict(sorted(by_file.items())),
                         "rules_checked": len(ids)}
