"""Dicts held inside a followed dict under literal keys, and the loops that read them back.

``data["fipo"] = {"kl_mean": ..., "keep": ...}`` (or ``data["fipo"] = stats`` of a dict
scan follows, ``data.setdefault("fipo", {})[name] = v``, ``data["fipo"][name] = v``) makes
``data`` hold that inner dict under ``"fipo"``; a later ``for k, v in data["fipo"].items()``
(directly, through ``inner = data["fipo"]``, or in a method ``data`` is handed to, see
:func:`codegen.scan.extract.Project.attribute_dict`) loops over its known keys, where scan
would otherwise know only that some key is there. One or two levels of literal keys are
followed; a key known only at run time (``data[group]``) gives no inner dict: the read
stays unresolved where it is, never a guess.
"""

from __future__ import annotations

import ast
import re
from typing import Final

from .objects import Env
from .sources import Module
from .state import ScanState
from .syntax import FuncDef, bind
from .values import DictVal

__all__ = ["InnerDicts", "holds_inner", "may_pass_inner", "passed_inner", "reads_inner"]

_MAX_LEVELS: Final = 2
"""How many literal subscripts deep an inner dict is followed (``d["a"]["b"]``)."""


def _literal(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _path(node: ast.expr) -> tuple[str, list[str]] | None:
    """``d["a"]["b"]`` -> ``("d", ["a", "b"])``; ``d.setdefault("a", {})`` is ``d["a"]``;
    ``None``: not a variable read through literal keys only."""
    keys: list[str] = []
    while True:
        if isinstance(node, ast.Subscript):
            key = _literal(node.slice)
            node = node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "setdefault"
            and node.args
            and not node.keywords
        ):
            key = _literal(node.args[0])
            node = node.func.value
        else:
            break
        if key is None or len(keys) >= _MAX_LEVELS:
            return None
        keys.append(key)
    if not isinstance(node, ast.Name) or not keys:
        return None
    return node.id, keys[::-1]


def holds_inner(value: DictVal) -> bool:
    """Whether some key of ``value`` is known only up to a loop over a dict scan could not
    follow: what a caller's dict with inner dicts (:func:`passed_inner`) may resolve."""
    return any(key.why for key in value.keys) or bool(value.unresolved)


def reads_inner(method: FuncDef, module: Module) -> bool:
    """Whether ``method`` (of ``module``) reads a parameter through a
    literal key (``data["fipo"]``): only then can a caller's inner dicts tell it more.
    Read from the method's text (no walk of its tree)."""
    params = [arg.arg for arg in (*method.args.posonlyargs, *method.args.args)]
    params += [arg.arg for arg in method.args.kwonlyargs]
    if not params:
        return False
    starts = module.line_starts()
    last = method.end_lineno or method.lineno
    end = starts[last] if last < len(starts) else len(module.source)
    text = module.source[starts[method.lineno - 1] : end]
    names = b"|".join(re.escape(name.encode()) for name in params)
    return re.search(rb"\b(?:%s)\[\s*[rbuf]?['\"]" % names, text, re.IGNORECASE) is not None


def may_pass_inner(call: ast.Call, method: FuncDef, caller: FuncDef) -> bool:
    """Whether ``call`` (of ``method``, in ``caller``) passes a variable of ``caller`` that is
    not one of its parameters: only such a variable can hold a dict built there (checked
    before ``caller`` is analysed)."""
    own = {arg.arg for arg in (*caller.args.posonlyargs, *caller.args.args)}
    own.update(arg.arg for arg in caller.args.kwonlyargs)
    return any(
        isinstance(argument, ast.Name) and argument.id not in own
        for argument in bind(call, method, method=True).values()
    )


def passed_inner(call: ast.Call, method: FuncDef, caller: Env) -> Env:
    """The parameters of ``method`` that ``call`` (``self.<method>(data)``) passes a
    variable of ``caller`` holding inner dicts, bound to what that variable holds."""
    bound: Env = {}
    for param, argument in bind(call, method, method=True).items():
        if isinstance(argument, ast.Name):
            held = caller.get(argument.id)
            if isinstance(held, DictVal) and held.inner:
                bound[param] = held
    return bound


class InnerDicts(ScanState):
    """The dicts a followed dict holds under literal keys (part of ``_Scanner``)."""

    def _inner_read(self, node: ast.expr, env: Env) -> DictVal | None:
        """The dict ``d["a"]`` (``d["a"]["b"]``) holds when ``d`` holds one there, else
        ``None`` (the caller reads it as before)."""
        path = _path(node)
        if path is None or isinstance(node, ast.Call):
            return None
        held = self._lookup(path[0], env)
        for key in path[1]:
            if not isinstance(held, DictVal):
                return None
            held = held.nested(key)
        return held if isinstance(held, DictVal) else None

    def _inner_write(self, target: ast.Subscript, node: ast.expr, env: Env) -> bool:
        """``d["a"][k] = v`` or ``d.setdefault("a", {})[k] = v``: ``d["a"]`` gains ``k``
        (``True``: handled). ``d`` keeps its own keys; only its inner dict changes."""
        path = _path(target.value)
        if path is None:
            return False
        name, keys = path
        held = self._lookup(name, env)
        if not isinstance(held, DictVal):
            return False
        gained = self._keys(target.slice, env)
        value = self._held_inner(node, env)
        env[name] = self._put(held, keys, gained, value)
        return True

    def _put(
        self, held: DictVal, keys: list[str], gained: DictVal, value: DictVal | None
    ) -> DictVal:
        """``held`` whose inner dict at ``keys`` gains the keys ``gained`` (each holding
        ``value`` when that is a dict scan follows)."""
        key, rest = keys[0], keys[1:]
        inner = held.nested(key) or DictVal()
        if rest:
            return held.holding(key, self._put(inner, rest, gained, value))
        grown = inner.merge(gained)
        literal = gained.keys[0].shape if len(gained.keys) == 1 else ()
        if value is not None and len(literal) == 1 and isinstance(literal[0], str):
            grown = grown.holding(literal[0], value)
        return held.holding(key, grown)

    def _held_inner(self, node: ast.expr | None, env: Env, *, calls: bool = True) -> DictVal | None:
        """The dict ``node`` is, when it is one scan follows (a literal, ``dict(...)``, a
        comprehension, a variable holding a followed dict or, with ``calls``, a call returning
        one); ``None`` otherwise: a number, a tensor, anything unknown holds no keys."""
        if node is None:
            return None
        if isinstance(node, ast.Name):
            found = self._lookup(node.id, env)
            return found if isinstance(found, DictVal) else None
        if isinstance(node, ast.Call) and not calls:
            return None
        if isinstance(node, ast.Dict | ast.DictComp | ast.Call) and self._is_dictish(node, env):
            value = self._dict(node, env)
            return None if value.unresolved and not value.keys else value
        return None

    def _hold(
        self,
        holder: DictVal,
        key: ast.expr | None,
        node: ast.expr | None,
        env: Env,
        *,
        calls: bool = True,
    ) -> DictVal:
        """``holder`` once ``holder["a"] = node`` is written: the dict ``node`` is, kept
        under ``"a"`` (``holder`` as it is for another key or value). In a literal
        (``calls=False``) a call's value is not looked into: most are numbers, and a
        literal's every value would cost a lookup."""
        name = None if key is None else _literal(key)
        if name is None:
            return holder
        value = self._held_inner(node, env, calls=calls)
        return holder if value is None else holder.holding(name, value)
