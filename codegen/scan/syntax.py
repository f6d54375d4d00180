"""Small readers of syntax trees shared by the scanner's parts: a call's arguments bound to
a function's parameters, an expression as shown in a message, a statement's own expressions."""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator
from typing import Final, TypeAlias

__all__ = [
    "FuncDef",
    "bind",
    "children",
    "defaults",
    "describe",
    "dotted",
    "is_static",
    "own_expressions",
    "params",
    "passed",
    "shown",
    "walk",
]

FuncDef: TypeAlias = ast.FunctionDef | ast.AsyncFunctionDef

_SHOWN: Final = 60
"""Longest expression text shown in a message."""


_MAX_SHOWN_DEPTH: Final = 64
"""Deepest expression :func:`shown` unparses whole; :func:`ast.unparse` recurses once per
level, so a deeper one (``out.a.a.a...`` 999 deep) is shown by its outer levels only."""


def shown(node: ast.AST) -> str:
    """``node``'s source text, cut to a length a message can hold (at any depth)."""
    if _deeper_than(node, _MAX_SHOWN_DEPTH):
        return _outline(node)
    text = ast.unparse(node)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def _deeper_than(node: ast.AST, limit: int) -> bool:
    """Whether a chain of nested nodes under ``node`` is more than ``limit`` deep; stops
    at the first such chain (iterative: the question is asked of hostile trees)."""
    stack: list[tuple[ast.AST, int]] = [(node, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children(item))
    return False


def _outline(node: ast.AST) -> str:
    """A deep expression as its innermost name and outermost parts (``out. ... .metrics``),
    read without recursion; what lies between is elided."""
    tail: list[str] = []
    item = node
    while True:
        if isinstance(item, ast.Attribute):
            tail.append("." + item.attr)
            item = item.value
        elif isinstance(item, ast.Call):
            tail.append("(...)")
            item = item.func
        elif isinstance(item, ast.Subscript):
            tail.append("[...]")
            item = item.value
        else:
            break
    head = item.id if isinstance(item, ast.Name) else f"<{type(item).__name__}>"
    outer = "".join(reversed(tail[:2]))
    return f"{head} ... {outer}" if len(tail) > 2 else head + outer


def passed(call: ast.Call, position: int | None, keywords: tuple[str, ...]) -> ast.expr | None:
    """The argument ``call`` passes by one of ``keywords`` or at ``position`` (``None`` when
    a ``*args`` before it hides where it is)."""
    for item in call.keywords:
        if item.arg is not None and item.arg in keywords:
            return item.value
    if position is None or position >= len(call.args):
        return None
    if any(isinstance(arg, ast.Starred) for arg in call.args[: position + 1]):
        return None
    return call.args[position]


def bind(call: ast.Call, func: FuncDef, *, method: bool) -> dict[str, ast.expr]:
    """Parameter name -> the argument ``call`` passes for it (``self`` skipped for a method)."""
    args = func.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    if method and positional and not is_static(func):
        positional = positional[1:]
    bound: dict[str, ast.expr] = {}
    for name, value in zip(positional, call.args, strict=False):
        if isinstance(value, ast.Starred):
            break
        bound[name] = value
    named = {*positional, *(a.arg for a in args.kwonlyargs)}
    for keyword in call.keywords:
        if keyword.arg is not None and (keyword.arg in named or args.kwarg is None):
            bound[keyword.arg] = keyword.value
    if args.kwarg is not None:
        # ``def log(**metrics)`` called ``log(loss=v, **extra)``: ``metrics`` is the dict of
        # the keywords no other parameter takes, each key written where its keyword is.
        rest = [k for k in call.keywords if k.arg is None or k.arg not in named]
        if rest:
            keys: list[ast.expr | None] = [
                None if k.arg is None else ast.copy_location(ast.Constant(k.arg), k) for k in rest
            ]
            gathered = ast.Dict(keys=keys, values=[k.value for k in rest])
            bound[args.kwarg.arg] = ast.copy_location(gathered, rest[0])
    return bound


def defaults(func: FuncDef) -> dict[str, ast.expr]:
    """Parameter name -> its default expression."""
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    with_default = positional[len(positional) - len(args.defaults) :]
    found = {arg.arg: value for arg, value in zip(with_default, args.defaults, strict=True)}
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if default is not None:
            found[arg.arg] = default
    return found


def dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of names, else ``None``."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def is_static(func: FuncDef) -> bool:
    """A ``@staticmethod``: no ``self`` to skip when binding a call's arguments."""
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in func.decorator_list)


def params(func: FuncDef) -> list[str]:
    """Every parameter name of ``func`` (``*args`` and ``**kwargs`` included)."""
    args = func.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return names


def own_expressions(stmt: ast.stmt) -> Iterator[ast.expr]:
    """The expressions of ``stmt`` itself, not those of the blocks it holds."""
    for name, value in ast.iter_fields(stmt):
        if name in {"body", "orelse", "finalbody", "handlers", "cases"}:
            continue
        if isinstance(value, ast.expr):
            yield value
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, ast.expr):
                    yield item
                elif isinstance(item, ast.withitem):
                    yield item.context_expr


def describe(node: ast.AST) -> str:
    """What a dict expression the scanner cannot follow is, for a message."""
    if isinstance(node, ast.Call):
        return f"a dict built by a call to `{shown(node.func)}(...)`"
    if isinstance(node, ast.Subscript | ast.Attribute):
        return f"a dict read from `{shown(node)}`"
    if isinstance(node, ast.Name):
        return f"the variable `{node.id}`, which the scanner cannot follow"
    return f"`{shown(node)}`"


def children(node: ast.AST) -> list[ast.AST]:
    """``node``'s direct child nodes, in :func:`ast.iter_child_nodes`'s order.

    The scanner asks this of most nodes it meets: read in one loop, without the two
    generators of :func:`ast.iter_child_nodes`, it costs about half as much.
    """
    found: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            found.append(value)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, ast.AST):
                    found.append(item)
    return found


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under ``node`` (itself included) in :func:`ast.walk`'s order (breadth
    first), at about half its cost (see :func:`children`)."""
    todo = deque((node,))
    push = todo.append
    while todo:
        node = todo.popleft()
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                push(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        push(item)
        yield node
