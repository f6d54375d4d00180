"""Flattening helpers, recognised by what they do: a nested dict's leaf paths are its keys.

``flatten_dict(dict(losses=dict(total=l), values=stats_of(v)), sep="/")`` logs
``losses/total`` and ``values/<each key stats_of returns>``. A function is a flattener when
it loops ``for k, v in <its first parameter>.items()``, calls itself in that loop (on the
nested value) and builds a key from ``k`` there (``parent + sep + k``, an f-string, a
``sep.join``); its separator is the one string literal in that key expression, or the
non-empty string default of the parameter the expression reads (``sep: str = "/"``), or
what a call passes for that parameter. Nothing else about it (its name, its module) counts.

Only :mod:`ast` facts are read: the analysis (:mod:`.dictvalues`) walks the nested value.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Final

from .syntax import FuncDef, walk

__all__ = ["Flattener", "flattener", "separator"]


@dataclass(frozen=True, slots=True)
class Flattener:
    """How a flattening function joins a parent key and a child key."""

    sep: str | None
    """The separator as written in the function (``None``: a parameter's, see ``param``)."""
    param: str | None
    """The parameter holding the separator, which a call may pass (``sep="."``)."""
    index: int
    """That parameter's position among the function's positional parameters."""


_NOT: Final = Flattener(None, None, -1)
_KNOWN: dict[int, tuple[FuncDef, Flattener]] = {}
"""Per function node (held, so its id is not reused): what :func:`flattener` found."""


def flattener(func: FuncDef) -> Flattener | None:
    """How ``func`` flattens a nested dict, or ``None`` when it is no flattener."""
    held = _KNOWN.get(id(func))
    if held is None or held[0] is not func:
        held = _KNOWN[id(func)] = (func, _recognised(func))
    found = held[1]
    return None if found is _NOT else found


def separator(found: Flattener, call: ast.Call) -> str | None:
    """The separator a call of the flattener uses: a literal it passes, else the default."""
    for item in call.keywords:
        if item.arg is not None and item.arg == found.param:
            return _text(item.value)
    if found.param is not None and 0 <= found.index < len(call.args):
        return _text(call.args[found.index])
    return found.sep


def _recognised(func: FuncDef) -> Flattener:
    positional = [a.arg for a in func.args.posonlyargs + func.args.args]
    if positional and positional[0] in {"self", "cls"}:
        positional = positional[1:]
    if not positional:
        return _NOT
    source = positional[0]
    for loop in walk(func):
        if not (isinstance(loop, ast.For) and _items_of(loop.iter, source)):
            continue
        target = loop.target
        if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
            continue
        key = target.elts[0]
        if not isinstance(key, ast.Name) or not _recurses(loop, func.name):
            continue
        for node in walk(loop):
            built = _key_expression(node, key.id)
            if built is not None:
                return _separator_of(built, func, positional)
    return _NOT


def _items_of(node: ast.expr, name: str) -> bool:
    """``<name>.items()``."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "items"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == name
        and not node.args
    )


def _recurses(loop: ast.For, name: str) -> bool:
    """The loop calls the function itself (``name(...)`` or ``self.name(...)``)."""
    for node in walk(loop):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id == name:
                return True
            if isinstance(func, ast.Attribute) and func.attr == name:
                return True
    return False


def _key_expression(node: ast.AST, key: str) -> ast.expr | None:
    """An expression joining something with the loop's key: ``a + sep + k``, ``f"{a}{sep}{k}"``
    or ``sep.join((a, k))``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and _reads(node, key):
        return node
    if isinstance(node, ast.JoinedStr) and len(node.values) > 1 and _reads(node, key):
        return node
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "join"
        and _reads(node, key)
    ):
        return node
    return None


def _reads(node: ast.AST, name: str) -> bool:
    return any(isinstance(inner, ast.Name) and inner.id == name for inner in walk(node))


def _separator_of(built: ast.expr, func: FuncDef, positional: list[str]) -> Flattener:
    literals = {
        inner.value
        for inner in walk(built)
        if isinstance(inner, ast.Constant) and isinstance(inner.value, str) and inner.value
    }
    if len(literals) == 1:
        return Flattener(literals.pop(), None, -1)
    read = {inner.id for inner in walk(built) if isinstance(inner, ast.Name)}
    if isinstance(built, ast.Call) and isinstance(built.func, ast.Attribute):
        joiner = built.func.value  # ``sep.join(...)``: the receiver is the separator
        read = {joiner.id} if isinstance(joiner, ast.Name) else set()
    defaults = _string_defaults(func)
    for name in sorted(read):
        default = defaults.get(name)
        if default:  # a parent key defaults to "": the separator does not
            index = positional.index(name) if name in positional else -1
            return Flattener(default, name, index)
    return _NOT


def _string_defaults(func: FuncDef) -> dict[str, str]:
    args = func.args
    positional = args.posonlyargs + args.args
    found: dict[str, str] = {}
    pairs = list(
        zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)
    )
    pairs += [
        (a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None
    ]
    for arg, default in pairs:
        text = _text(default)
        if text is not None:
            found[arg.arg] = text
    return found


def _text(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
