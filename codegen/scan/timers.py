"""Timers and other callees that fill a dict they are handed, under a name they are handed.

Trainers time their phases with a context manager that records the elapsed time in a dict
the caller passes, under the name the caller passes, and log that dict later
(``{f"timing/{k}": v for k, v in timings.items()}``):

* a ``@contextmanager`` function (``with marked_timer("gen", timing_raw):``) whose body
  writes ``timing_raw[name] = ...``, itself or through another function it calls or
  delegates to (``yield from _timer(name, timing_raw)``);
* a class whose ``__init__`` stores its arguments (``self.name = name``, ``self.out =
  out``) and whose ``__enter__``/``__exit__`` (or the async pair) writes
  ``self.out[self.name] = ...`` (``with Timer("generate", self.all_timings):``).

The dict argument (a variable, a parameter or a ``self.<attr>``) gains the key the name
argument gives: a literal (or module constant) is a known key, reported at the argument;
anything else stays a hole there, ``SCAN_UNRESOLVED`` where it enters, crediting no row.
The function case is the scanner's general "a callee fills a dict it is passed" followed
at a ``with`` item and a ``yield from``; the class case is read here.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from .accumulators import dict_holder
from .objects import Opaque, gaining
from .syntax import FuncDef, bind
from .values import DictVal, Hole, Key

if TYPE_CHECKING:
    from .objects import Env
    from .sources import Module
    from .state import ScanState

__all__ = ["TIMER_METHODS", "class_fills", "fill_from", "fill_with", "filled_by_class"]

TIMER_METHODS = ("__enter__", "__exit__", "__aenter__", "__aexit__")
"""The methods a ``with`` block runs: their writes fill the dict the constructor stored."""


def _stored(init: FuncDef) -> dict[str, str]:
    """``self.<attr> = <param>`` in ``__init__``: attribute -> parameter."""
    params = {a.arg for a in (*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs)}
    found: dict[str, str] = {}
    for stmt in init.body:
        if not isinstance(stmt, ast.Assign) or not isinstance(stmt.value, ast.Name):
            continue
        if stmt.value.id not in params:
            continue
        for target in stmt.targets:
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
            ):
                found[target.attr] = stmt.value.id
    return found


def _self_attr(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr if node.value.id == "self" else None
    return None


def _writes(method: FuncDef) -> Iterator[ast.Subscript]:
    """``self.<a>[<k>] = ...`` and ``self.<a>[<k>] += ...`` in ``method``."""
    for node in ast.walk(method):
        if isinstance(node, ast.Assign):
            yield from (t for t in node.targets if isinstance(t, ast.Subscript))
        elif isinstance(node, ast.AugAssign | ast.AnnAssign) and isinstance(
            node.target, ast.Subscript
        ):
            yield node.target


def class_fills(methods: dict[str, FuncDef]) -> list[tuple[str, str | ast.expr]]:
    """What a timer class's ``with`` block writes: (the constructor parameter holding the
    dict, the parameter holding the key or the key's own expression), one per write."""
    init = methods.get("__init__")
    if init is None:
        return []
    stored = _stored(init)
    if not stored:
        return []
    fills: list[tuple[str, str | ast.expr]] = []
    for name in TIMER_METHODS:
        method = methods.get(name)
        if method is None:
            continue
        for target in _writes(method):
            held = _self_attr(target.value)
            if held not in stored:
                continue
            key = _self_attr(target.slice)
            if key is not None:
                if key in stored:
                    fills.append((stored[held], stored[key]))
            else:
                fills.append((stored[held], target.slice))
    return list(dict.fromkeys(fills))


def filled_by_class(
    scanner: ScanState, call: ast.Call, module: Module, methods: dict[str, FuncDef], env: Env
) -> list[tuple[ast.expr, DictVal]]:
    """The dict arguments of ``Cls(...)`` (a timer class) and the keys its block adds."""
    init = methods.get("__init__")
    if init is None:
        return []
    bound = bind(call, init, method=True)
    found: list[tuple[ast.expr, DictVal]] = []
    for param, key in class_fills(methods):
        target = bound.get(param)
        if target is None:
            continue  # left at its default (``update_dict=None``): nothing filled
        if isinstance(key, str):
            given = bound.get(key)
            if given is None:
                continue
            shapes = scanner._part(given, env, True)
            where = scanner._at(given)
        else:
            shapes = scanner._part(key, {}, True)  # a key the class writes itself
            where = module.where(key)
        keys = tuple(Key(shape, where) for shape in shapes)
        found.append((target, DictVal(keys)))
    return found


def fill_with(scanner: ScanState, holder: str, added: DictVal, env: Env) -> None:
    """The dict followed as ``holder`` gains ``added`` (a parameter's keys stay its own)."""
    current = env.get(holder)
    if current is None:
        current = scanner._lookup(holder, env)
    gained = gaining(current, added)
    if gained is not None:
        env[holder] = gained


_MAX_HOPS = 4
"""Re-exports followed (``from .utils import *`` in a package's ``__init__``)."""


