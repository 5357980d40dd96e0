"""``waste``: pass-through wrappers (a function that only passes its arguments on to another call) and
single-reference functions (defined, and referenced from exactly one place), read from the syntax trees.

These are agentrig's own definitions, named apart from SlopCodeBench's *trivial wrappers* and
*single-use functions* (the ``slopcode`` metric), which count otherwise."""

from __future__ import annotations

import ast
from collections import Counter
from typing import Any

from agentrig.metrics.interface import Metric, SnapshotSources

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _body(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        return body[1:]  # the docstring
    return body


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = node.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return [name for name in names if name not in ("self", "cls")]


def is_trivial_wrapper(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether the function's whole body (its docstring aside) is one call, returned or not, whose
    arguments are exactly its own parameters, passed through unchanged."""
    body = _body(node)
    if len(body) != 1 or not isinstance(body[0], (ast.Return, ast.Expr)):
        return False
    call = body[0].value
    if isinstance(call, ast.Await):
        call = call.value
    if not isinstance(call, ast.Call):
        return False
    passed = [a.value if isinstance(a, ast.Starred) else a for a in call.args]
    passed += [k.value for k in call.keywords]
    if not all(isinstance(a, ast.Name) for a in passed):
        return False
    return sorted(a.id for a in passed if isinstance(a, ast.Name)) == sorted(_parameters(node))


def _referenced(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _candidate(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Functions whose callers the snapshot shows: not dunders, entry points, tests or decorated ones
    (a decorator may register the function with a framework that calls it)."""
    name = node.name
    return not (node.decorator_list or (name.startswith("__") and name.endswith("__")) or name == "main"
                or name.startswith("test"))


class WasteMetric(Metric):
    """Figures: ``passthrough_wrappers``, ``single_reference_functions`` (referenced from exactly one place
    in the snapshot), ``unused_functions`` (referenced from none). Details: each one's file, name and line."""

    def compute(self, sources: SnapshotSources) -> tuple[dict[str, float], dict[str, Any]]:
        """Walk every file's tree once for definitions and once for references."""
        references: Counter[str] = Counter()
        defined: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []
        for source in sources.files:
            assert source.tree is not None
            for node in ast.walk(source.tree):
                if isinstance(node, _DEFS):
                    defined.append((source.path, node))
                name = _referenced(node)
                if name is not None:
                    references[name] += 1
        wrappers = [{"file": path, "name": node.name, "line": node.lineno} for path, node in defined if is_trivial_wrapper(node)]
        candidates = [(path, node) for path, node in defined if _candidate(node)]
        single = [{"file": p, "name": n.name, "line": n.lineno} for p, n in candidates if references[n.name] == 1]
        unused = [{"file": p, "name": n.name, "line": n.lineno} for p, n in candidates if references[n.name] == 0]
        figures = {"passthrough_wrappers": float(len(wrappers)), "single_reference_functions": float(len(single)),
                   "unused_functions": float(len(unused))}
        return figures, {"passthrough_wrappers": wrappers, "single_reference_functions": single, "unused_functions": unused}
