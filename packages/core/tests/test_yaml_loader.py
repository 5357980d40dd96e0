"""agentrig's one YAML loader: the nesting limit and the messages are the same with libyaml's loader
and with the pure-Python one, whichever PyYAML build a machine has (PyYAML 6.0.3's libyaml crashed
with SIGSEGV at 30,000 levels, 6.0.4's refuses 1,000 with an error of its own, the pure-Python
loader raises RecursionError)."""

from __future__ import annotations

import pytest
import yaml

from agentrig.boundary import NESTING_MAX
from agentrig.yaml_loader import YamlError, YamlNestingError, load_yaml, nesting_bound, yaml_nesting_line

LIMIT = NESTING_MAX


@pytest.fixture(params=["libyaml", "pure-python"])
def loader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The loader this PyYAML would use: its libyaml one, or the pure-Python one (as on a build without libyaml)."""
    if request.param == "pure-python":
        monkeypatch.delattr(yaml, "CSafeLoader", raising=False)
        monkeypatch.setattr(yaml, "__with_libyaml__", False)
    elif not getattr(yaml, "__with_libyaml__", False):
        pytest.skip("this PyYAML is built without libyaml")
    return str(request.param)


def flow(depth: int) -> str:
    return "[" * depth + "]" * depth + "\n"


def block_sequences(depth: int) -> str:
    return "- " * depth + "x\n"


def block_mappings(depth: int) -> str:
    return "".join(" " * level + "k:\n" for level in range(depth - 1)) + " " * (depth - 1) + "k: v\n"


def indentless(depth: int) -> str:
    """A mapping's list at the mapping's own column: two levels to each two columns.

    ``k:`` (a mapping), ``- k:`` (a list and a mapping), ``  - k:`` (another two), ...
    """
    lines, level, column = ["k:"], 1, 0
    while level + 2 <= depth:
        lines.append(" " * column + "- k:")
        level += 2
        column += 2
    if level < depth:
        lines.append(" " * column + "- x")
    else:
        lines[-1] += " v"
    return "\n".join(lines) + "\n"


def depth_of(text: str) -> int:
    """The depth the pure-Python parser's events show (the reference)."""
    depth = deepest = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            deepest = max(deepest, depth)
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
    return deepest


SHAPES = {"flow": flow, "block-sequences": block_sequences, "block-mappings": block_mappings, "indentless": indentless}


@pytest.mark.parametrize("shape", SHAPES)
def test_the_shapes_nest_as_deep_as_asked(shape: str) -> None:
    assert [depth_of(SHAPES[shape](depth)) for depth in (1, 2, 3, 7, LIMIT)] == [1, 2, 3, 7, LIMIT]


