"""Loops unpacking rows of a literal table: ``for metric_key, source_key in FIELDS:``.

A module (or inline) constant holding a tuple or list of rows of equal length, each a tuple
or list of string literals (``(("request/e2e_latency", "e2e_latency"), ...)``), gives each
loop variable the strings of its column. The analysis holds a variable's strings as a set,
not per row: two variables of one loop used in the same key would pair every value of one
with every value of the other, keys the code never builds. So a column is bound only when
no expression of the scope builds a string from two of the loop's variables; otherwise the
variables stay holes (``SCAN_UNRESOLVED``, never a guessed key).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from .syntax import walk

__all__ = ["columns"]

_MAX_ROWS = 256
"""Rows read from one table: a larger literal is data, not a list of metric names."""


def columns(
    target: ast.expr, iterable: ast.expr, constants: Mapping[str, ast.expr], scope: ast.AST
) -> dict[str, tuple[str, ...]]:
    """Each loop variable of ``target`` -> the strings of its column in the table
    ``iterable`` names (a constant of ``constants`` or a literal); empty when the loop is
    not of that shape, or when ``scope`` builds one string from two of its variables."""
    if not isinstance(target, ast.Tuple) or not all(isinstance(e, ast.Name) for e in target.elts):
        return {}
    names = [e.id for e in target.elts if isinstance(e, ast.Name)]
    table = constants.get(iterable.id) if isinstance(iterable, ast.Name) else iterable
    if not isinstance(table, ast.Tuple | ast.List) or not 0 < len(table.elts) <= _MAX_ROWS:
        return {}
    found: dict[str, list[str]] = {name: [] for name in names}
    for row in table.elts:
        if not isinstance(row, ast.Tuple | ast.List) or len(row.elts) != len(names):
            return {}
        for name, cell in zip(names, row.elts, strict=True):
            if isinstance(cell, ast.Constant) and isinstance(cell.value, str):
                found[name].append(cell.value)
    whole = {
        name: tuple(dict.fromkeys(v)) for name, v in found.items() if len(v) == len(table.elts)
    }
    if len(whole) > 1 and _paired(set(names), scope):
        return {}
    return whole


def _paired(names: set[str], scope: ast.AST) -> bool:
    """An f-string, ``+``, ``%`` or ``.format`` in ``scope`` reads two of ``names``."""
    for node in walk(scope):
        if isinstance(node, ast.JoinedStr | ast.BinOp) or (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in {"format", "join"}
        ):
            read = {n.id for n in walk(node) if isinstance(n, ast.Name)} & names
            if len(read) > 1:
                return True
    return False