def _bindings(body: list[ast.stmt]) -> Iterator[ast.ImportFrom]:
    """The ``from ... import`` statements of a module body, in its ``if``/``try`` too (a
    package choosing an implementation: every branch counts)."""
    for stmt in body:
        if isinstance(stmt, ast.ImportFrom):
            yield stmt
        elif isinstance(stmt, ast.If):
            yield from _bindings(stmt.body)
            yield from _bindings(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            yield from _bindings(stmt.body)
            for handler in stmt.handlers:
                yield from _bindings(handler.body)
            yield from _bindings(stmt.orelse)


def _defined(scanner: ScanState, module: Module, name: str, hops: int) -> list[Module]:
    """The scanned modules defining ``name`` as ``module`` exports it, re-exports followed."""
    if name in module.functions or name in module.classes:
        return [module]
    tree = module.full().tree
    if hops >= _MAX_HOPS or tree is None:
        return []
    found: list[Module] = []
    for stmt in _bindings(tree.body):
        for alias in stmt.names:
            if alias.name != "*" and (alias.asname or alias.name) != name:
                continue
            source = scanner.project.find_module(stmt.module or "", stmt.level, module)
            if source is not None and source is not module:
                wanted = name if alias.name == "*" else alias.name
                found.extend(_defined(scanner, source, wanted, hops + 1))
    return list(dict.fromkeys(found))


def _candidates(scanner: ScanState, call: ast.Call) -> list[tuple[Module, str]]:
    """Where ``name(...)`` may be defined: this module, or what its import resolves to."""
    func = call.func
    if not isinstance(func, ast.Name):
        return []
    module = scanner.module
    if func.id in module.functions or func.id in module.classes:
        return [(module, func.id)]
    imported = module.imports.get(func.id)
    if imported is None or imported[1] is None:
        return []
    source = scanner.project.find_module(imported[0], imported[2], module)
    if source is None:
        return []
    return [(home, imported[1]) for home in _defined(scanner, source, imported[1], 0)]


def _pairs(
    scanner: ScanState, call: ast.Call, module: Module, name: str, env: Env
) -> list[tuple[ast.expr, DictVal]]:
    """The dicts ``call`` hands to ``module``'s ``name`` and what it writes into them."""
    info = module.full().classes.get(name)
    if info is not None:
        if not any(m in info.methods for m in TIMER_METHODS):
            return []
        return filled_by_class(scanner, call, module, info.methods, env)
    func = module.full().functions.get(name)
    if func is None:
        return []
    result = scanner.project.returned(module, func, None, scanner.depth)
    bound = bind(call, func, method=False)
    return [
        (bound[param], _named(scanner, added, call, bound, env))
        for param, added in result.filled.items()
        if param in bound
    ]


def _named(
    scanner: ScanState, added: DictVal, call: ast.Call, bound: dict[str, ast.expr], env: Env
) -> DictVal:
    """What a callee adds, instantiated for ``call``; a key that is a parameter's whole value
    (``out[name] = t``) is reported where the caller passes it (``timer("gen", d)``)."""
    named: list[Key] = []
    rest: list[Key] = []
    for key in added.keys:
        part = key.shape[0] if len(key.shape) == 1 else None
        if isinstance(part, Hole) and part.param and part.param in bound:
            given = bound[part.param]
            where = scanner._at(given)
            named.extend(Key(shape, where) for shape in scanner._part(given, env, True))
        else:
            rest.append(key)
    others = DictVal(tuple(rest), added.unresolved, added.spreads)
    found = scanner._instantiate(others, call, bound, env)
    return DictVal(tuple(dict.fromkeys((*named, *found.keys))), found.unresolved, found.spreads)


def _arguments(call: ast.Call) -> Iterator[ast.expr]:
    yield from call.args
    yield from (keyword.value for keyword in call.keywords)


def _may_be_filled(scanner: ScanState, node: ast.expr, env: Env) -> bool:
    """``d`` (a dict or a parameter) or ``self.d``: an argument a callee may fill."""
    if isinstance(node, ast.Attribute):
        return isinstance(node.value, ast.Name) and node.value.id == "self"
    if isinstance(node, ast.Name):
        value = scanner._lookup(node.id, env)
        return isinstance(value, DictVal) or (isinstance(value, Opaque) and value.parameter)
    return False


def fill_from(scanner: ScanState, call: ast.Call, env: Env) -> None:
    """``with timer("gen", d):`` or ``yield from _timer(name, d)``: the dicts the call is
    handed gain the keys its callee (a timer class, or a function) writes into them."""
    if not any(_may_be_filled(scanner, a, env) for a in _arguments(call)):
        return  # ``with torch.no_grad():``: no dict handed over, nothing resolved
    pairs: list[tuple[ast.expr, DictVal]] = []
    candidates = _candidates(scanner, call)
    for module, name in candidates:
        pairs.extend(_pairs(scanner, call, module, name, env))
    if not candidates:
        returned = scanner._returned(call)  # a method: ``self.gauge.timed(name, d)``
        if returned is None or not returned[0].filled:
            return
        result, bound = returned
        pairs = [
            (bound[param], _named(scanner, added, call, bound, env))
            for param, added in result.filled.items()
            if param in bound
        ]
    for target, added in pairs:
        holder = dict_holder(target)
        if holder is not None and not added.empty():
            fill_with(scanner, holder, added, env)