#: The line where each shape's (LIMIT + 1)-th level starts.
DEEP_LINE = {"flow": 1, "block-sequences": 1, "block-mappings": LIMIT + 1, "indentless": LIMIT // 2 + 1}


@pytest.mark.parametrize("shape", SHAPES)
def test_just_under_the_limit_is_read_and_just_over_is_refused_with_its_line(loader: str, shape: str) -> None:
    make = SHAPES[shape]
    assert load_yaml(make(LIMIT), "f.yaml") == yaml.safe_load(make(LIMIT))
    with pytest.raises(YamlNestingError) as caught:
        load_yaml(make(LIMIT + 1), "f.yaml")
    assert str(caught.value) == f"f.yaml: line {DEEP_LINE[shape]}: nested more than {LIMIT} levels deep; not read"


@pytest.mark.parametrize(
    ("shape", "depth"),
    [("flow", 1000), ("flow", 30_000), ("block-sequences", 1000), ("block-sequences", 30_000),
     ("block-mappings", 1000), ("indentless", 1000)],
)
def test_far_past_the_limit_is_the_same_line_not_a_crash(loader: str, shape: str, depth: int) -> None:
    """1,000: where PyYAML 6.0.4's libyaml gives up with an error of its own; 30,000: where 6.0.3's crashed."""
    with pytest.raises(YamlNestingError) as caught:
        load_yaml(SHAPES[shape](depth), "f.yaml")
    assert str(caught.value) == f"f.yaml: line {DEEP_LINE[shape]}: nested more than {LIMIT} levels deep; not read"


def test_the_line_is_the_same_with_either_loader(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "name: x\nchecks:\n  - a\n  - " + flow(5_000)
    with pytest.raises(YamlNestingError) as first:
        load_yaml(text, "p.yaml")
    monkeypatch.delattr(yaml, "CSafeLoader", raising=False)
    with pytest.raises(YamlNestingError) as second:
        load_yaml(text, "p.yaml")
    assert str(first.value) == str(second.value) == f"p.yaml: line 4: nested more than {LIMIT} levels deep; not read"


def test_aliases_that_make_it_deep_are_refused(loader: str) -> None:
    text = "a: &a [x]\n" + "".join(f"a{n}: &a{n} [*{'a' if n == 0 else f'a{n - 1}'}]\n" for n in range(LIMIT + 1))
    assert yaml_nesting_line(text) is None  # each collection is shallow where it is written
    with pytest.raises(YamlNestingError, match=rf"^f\.yaml: nested more than {LIMIT} levels deep; not read$"):
        load_yaml(text, "f.yaml")


def test_invalid_yaml_is_one_line_with_its_place_the_same_with_either_loader(loader: str) -> None:
    with pytest.raises(YamlError) as caught:
        load_yaml("name: x\nchecks: [a, b\n", "p.yaml")
    assert not isinstance(caught.value, YamlNestingError)
    assert str(caught.value) == "p.yaml: invalid YAML at line 3, column 1: expected ',' or ']', but got '<stream end>'"


def test_an_ordinary_document_is_read_as_safe_load_reads_it(loader: str) -> None:
    text = "name: greeter\ncheckpoints:\n  - {name: c1, tags: [a, b]}\n  - name: c2\n    when: 2024-01-02\nn: 5\n"
    assert load_yaml(text, "p.yaml") == yaml.safe_load(text)
    assert load_yaml("", "p.yaml") is None


def test_only_safe_tags_are_built(loader: str) -> None:
    with pytest.raises(YamlError, match=r"^p\.yaml: invalid YAML at line 1, column 4: .*python/object"):
        load_yaml("x: !!python/object/apply:os.system ['true']\n", "p.yaml")


@pytest.mark.parametrize(
    "text",
    [
        flow(60),
        indentless(60),
        block_mappings(60),
        "[" + '"]", [' * 59 + '"]"' + "]" * 60 + "\n",  # closers inside strings do not close
        "[" + "[".join(f"k{n}: " for n in range(40)) + "v" + "]" * 40 + "\n",  # a flow list's `k: v` is a mapping
        "".join(" " * (2 * n) + f"- &a{n} !!seq\n" for n in range(30)) + " " * 60 + "- x\n",
        "? " * 30 + "x\n",
        block_mappings(60).replace("\n", "\r"),  # lines that a bare carriage return breaks
        block_mappings(60).replace("\n", "\u2028"),
        # two levels to each column: a mapping's list at its column, the list's mapping one column right
        "k:\n" + "".join(" " * c + "-\n" + " " * (c + 1) + "k:\n" for c in range(30)) + " " * 30 + "k: v\n",
        "a:\n" + "".join(" " * n + "-\n" for n in range(40)) + " " * 40 + "x\n",
    ],
)
def test_the_cheap_bound_is_never_below_the_real_depth(text: str) -> None:
    """Below the bound's limit the loader builds without counting: a bound too low would let a deep
    document reach a loader that recurses (or crashes)."""
    assert nesting_bound(text) >= depth_of(text)


def test_ordinary_files_need_no_counting() -> None:
    text = "name: greeter\ncheckpoints:\n  - name: c1\n    test: {command: pytest, args: [-q, tests]}\n" * 3
    assert nesting_bound(text) <= LIMIT
