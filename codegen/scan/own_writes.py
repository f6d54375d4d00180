"""Keys a method writes into ``self.<attr>`` itself, seen where that method reads it.

A trainer's ``fit`` often fills ``self.all_metrics`` in its own body (``self.all_metrics[
"trainer/epoch"] = epoch``, ``self.all_metrics.update({...})``), logs it, and resets it
(``self.all_metrics = {}``) for the next step. What the other methods write into the
attribute is the class's business (every method's writes, folded); what the reading method
itself writes is flow: the writes made before the read, in the order the code runs them,
including those a loop carries into its next iteration. A reset after the read hides
nothing, and a write made only after the read in straight-line code is not read there.

Three hooks of the analysis (:mod:`.statements`, :mod:`.dictvalues`):

* :func:`read_here`: the dict ``self.<attr>`` holds where the method reads it (the other
  methods' fold joined with the method's own writes so far);
* :func:`loop_carried`: the environment a loop body starts with on a later iteration (a
  first pass over the body, its findings dropped, joined with the entry);
* :func:`remember` / :func:`ever_held`: a method that resets an attribute after filling it
  contributes what it wrote, not only what the attribute holds when the method returns.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from .objects import Opaque
from .values import DictVal

if TYPE_CHECKING:
    from .objects import Env, Value

_T = TypeVar("_T")

__all__ = [
    "carried_names",
    "ever_held",
    "is_plain_attribute",
    "loop_carried",
    "may_fill",
    "read_here",
    "remember",
]


def _as_dict(value: Value | None) -> DictVal | None:
    if isinstance(value, Opaque):
        return value.as_dict()
    return value if isinstance(value, DictVal) else None


def read_here(folded: DictVal | None, own: Value | None) -> DictVal | None:
    """``self.<attr>`` where the method reads it: what the other methods write (``folded``)
    with what this method holds there (``own``, ``None`` when it has not written it)."""
    mine = _as_dict(own)
    if mine is None:
        return folded
    return mine if folded is None else folded.merge(mine)


def loop_carried(body: Callable[[Env], Env], found: list[_T], entry: Env, names: set[str]) -> Env:
    """The environment a loop body starts with: ``entry`` joined with what a first pass of
    the body leaves, for the dicts it changed (a write after the logging call reaches the
    next iteration's call). The first pass's findings are dropped: the second one reports."""
    start = len(found)
    after = body(dict(entry))
    del found[start:]
    carried = dict(entry)
    for name, value in after.items():
        if name not in names:
            continue
        before = entry.get(name)
        if value is before or not isinstance(value, DictVal):
            continue
        had = _as_dict(before)
        carried[name] = value if had is None else had.merge(value)
    return carried


_FILLS = frozenset({"update", "setdefault"})
_ACCUMULATES = frozenset({"append", "extend", "add"})


def _name(node: ast.expr) -> str | None:
    """The name a dict is followed under (``d``, ``self.d``), else ``None``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and is_plain_attribute(node):
        return f"self.{node.attr}"
    return None


def _filled(node: ast.AST) -> str | None:
    """The dict ``node`` fills: ``d[k] = v``, ``d = {"k": v}``, ``d |= e``,
    ``d.update(...)``, ``d[k].append(v)`` (a reset to ``{}`` carries nothing)."""
    if isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = node.value
        fresh = (isinstance(value, ast.Dict) and bool(value.keys)) or isinstance(
            value, ast.DictComp
        )
        for target in targets:
            if isinstance(target, ast.Subscript) and (name := _name(target.value)):
                return name
            if fresh and (name := _name(target)):
                return name
        return None
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.BitOr):
        return _name(node.target)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        attr, held = node.func.attr, node.func.value
        if attr in _FILLS and not any(isinstance(a, ast.Constant) for a in node.args):
            return _name(held)
        if attr in _ACCUMULATES and isinstance(held, ast.Subscript):
            return _name(held.value)
    return None


def _reset(stmt: ast.stmt) -> set[str]:
    """The dicts a straight-line statement assigns anew (``metrics = {}``)."""
    if not isinstance(stmt, ast.Assign | ast.AnnAssign):
        return set()
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    return {name for target in targets if (name := _name(target)) is not None}


_MAY_FILL = re.compile(
    rb"self\.\w+\s*(?:\[[^\]\n]*\]\s*(?:=(?!=)|\.\s*(?:append|extend|add)\b)"
    rb"|\.(?:update|setdefault)\s*\(|\|=|=\s*\{)"
)
"""The text of a ``self.<attr>`` dict filled (``self.d[k] = v``, ``.update(``, ``|=``,
``= {``): a loop's text
after its first logging call holding none of it carries nothing (no tree walked)."""


def may_fill(text: bytes) -> bool:
    """Whether ``text`` may fill a dict (a cheap test before :func:`carried_names`)."""
    return _MAY_FILL.search(text) is not None


def _loads(stmt: ast.stmt) -> set[str]:
    """The followed names ``stmt`` reads (``d``, ``self.d``; ``d[k] = v`` reads ``d``)."""
    found: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name | ast.Attribute) and isinstance(node.ctx, ast.Load):
            name = _name(node)
            if name is not None:
                found.add(name)
    return found


def carried_names(body: list[ast.stmt], line: int) -> set[str]:
    """The ``self.<attr>`` dicts ``body`` fills after ``line`` (its first logging call) that
    a next turn can still read: not assigned anew by a statement of the body itself before any
    statement reads them. A cheap syntactic test, so the first pass over a loop's body is
    made only where it can matter."""
    filled = {
        name
        for stmt in body
        for node in ast.walk(stmt)
        if getattr(node, "lineno", 0) > line
        and (name := _filled(node)) is not None
        and name.startswith("self.")  # what this module follows: ``self.<attr>``
    }
    pending = set(filled)
    for stmt in body:
        if not pending:
            break
        read = _loads(stmt) & pending
        pending -= read  # read first: what the last turn left is read
        anew = _reset(stmt) & pending
        filled -= anew  # assigned first: the last turn's dict is gone
        pending -= anew
    return filled


def remember(ever: dict[str, DictVal], holder: str, env: Env) -> None:
    """``self.<attr> = ...`` replaces what the attribute held: keep it as written."""
    held = _as_dict(env.get(holder))
    if held is None or held.empty():
        return
    known = ever.get(holder)
    ever[holder] = held if known is None else known.merge(held)


def ever_held(env: Env, ever: dict[str, DictVal]) -> Env:
    """``env`` with each ``self.<attr>`` holding every key the method wrote into it."""
    for holder, written in ever.items():
        now = _as_dict(env.get(holder))
        env[holder] = written if now is None else now.merge(written)
    return env


def is_plain_attribute(node: ast.expr) -> bool:
    """``self.<attr>`` itself (not ``self.m[mode]``): followed by flow in its method."""
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )
