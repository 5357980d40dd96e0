"""SlopCodeBench's abstraction waste in one Python file, read with Python's own ``ast`` (the
benchmark's definitions, over tree-sitter; agentrig's own, different ones are the ``waste`` metric):

- a *single-use function* is a function (not a method) called from at most one place in its own
  file, a call counted by the called name (``f(...)``, ``x.f(...)``), so never-called ones count;
- a *trivial wrapper* is an undecorated module-level function whose body, docstrings, string
  statements, ``pass`` and comments aside, is one ``return`` or expression statement (an
  assignment included) that holds exactly one call, of a named function or attribute; a
  comment in the body counts as a statement, as tree-sitter lists comments among them.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections import Counter
from dataclasses import dataclass

from agentrig.metrics.scb_symbols import Symbol

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_EXPRESSION_STATEMENTS = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign)


@dataclass
class FileWaste:
    """The single-use functions and trivial wrappers of one file, by name."""

    single_use: list[str]
    wrappers: list[str]


def _called(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def _comments(text: str) -> list[tuple[int, int]]:
    """Where each comment of ``text`` starts (line, column)."""
    try:
        return [tok.start for tok in tokenize.generate_tokens(io.StringIO(text).readline) if tok.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):
        return []


def _is_string(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and (
        isinstance(node.value, ast.JoinedStr)
        or (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)))


def _body_comments(node: ast.FunctionDef | ast.AsyncFunctionDef, comments: list[tuple[int, int]], lines: list[str]) -> int:
    """The comments tree-sitter lists among a function's statements: after the first statement
    starts, outside every statement (a comment inside a bracketed expression belongs to it), up to
    the function's last line and on the more indented comment lines right after it."""
    first = (node.body[0].lineno, node.body[0].col_offset)
    last = node.end_lineno or node.lineno
    trailing = last
    for number in range(last + 1, len(lines) + 1):
        stripped = lines[number - 1].strip()
        indent = len(lines[number - 1]) - len(lines[number - 1].lstrip())
        if stripped and not (stripped.startswith("#") and indent > node.col_offset):
            break
        trailing = number
    spans = [((stmt.lineno, stmt.col_offset), (stmt.end_lineno or stmt.lineno, stmt.end_col_offset or 0))
             for stmt in node.body]
    return sum(1 for at in comments
               if first < at and at[0] <= trailing and not any(start < at < end for start, end in spans))


def is_trivial_wrapper(node: ast.FunctionDef | ast.AsyncFunctionDef, comments: list[tuple[int, int]],
                       lines: list[str]) -> bool:
    """Whether ``node`` is a trivial wrapper by the benchmark's definition (``comments``: where its
    file's comments start, ``lines``: its file's lines)."""
    body = [stmt for stmt in node.body if not isinstance(stmt, ast.Pass) and not _is_string(stmt)]
    if len(body) + _body_comments(node, comments, lines) != 1:
        return False
    stmt = body[0]
    expression: ast.AST | None
    if isinstance(stmt, ast.Return):
        expression = stmt.value
    elif isinstance(stmt, _EXPRESSION_STATEMENTS):
        expression = stmt
    else:
        return False
    if expression is None:
        return False
    calls = [child for child in ast.walk(expression) if isinstance(child, ast.Call)]
    return len(calls) == 1 and _called(calls[0]) is not None


def file_waste(tree: ast.Module, text: str, symbols: list[Symbol]) -> FileWaste:
    """The file's single-use functions and trivial wrappers (``symbols``: its :func:`symbols_of`)."""
    calls: Counter[str] = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (name := _called(node)) is not None:
            calls[name] += 1
    single = [symbol.name for symbol in symbols if symbol.kind == "function" and calls[symbol.name] <= 1]
    first: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in tree.body:
        if isinstance(node, _DEFS) and not node.decorator_list:
            first.setdefault(node.name, node)
    comments, lines = _comments(text), text.splitlines()
    wrappers = [name for name, node in first.items() if is_trivial_wrapper(node, comments, lines)]
    return FileWaste(single, wrappers)
