"""The ``slopcode`` metric: SlopCodeBench's headline figures (erosion, verbosity, symbols, complexity
extremes, concentration and mass, waste, ast-grep per category) equal the benchmark's own on a
snapshot written here, with radon, ruff and ast-grep really run.

``BENCHMARK`` holds what SlopCodeBench's own code computed for this snapshot (its
``measure_snapshot_quality``, ``get_quality_metrics`` and ``compute_composite_scores``, at commit
feeab5a of SprocketLab/slop-code-bench, with tree-sitter-python 0.25 and the ast-grep rules of
``RULES``, agentrig's own in the benchmark's layout); ``bench/slopcode_reference.py`` recomputes them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from agentrig.metrics.compute import measure
from agentrig.metrics.scb_ast_grep import RULES_VARIABLE
from agentrig.metrics.scb_symbols import symbols_of
from agentrig.metrics.scb_waste import file_waste

FILES = {
    'main.py': '''\
"""Command line entry of a small shop."""
import os
import sys

from shop.orders import Order, total_of
from shop.pricing import price, rounded


def parse(argv):
    return argv[1:]


def run(argv):
    """Parse the arguments and print a total."""
    items = parse(argv)
    order = Order(items)
    print(rounded(total_of(order)))
    return 0


def grade(score, strict, bonus, late, flags):
    if score > 90 and not late:
        result = "A"
    elif score > 80 or bonus:
        result = "B"
    elif score > 70:
        result = "C"
    elif score > 60:
        result = "D"
    else:
        result = "F"
    for flag in flags:
        if flag == "x" and strict:
            result = result + "-"
        elif flag == "y" or flag == "z":
            result = result + "+"
    while len(result) > 3:
        result = result[:-1]
    try:
        value = int(score)
    except ValueError:
        value = 0
    except TypeError:
        value = -1
    assert value >= -1
    return result if value else result.lower()


if __name__ == "__main__":
    sys.exit(run(sys.argv))
''',
    'shop/__init__.py': '''\
''',
    'shop/orders.py': '''\
"""Orders."""
from shop.pricing import price


class Order:
    """An order of items."""

    limit = 10

    def __init__(self, items):
        self.items = list(items)
        self.notes = []

    def add(self, item):
        self.items.append(item)

    @property
    def size(self):
        return len(self.items)

    def total(self):
        def each(item):
            return price(item) if item else 0
        return sum(each(i) for i in self.items)

    class Line:
        def __init__(self, name):
            self.name = name

        def show(self):
            return f"{self.name}"


class Empty:
    def only(self):
        return None


def total_of(order):
    return order.total()


async def fetch(client, key):
    return await client.get(key)


if True:
    def hidden(x):
        return x
''',
    'shop/pricing.py': '''\
"""Prices."""
TAX = 0.2
DEFAULT: float = 1.0
RATES = {"a": 1, "b": 2}


def price(item):
    return lookup(item)


def lookup(item):
    return RATES.get(item, DEFAULT)


def rounded(value):
    return round(value, 2)


def unused_helper(x):
    """Never called."""
    pass
    return str(x).strip()


@staticmethod
def decorated(x):
    return abs(x)


def classify(code):
    kind = None
    if code == 1:
        kind = "one"
    elif code == 2:
        kind = "two"
    elif code == 3:
        kind = "three"
    elif code == 4:
        kind = "four"
    elif code == 5:
        kind = "five"
    elif code == 6:
        kind = "six"
    elif code == 7:
        kind = "seven"
    elif code == 8:
        kind = "eight"
    elif code == 9:
        kind = "nine"
    elif code == 10:
        kind = "ten"
    elif code == 11:
        kind = "eleven"
    elif code == 12:
        kind = "twelve"
    elif code == 13:
        kind = "thirteen"
    elif code == 14:
        kind = "fourteen"
    elif code == 15:
        kind = "fifteen"
    elif code == 16:
        kind = "sixteen"
    elif code == 17:
        kind = "seventeen"
    elif code == 18:
        kind = "eighteen"
    elif code == 19:
        kind = "nineteen"
    elif code == 20 and kind is None:
        kind = "twenty"
    elif code == 21 or code == 22:
        kind = "big"
    for n in range(code):
        if n % 2 and n % 3 and n % 5:
            kind = kind or "odd"
    values = [v for v in range(code) if v % 2 if v % 3]
    seen = {v for v in values if v}
    table = {v: v * 2 for v in seen}
    total = sum(v for v in table.values() if v > 4)
    while total > 100 and code:
        total -= 10
    return kind if total else None
''',
    'shop/extra.py': '''\
from __future__ import annotations

from shop.pricing import lookup


def commented(item):
    # a comment makes it two statements for the benchmark
    return lookup(item)


def nested_else(a, b):
    if a:
        return 1
    else:
        if b:
            return 2
    match a:
        case 1 if b:
            return 3
        case _:
            return 4


def assigns(x):
    y = lookup(x)


def two_calls(x):
    return lookup(str(x))
''',
}

RULES = {
    'verbosity.yaml': '''\
id: explicit-return-none
language: python
severity: warning
message: return None is the default
rule:
  pattern: return None
---
id: pass-after-statements
language: python
severity: hint
message: a pass that does nothing
rule:
  kind: pass_statement
''',
    'safety.yaml': '''\
id: assert-in-code
language: python
severity: warning
message: assert is stripped under -O
rule:
  kind: assert_statement
''',
    'style.yaml': '''\
id: print-call
language: python
severity: warning
message: print in library code
rule:
  pattern: print($$$ARGS)
---
id: len-call
language: python
severity: warning
message: len call
rule:
  pattern: len($X)
''',
}

BENCHMARK = {
    'erosion': 0.479645527554694,
    'verbosity': 1.0382165605095541,
    'functions': 16,
    'methods': 7,
    'classes': 3,
    'symbols_total': 29,
    'statements': 102,
    'cc_max': 40,
    'cc_mean': 3.652173913043478,
    'cc_std': 8.605541003817217,
    'cc_high_count': 2,
    'cc_extreme_count': 1,
    'high_cc_mean': 28.5,
    'cc_normalized': 0.24139352710781284,
    'cc_concentration': 0.6614906832298136,
    'mass.complexity': 303.69,
    'mass.complexity_concentration': 0.673,
    'mass.high_cc': 291.92,
    'mass.high_cc_pct': 96.1,
    'mass.top50_count': 1,
    'mass.top50_mass': 224.04,
    'mass.top75_count': 2,
    'mass.top75_mass': 291.92,
    'mass.top90_count': 2,
    'mass.top90_mass': 291.92,
    'single_use_functions': 16,
    'trivial_wrappers': 7,
    'loc': 157,
    'lint_errors': 48,
    'lint_per_loc': 0.3057324840764331,
    'ast_grep_violations': 6,
    'ast_grep_per_loc': 0.03821656050955414,
    'sg_verbosity_violations': 2,
    'sg_naming_violations': 0,
    'sg_performance_violations': 0,
    'sg_types_violations': 0,
    'sg_safety_violations': 1,
    'sg_style_violations': 3,
    'sg_complexity_violations': 0,
}


def _snapshot(root: Path) -> Path:
    """The fixture as agentrig records a checkpoint: the workspace's files under ``snapshot/files``."""
    snapshot = root / "snapshot"
    for name, text in FILES.items():
        path = snapshot / "files" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return snapshot


def _rules(root: Path) -> Path:
    rules = root / "rules"
    rules.mkdir()
    for name, text in RULES.items():
        (rules / name).write_text(text)
    (rules / "empty.yaml").write_text("# no rule: not a category\n")
    return rules


def test_figures_equal_the_benchmarks_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RULES_VARIABLE, str(_rules(tmp_path)))
    result = measure("checkpoint_1", _snapshot(tmp_path), ["slopcode"]).metrics["slopcode"]
    assert result.status == "ok", result.error
    assert {key: result.figures.get(key) for key in BENCHMARK} == pytest.approx(BENCHMARK, rel=1e-12, abs=1e-12)
    assert result.figures["variables"] == 3  # TAX, DEFAULT, RATES; in symbols_total, not in the benchmark's flat figures
    assert result.details["ast_grep_rules_checked"] == 5
    waste = result.details["waste"]
    # the benchmark's wrappers: undecorated module-level, one call in one statement (an assignment too)
    assert waste["files/shop/extra.py"]["trivial_wrappers"] == ["commented", "assigns"]
    assert waste["files/shop/pricing.py"]["trivial_wrappers"] == ["price", "lookup", "rounded"]
    assert "hidden" not in str(waste)  # a def under an if is no symbol for the benchmark
    heaviest = result.details["heaviest"][0]
    assert (heaviest["name"], heaviest["cc"]) == ("classify", 40)


def test_without_rules_erosion_is_recorded_and_verbosity_is_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(RULES_VARIABLE, raising=False)
    result = measure("checkpoint_1", _snapshot(tmp_path), ["slopcode"]).metrics["slopcode"]
    assert result.status == "ok", result.error
    assert result.figures["erosion"] == pytest.approx(BENCHMARK["erosion"], rel=1e-12)
    assert "verbosity" not in result.figures and "ast_grep_violations" not in result.figures
    assert RULES_VARIABLE in result.details["ast_grep_note"]


def test_a_rules_variable_naming_no_directory_fails_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RULES_VARIABLE, str(tmp_path / "nowhere"))
    result = measure("checkpoint_1", _snapshot(tmp_path), ["slopcode"]).metrics["slopcode"]
    assert result.status == "failed"
    assert result.error == f"slopcode: {RULES_VARIABLE}={tmp_path / 'nowhere'} is not a directory of <category>.yaml ast-grep rules"


def test_an_empty_snapshot_has_no_scores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RULES_VARIABLE, str(_rules(tmp_path)))
    (tmp_path / "snapshot" / "files").mkdir(parents=True)
    result = measure("checkpoint_1", tmp_path / "snapshot", ["slopcode"]).metrics["slopcode"]
    assert result.status == "ok", result.error
    assert result.figures["functions"] == 0 and result.figures["ast_grep_violations"] == 0
    assert "erosion" not in result.figures and "verbosity" not in result.figures  # as the benchmark leaves them out


COMMENTS = """\
def a(x):
    return f(x)  # same line


def b(x):
    \"\"\"Doc.\"\"\"
    # after the docstring
    return f(x)


def c(x):
    return f(x)
    # trailing, inside


def d(x):  # on the def line
    return f(
        x,  # inside the call
    )


def e(x):
    y = f(x)

    # trailing, after a blank line
# at column 0
"""


def test_comments_among_a_wrappers_statements_count_as_tree_sitter_lists_them() -> None:
    # SlopCodeBench's own code on this text finds one wrapper, d: tree-sitter lists a comment after the
    # first statement among the block's statements, one on the def line or inside a call elsewhere
    tree = ast.parse(COMMENTS)
    waste = file_waste(tree, COMMENTS, symbols_of(tree, COMMENTS))
    assert waste.wrappers == ["d"]
    assert waste.single_use == ["a", "b", "c", "d", "e"]  # f is called, never defined
