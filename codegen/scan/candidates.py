"""Calls that hand a dict of string keys onward: what to name in ``scan-calls`` when scan
recognised few logging calls.

A trainer logging through a method scan cannot see (an untyped tracker object, a process
boundary) still builds its metrics as a dict with literal keys and hands it to that call:
``metrics = {"loss": l}; metrics["kl"] = k; self.tracker.log(metrics, step)``. Each such
call, counted over the scanned files and ranked by how many keys it receives, is a
candidate the first-run note names, with the ``scan-calls`` entry that would read it.
Read from the syntax trees only; nothing is imported or run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from .syntax import dotted, walk

__all__ = ["Candidate", "candidates"]

_NOT_SINKS: Final = frozenset(
    {
        "print", "len", "dict", "list", "sorted", "set", "tuple", "str", "repr", "isinstance",
        "dumps", "dump", "update", "setdefault", "copy", "deepcopy", "format", "join", "get",
        "pop", "items", "keys", "values", "append", "extend", "info", "debug", "warning",
        "error", "exception", "zip", "enumerate", "map", "filter", "any", "all", "super",
        "asdict", "replace",
    }
)  # fmt: skip
"""Calls that take a dict but log nothing (builtins, dict methods, text loggers)."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A call handing a dict of string keys onward, and the entry that would scan it."""

    call: str
    """The call as written, receiver and all (``self.tracker.log``)."""
    position: int | str
    """The argument holding the dict: its position, or its keyword."""
    keys: int
    """String keys handed to it over the scanned files."""
    where: str
    """``path:line`` of its first such call."""

    def entry(self) -> str:
        """The ``scan-calls`` entry naming it (the receiver's last part and the method)."""
        name = ".".join(self.call.split(".")[-2:])
        argument = self.position if isinstance(self.position, int) else f'"{self.position}"'
        return f'{{call = "{name}", metrics = {argument}}}'


def candidates(files: Iterable[tuple[str, bytes]], limit: int = 3) -> list[Candidate]:
    """The ``limit`` calls of ``files`` (``(path as shown, source)``) handed the most string
    keys in a dict; a file that does not parse is skipped (the scan reports it)."""
    found: dict[tuple[str, int | str], tuple[int, str]] = {}
    for shown, source in files:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for func in walk(tree):
            if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                _in_function(func, shown, found)
    ranked = sorted(found.items(), key=lambda item: (-item[1][0], item[1][1]))
    return [Candidate(call, at, count, where) for (call, at), (count, where) in ranked[:limit]]


def _in_function(
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    shown: str,
    found: dict[tuple[str, int | str], tuple[int, str]],
) -> None:
    """Count the string keys each call in ``func`` is handed in a dict."""
    keys: dict[str, int] = {}  # a local name -> string keys written into it
    nodes = list(walk(func))
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and _is_dict(node.value):
                keys[target.id] = keys.get(target.id, 0) + _literal_keys(node.value)
            elif (
                isinstance(target, ast.Subscript)
                and isinstance(target.value, ast.Name)
                and _is_text(target.slice)
            ):
                keys[target.value.id] = keys.get(target.value.id, 0) + 1
    for node in nodes:
        if not isinstance(node, ast.Call):
            continue
        call = dotted(node.func)
        if call is None or call.rpartition(".")[2] in _NOT_SINKS:
            continue
        arguments: list[tuple[int | str, ast.expr]] = list(enumerate(node.args))
        arguments += [(kw.arg, kw.value) for kw in node.keywords if kw.arg is not None]
        for position, argument in arguments:
            count = _literal_keys(argument) if isinstance(argument, ast.Dict) else 0
            if isinstance(argument, ast.Name):
                count = keys.get(argument.id, 0)
            if count:
                before, where = found.get((call, position), (0, f"{shown}:{node.lineno}"))
                found[(call, position)] = (before + count, where)


def _is_dict(node: ast.expr) -> bool:
    if isinstance(node, ast.Dict):
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict"


def _literal_keys(node: ast.expr) -> int:
    if isinstance(node, ast.Dict):
        return sum(1 for key in node.keys if key is not None and _is_text(key))
    if isinstance(node, ast.Call):
        return sum(1 for kw in node.keywords if kw.arg is not None)
    return 0


def _is_text(node: ast.expr) -> bool:
    """A key written as text: a string literal or an f-string."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    return isinstance(node, ast.JoinedStr)
