"""SlopCodeBench's symbols of one Python file, read with Python's own ``ast``: its functions,
methods, classes, module-level variables and type aliases, each with the benchmark's cyclomatic
complexity and statement count (its definitions are over tree-sitter node types; this module
counts the same constructs on ``ast`` nodes).

What the benchmark counts, and so what is counted here:

- symbols are found only in the bodies of the module, of classes and of functions (a ``def``
  under an ``if``/``try``/``with`` is not a symbol); a ``def`` directly in a class body is a
  method, one in a function a function; variables are module-level assignments to one name;
- complexity: 1 plus, anywhere under the ``def`` (nested functions and classes included,
  decorators not), each ``if``, ``elif``, ``for``, ``while``, ``except``, ``assert``, comprehension,
  comprehension or ``case`` guard ``if``, conditional expression and each ``and``/``or`` operator;
- statements: every simple statement and ``if`` (not ``elif``), ``for``, ``while``, ``try``,
  ``with`` and ``match`` under the symbol (a ``from __future__`` import is not one, nor a
  ``def`` or ``class``); a variable counts one.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_DECISIONS = (ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler, ast.Assert, ast.IfExp, *_COMPREHENSIONS)
_STATEMENTS = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Pass, ast.Break, ast.Continue,
               ast.Raise, ast.Import, ast.Global, ast.Nonlocal, ast.Delete, ast.For, ast.AsyncFor, ast.While,
               ast.Try, ast.With, ast.AsyncWith, ast.Assert, ast.Match,
               *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))


@dataclass
class Symbol:
    """One symbol: ``kind`` is ``function``, ``method``, ``class``, ``variable`` or ``type_alias``."""

    name: str
    kind: str
    line: int
    complexity: int = 0
    statements: int = 0
    lines: int = 1


def elifs(tree: ast.AST, lines: list[str]) -> set[ast.If]:
    """The ``if`` nodes that are an ``elif`` (``ast`` writes both alike; the source tells them apart)."""
    found: set[ast.If] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            child = node.orelse[0]
            if lines[child.lineno - 1][child.col_offset:].startswith("elif"):
                found.add(child)
    return found


def _under(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under a definition, its own decorators left out (they are outside it)."""
    for name, value in ast.iter_fields(node):
        if name == "decorator_list":
            continue
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, ast.AST):
                yield from ast.walk(child)


def complexity_of(node: ast.AST) -> int:
    """The decisions under ``node`` as the benchmark counts them (without the base 1)."""
    count = 0
    for child in _under(node):
        if isinstance(child, (ast.If, *_DECISIONS)):
            count += 1
        if isinstance(child, ast.BoolOp):
            count += len(child.values) - 1
        elif isinstance(child, ast.comprehension):
            count += len(child.ifs)
        elif isinstance(child, ast.match_case) and child.guard is not None:
            count += 1
    return count


def statements_of(node: ast.AST, elif_nodes: set[ast.If]) -> int:
    """The statements under ``node`` as the benchmark counts them."""
    def counted(child: ast.AST) -> bool:
        if isinstance(child, ast.If):
            return child not in elif_nodes
        if isinstance(child, ast.ImportFrom):
            return child.module != "__future__"
        return isinstance(child, _STATEMENTS)

    return sum(1 for child in _under(node) if counted(child))


def _variable(node: ast.stmt) -> str | None:
    target: ast.expr | None = None
    if isinstance(node, ast.Assign):
        target = node.targets[0]
    elif isinstance(node, ast.AnnAssign):
        target = node.target
    return target.id if isinstance(target, ast.Name) else None


def symbols_of(tree: ast.Module, text: str) -> list[Symbol]:
    """Every symbol of a parsed file, outer before inner."""
    elif_nodes = elifs(tree, text.splitlines())
    found: list[Symbol] = []

    def measured(node: ast.stmt, name: str, kind: str, base: int) -> Symbol:
        first = node.lineno
        last = node.end_lineno or first
        return Symbol(name, kind, first, base + complexity_of(node), statements_of(node, elif_nodes), last - first + 1)

    def visit(body: list[ast.stmt], parent_class: str | None, module_level: bool) -> None:
        for node in body:
            if isinstance(node, _DEFS):
                found.append(measured(node, node.name, "method" if parent_class else "function", 1))
                visit(node.body, None, False)
            elif isinstance(node, ast.ClassDef):
                found.append(measured(node, node.name, "class", 0))
                visit(node.body, node.name, False)
            elif module_level and (name := _variable(node)) is not None:
                found.append(Symbol(name, "variable", node.lineno, 0, 1, (node.end_lineno or node.lineno) - node.lineno + 1))
            elif module_level and type(node).__name__ == "TypeAlias":
                found.append(measured(node, getattr(getattr(node, "name", None), "id", "?"), "type_alias", 0))

    visit(tree.body, None, True)
    return found
