"""Scopes and statements: a function's body read in order, each statement updating what
every variable holds (dicts, strings, objects), branches joined, loops carried to a fixed
point, nested functions and closures followed."""

from __future__ import annotations

import ast
import bisect
from collections.abc import Sequence
from itertools import compress
from operator import is_not
from typing import Final

from .accumulators import dict_holder, narrowed
from .keyfilter import KeyTest, bound_once, has_exit, literal_table
from .model import Logged, Returns
from .objects import (
    Callables,
    Env,
    Gathered,
    Opaque,
    Value,
    gaining,
    join_objects,
)
from .own_writes import (
    carried_names,
    loop_carried,
    may_fill,
    remember,
)
from .sources import Module
from .state import (
    OBJECT_EXPRESSIONS,
    ScanState,
    dict_item,
    valued,
)
from .syntax import FuncDef, walk
from .syntax import dotted as _dotted
from .syntax import params as _params
from .syntax import shown as _shown
from .timers import fill_from
from .unpacking import columns
from .values import (
    SLOT,
    DictVal,
    Hole,
    KeyList,
    KeysOf,
    Shape,
    Spread,
    StrVal,
    Unresolved,
)

__all__ = [
    "Statements",
]


_DICT_TYPES: Final = frozenset(
    {"dict", "Dict", "Mapping", "MutableMapping", "OrderedDict", "defaultdict", "DefaultDict"}
)
"""Annotations that make a parameter a dict (see :meth:`_Scanner._dict_parameter`)."""


_GATHER_OBJECT: Final = "all_gather_object"
"""``dist.all_gather_object(out, obj)``: ``out`` becomes a list of every rank's ``obj``."""


_ACCUMULATE: Final = frozenset({"append", "extend", "add", "update"})
"""``d[k].append(v)`` and the like: ``d`` (a dict of lists or sets) holds ``k``."""


def _literal_constants(module: Module) -> dict[str, object]:
    """The module's constants that are literals (``SKIP = ("a/", "b/")``), for key filters."""
    if module.literals is None:
        module.literals = literal_table(
            [ast.Assign([ast.Name(name)], value) for name, value in module.constants.items()]
        )
    return module.literals


def _join(before: Env, *branches: Env) -> Env:
    """The environment after branches: a dict any branch changed holds every branch's keys."""
    joined = dict(before)
    # The names a branch rebound, compared by identity in C (``compress`` over ``is_not``):
    # large functions carry hundreds of variables through every ``if``.
    names: set[str] = set()
    for env in branches:
        names.update(compress(env, map(is_not, env.values(), map(before.get, env))))
    for name in names:
        values = [env[name] for env in branches if name in env]
        if name in before and len(values) < len(branches):
            values.append(before[name])
        dicts = [v for v in values if isinstance(v, DictVal)]
        strs = [v for v in values if isinstance(v, StrVal)]
        if dicts:
            merged = DictVal()
            for value in dicts:
                merged = merged.merge(value)
            for other in values:
                if (
                    isinstance(other, Opaque)
                    and not other.parameter
                    and not isinstance(other.node, ast.Constant)  # ``x = None``: no keys
                ):
                    merged = merged.merge(other.as_dict())  # a branch's unfollowed dict
            joined[name] = merged
        elif strs and len(strs) == len(values):
            joined[name] = StrVal(tuple(dict.fromkeys(s for v in strs for s in v.shapes)))
        else:
            held = join_objects(values)
            joined[name] = values[0] if held is None else held
    return joined


def _only_called(scope: FuncDef, name: str) -> bool:
    """``name`` is only ever called in ``scope`` (never passed on as a value)."""
    called = {id(node.func) for node in walk(scope) if isinstance(node, ast.Call)}
    return all(
        id(node) in called
        for node in walk(scope)
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)
    )


def _holes_of(shape: Shape, params: set[str]) -> bool:
    """Whether a key has a hole one of ``params`` fills."""
    return any(isinstance(part, Hole) and part.param in params for part in shape)


def _closure_writes(func: FuncDef, env: Env) -> list[str]:
    """The dicts of ``env`` that ``func``'s body writes keys into without rebinding them."""
    held = {name for name, value in env.items() if isinstance(value, DictVal)}
    held -= set(_params(func))
    if not held:
        return []
    written: set[str] = set()
    bound: set[str] = set()
    for node in walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
        ):
            written.add(node.value.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.attr in {"setdefault", "update"}:
                written.add(node.value.id)
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in _ACCUMULATE
            and isinstance(node.value, ast.Subscript)
            and isinstance(node.value.value, ast.Name)
        ):
            written.add(node.value.value.id)
    return sorted((written & held) - bound)


class Statements(ScanState):
    """The module scanner's reading of scopes and statements (a part of ``_Scanner``)."""

    def _mentions(self, node: ast.stmt) -> bool:
        start = node.lineno
        end = getattr(node, "end_lineno", None) or start
        index = bisect.bisect_left(self.lines, start)
        return index < len(self.lines) and self.lines[index] <= end

    def run(self) -> list[Logged]:
        """Analyse the module body and every function mentioning a scanned call."""
        tree = self.module.full().tree
        assert tree is not None  # full() parsed it
        self._scope(tree.body, None, None, [])
        return self.found

    def _scope(
        self, body: list[ast.stmt], func: FuncDef | None, cls: str | None, outer: list[Env]
    ) -> None:
        saved = (self.func, self.params, self.cls, self.outer, self.pending, self.objects)
        self.func, self.cls, self.outer, self.pending = func, cls, outer, {}
        self.objects = {}  # a collector object is a variable of one scope (.collectors)
        self.params = set(_params(func)) if func is not None else set()
        env: Env = {}
        if func is not None:
            for name in self.params:
                what = f"the parameter `{name}` of `{func.name}` (its value comes from the callers)"
                env[name] = Opaque(self.module, func, what, parameter=True, param=name)
        nested: list[tuple[ast.stmt, Env]] = []
        self._block(body, env, nested)
        self.func, self.params, self.cls, self.outer, self.pending, self.objects = saved
        for stmt, at in nested:
            if isinstance(stmt, ast.ClassDef):
                for item in stmt.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and (
                        self._mentions(item)
                    ):
                        self._scope(item.body, item, stmt.name, [])
            elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                self._scope(stmt.body, stmt, cls, [*outer, at])

    def returns(self, func: FuncDef) -> Returns:
        """What ``func``'s ``return`` statements hand back and what it adds to its parameters."""
        self.func, self.pending = func, {}
        self.params = set(_params(func))
        env: Env = {}
        for name in self.params:
            what = f"the parameter `{name}` of `{func.name}`"
            env[name] = Opaque(self.module, func, what, parameter=True, param=name)
        results = Returns()
        env = self._block(func.body, env, [], returns=results)
        for name in self.params:
            value = env.get(name)
            own = Spread(name, (SLOT,))
            if isinstance(value, DictVal) and own in value.spreads:
                others = tuple(s for s in value.spreads if s != own)
                added = DictVal(value.keys, value.unresolved, others)
                if not added.empty():
                    results.filled[name] = added
        return results

    # --- statements -----------------------------------------------------------

    def _block(
        self,
        body: list[ast.stmt],
        env: Env,
        nested: list[tuple[ast.stmt, Env]],
        returns: Returns | None = None,
    ) -> Env:
        for stmt in body:
            env = self._stmt(stmt, env, nested, returns)
        return env

    def _stmt(
        self,
        stmt: ast.stmt,
        env: Env,
        nested: list[tuple[ast.stmt, Env]],
        returns: Returns | None,
    ) -> Env:
        self.stmt = stmt
        self.last_target = None
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if returns is None and self._mentions(stmt):
                nested.append((stmt, dict(env)))
            if not isinstance(stmt, ast.ClassDef):
                self._closure(stmt, env)
                if self.func is not None:
                    env[stmt.name] = Callables(((self.module, stmt, None),))
            return env
        if self.pending:
            self._closure_calls(stmt, env)
        if returns is None:
            self._calls_in(stmt, env)
        if isinstance(stmt, ast.Assign):
            value = self._value(stmt.value, env)
            for target in stmt.targets:
                self._assign(target, stmt.value, value, env)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self._assign(stmt.target, stmt.value, self._value(stmt.value, env), env)
        elif isinstance(stmt, ast.AugAssign) and (holder := dict_holder(stmt.target)) is not None:
            if isinstance(stmt.op, ast.BitOr):
                current = env.get(holder)
                added = self._dict(stmt.value, env)
                env[holder] = current.merge(added) if isinstance(current, DictVal) else added
        elif isinstance(stmt, ast.Expr):
            call = stmt.value.value if isinstance(stmt.value, ast.Await) else stmt.value
            if isinstance(call, ast.YieldFrom) and isinstance(call.value, ast.Call):
                fill_from(self, call.value, env)  # ``yield from _timer(name, d)``
            elif isinstance(call, ast.Call):
                self._mutation(call, env)
                self._filled(call, env)
        elif isinstance(stmt, ast.Return) and returns is not None and stmt.value is not None:
            self._return(stmt.value, env, returns)
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            self.module.index_import(stmt, keep=True)  # an import in a function body binds too
        elif isinstance(stmt, ast.If):
            guard = self._guard(stmt.test)
            saved = self.guard
            self.guard = guard if guard is not None else saved
            taken = narrowed(dict(env), stmt.test, self.tags, taken=True)
            body = self._block(stmt.body, taken, nested, returns)
            self.guard = (guard[0], not guard[1]) if guard is not None else saved
            skipped = narrowed(dict(env), stmt.test, self.tags, taken=False)
            orelse = self._block(stmt.orelse, skipped, nested, returns)
            self.guard = saved
            env = _join(env, body, orelse)
        elif isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
            env = self._loop(stmt, env, nested, returns)
        elif isinstance(stmt, ast.With | ast.AsyncWith):
            for item in stmt.items:
                if isinstance(item.context_expr, ast.Call):
                    fill_from(self, item.context_expr, env)  # ``with timer("gen", d):``
            env = self._block(stmt.body, env, nested, returns)
        elif isinstance(stmt, ast.Try | ast.TryStar):
            branches = [self._block(stmt.body, dict(env), nested, returns)]
            for handler in stmt.handlers:
                branches.append(self._block(handler.body, dict(env), nested, returns))
            env = _join(env, *branches)
            env = self._block(stmt.orelse, env, nested, returns)
            env = self._block(stmt.finalbody, env, nested, returns)
        elif isinstance(stmt, ast.Match):
            cases = [self._block(case.body, dict(env), nested, returns) for case in stmt.cases]
            env = _join(env, *cases)
        return env

    def _loop(
        self,
        stmt: ast.For | ast.AsyncFor | ast.While,
        env: Env,
        nested: list[tuple[ast.stmt, Env]],
        returns: Returns | None,
    ) -> Env:
        """A loop: its body from the entry and what a turn carries to the next, or skipped."""
        inner = dict(env)
        variable = None
        if not isinstance(stmt, ast.While):
            self._bind_loop(stmt.target, stmt.iter, inner)
            variable = self._filtering(stmt, inner)
        if returns is None and self._mentions(stmt):
            inner = self._carried(stmt, inner)
        inner = self._block(stmt.body, inner, nested, returns)
        if variable is not None:
            self.loops.pop(variable, None)
        after = self._block(stmt.orelse, dict(env), nested, returns)
        return _join(env, inner, after)

    def _carried(self, loop: ast.For | ast.AsyncFor | ast.While, entry: Env) -> Env:
        """A loop's entry for its reported pass: what its body carries to the next turn."""
        body = loop.body
        first = self.lines[bisect.bisect_left(self.lines, loop.lineno)]  # it mentions one
        if self.dry or not may_fill(self._text(first + 1, loop.end_lineno or first)):
            return entry  # inside a first pass its turns are carried by the outer loop's
        names = carried_names(body, first)
        if not names:
            return entry  # nothing after the call fills a dict a next turn still holds
        self.dry = True
        try:
            return loop_carried(
                lambda env: self._block(body, env, [], None), self.found, entry, names
            )
        finally:
            self.dry = False

    def _text(self, first: int, last: int) -> bytes:
        """The source of lines ``first`` to ``last``."""
        starts = self.module.line_starts()
        source = self.module.source
        if first > last or first > len(starts):
            return b""
        end = starts[last] if last < len(starts) else len(source)
        return source[starts[first - 1] : end]

    def _closure(self, func: FuncDef, env: Env) -> None:
        """A nested function that fills a dict of the enclosing one (``all_metrics[k] = v``,
        ``all_metrics.setdefault(k, [])``): the dict holds those keys from the ``def`` on,
        since a closure written to fill it is called; without this they vanish silently."""
        names = _closure_writes(func, env)
        if not names:
            return
        enclosing = self.func
        saved = (self.func, self.params, self.guard, self.pick, self.stmt, self.pending)
        self.func, self.guard, self.pick, self.pending = func, None, "", {}
        self.params = own = set(_params(func))
        inner: Env = dict(env)
        for name in self.params:
            what = f"the parameter `{name}` of `{func.name}` (its value comes from the callers)"
            inner[name] = Opaque(self.module, func, what, parameter=True, param=name)
        inner = self._block(func.body, inner, [], returns=Returns())
        self.func, self.params, self.guard, self.pick, self.stmt, self.pending = saved
        fills: dict[str, DictVal] = {}
        for name in names:
            value = inner.get(name)
            if not isinstance(value, DictVal):
                continue
            # Keys from the closure's own parameters (its dicts' keys, or text in a key:
            # ``f"{key}tokens_per_s"``): each call of it says which.
            later = tuple(s for s in value.spreads if s.param in own)
            now = tuple(s for s in value.spreads if s.param not in own)
            holed = tuple(k for k in value.keys if _holes_of(k.shape, own))
            kept = tuple(k for k in value.keys if not _holes_of(k.shape, own))
            env[name] = DictVal(kept, value.unresolved, now)
            if later or holed:
                fills[name] = DictVal(holed, (), later)
        if not fills:
            return
        if enclosing is not None and not _only_called(enclosing, func.name):
            what = f"the keys `{func.name}` adds from its parameters, where it is passed on"
            for name, filled in fills.items():
                current = env[name]
                assert isinstance(current, DictVal)
                passed_on = DictVal(filled.keys, (Unresolved(what, self._at(func)),))
                env[name] = current.merge(passed_on)
            return
        self.pending[func.name] = (func, fills)

    def _filtering(self, loop: ast.For | ast.AsyncFor, env: Env) -> str | None:
        """A loop over a dict's keys that skips some (``continue``): its variable, registered
        so the keys written in its body are tested per key (see :mod:`.keyfilter`)."""
        target = loop.target
        first = target.elts[0] if isinstance(target, ast.Tuple) and target.elts else target
        if not isinstance(first, ast.Name) or not isinstance(env.get(first.id), KeysOf):
            return None
        if not self._has_word(loop, (b"continue", b"break")) or not has_exit(loop.body):
            return None
        names: dict[str, object] = {}
        if self.func is not None:
            names.update(bound_once(self.func))  # ``skipped = {...}`` under an ``if`` too
            names.update(literal_table(self.func.body))
        self.loops[first.id] = (loop, names)
        return first.id

    def _has_word(self, node: ast.stmt, words: Sequence[bytes]) -> bool:
        """One of ``words`` is in ``node``'s source text (a cheap test before walking it)."""
        starts = self.module.line_starts()
        first = node.lineno - 1
        last = node.end_lineno or node.lineno
        begin = starts[first] if first < len(starts) else len(self.module.source)
        end = starts[last] if last < len(starts) else len(self.module.source)
        text = self.module.source[begin:end]
        return any(word in text for word in words)

    def _loop_test(self, name: str) -> KeyTest | None:
        """The filter deciding whether the current statement runs for a key of loop ``name``."""
        loop = self.loops.get(name)
        stmt = self.stmt
        if loop is None or stmt is None:
            return None
        slot = (id(loop[0]), id(stmt))
        if slot not in self.tests:
            module = self.module
            test: KeyTest | None = KeyTest(
                name,
                tuple(loop[0].body),
                stmt,
                {**_literal_constants(module), **loop[1]},
                module.functions.get,
                self.func.name if self.func is not None else module.shown,
            )
            self.tests[slot] = test if test is not None and test.covers(stmt) else None
        return self.tests[slot]

    def _renamer(self, name: str, node: ast.expr) -> KeyTest:
        """``node`` as a rename of the key in ``name`` (see :meth:`KeyTest.rename`): read with
        the module's and the function's literals, calling the module's functions and the
        function's own nested ones (``def untag(k): ...`` beside the loop)."""
        module = self.module
        func = self.func
        names = dict(_literal_constants(module))
        nested: dict[str, FuncDef] = {}
        if func is not None:
            names.update(literal_table(func.body))
            nested = {
                stmt.name: stmt
                for stmt in func.body
                if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef)
            }

        def functions(called: str) -> FuncDef | None:
            return nested.get(called) or module.functions.get(called)

        target = ast.Expr(node)
        where = func.name if func is not None else module.shown
        return KeyTest(name, (target,), target, names, functions, where, node)

    def _guard(self, test: ast.expr) -> tuple[str, bool] | None:
        """``if merged:`` / ``if not merged:`` on a parameter: (parameter, when taken)."""
        truthy = True
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, truthy = test.operand, False
        if isinstance(test, ast.Name) and test.id in self.params:
            return test.id, truthy
        return None

    def _return(self, node: ast.expr, env: Env, returns: Returns) -> None:
        if self.guard is not None:
            # Returned only when a parameter is (not) true: the caller's argument decides.
            if self._is_dictish(node, env):
                returns.guarded.append((*self.guard, self._dict(node, env)))
            elif isinstance(node, OBJECT_EXPRESSIONS):
                self._return_object(node, env, returns)
            return
        if self.pick:
            # ``return {"metrics": metrics, ...}`` with ``returns = "metrics"``: that entry.
            value = dict_item(node, self.pick) if isinstance(node, ast.Dict) else None
            if value is not None:
                returns.add(self._dict(value, env))
            return
        if isinstance(node, ast.Tuple):
            items = [self._dict(i, env) if self._is_dictish(i, env) else None for i in node.elts]
            if any(item is not None for item in items):
                returns.add(tuple(items))
        elif self._is_dictish(node, env) or (
            isinstance(node, ast.Attribute) and self._holds_object(node.value, env)
        ):
            returns.add(self._dict(node, env))  # ``return out.metrics`` of an object too
        elif isinstance(node, ast.Call) and (tupled := self._tuple_returned(node, env)):
            returns.add(tupled)  # ``return self.cfg.loss(batch)``: the callee's tuple
        elif isinstance(node, OBJECT_EXPRESSIONS):
            self._return_object(node, env, returns)

    def _tuple_returned(self, node: ast.Call, env: Env) -> tuple[DictVal | None, ...]:
        """The dicts of the tuple a returned call returns, by position (empty: no tuple)."""
        unpacked = self._unpacked(node, env)
        if not unpacked:
            return ()
        return tuple(
            item if isinstance(item := unpacked.get(i), DictVal) else None
            for i in range(max(unpacked) + 1)
        )

    def _assign(self, target: ast.expr, node: ast.expr, value: Value, env: Env) -> None:
        self.last_target = None  # a receiver's class may change here
        if isinstance(target, ast.Attribute) and (holder := dict_holder(target)) is not None:
            remember(self.ever, holder, env)
            env[holder] = value  # ``self.metrics = {...}``: followed within the class
        elif isinstance(target, ast.Name):
            env[target.id] = value
            owner = self._dict_class(node) if isinstance(node, ast.Call) else None
            if owner is not None:
                self.typed[target.id] = owner
            else:
                self.typed.pop(target.id, None)
            self._note_object(target.id, node)
        elif (
            isinstance(target, ast.Subscript) and (holder := dict_holder(target.value)) is not None
        ):
            self._add_key(holder, target.slice, env, node)
        elif isinstance(target, ast.Subscript) and self._inner_write(target, node, env):
            pass  # ``d["a"][k] = v``: the dict ``d`` holds under ``"a"`` gains ``k`` (.inner)
        elif isinstance(target, ast.Tuple | ast.List):
            items = self._unpacked(node, env)
            for index, item in enumerate(target.elts):
                if isinstance(item, ast.Name):
                    got = items.get(index)
                    if got is not None:
                        env[item.id] = got
                    else:
                        what = f"`{item.id}`, unpacked from "
                        env[item.id] = Opaque(self.module, item, what, node)
                elif isinstance(item, ast.Attribute) and (held := dict_holder(item)):
                    # ``data, self.info = collect(...)``: the attribute holds that item
                    # (unfollowed, it is unresolved where it is read, never dropped).
                    remember(self.ever, held, env)
                    got = items.get(index)
                    what = f"`{held}`, unpacked from "
                    env[held] = got if got is not None else Opaque(self.module, item, what, node)

    def _unpacked(self, node: ast.expr, env: Env) -> dict[int, Value]:
        """The dicts of a tuple a call returns (``batch, metrics = correct(batch)``)."""
        if isinstance(node, ast.Await):
            node = node.value
        if isinstance(node, ast.Tuple):
            elts = enumerate(node.elts)
            return {i: self._dict(e, env) for i, e in elts if self._is_dictish(e, env)}
        if not isinstance(node, ast.Call):
            return {}
        columns = self._columns(node, env)
        if columns is not None:
            return columns
        returned = self._returned(node)
        if returned is None:
            return {}
        return {
            index: self._instantiate(item, node, returned[1], env)
            for index, item in returned[0].items.items()
        }

    def _columns(self, node: ast.Call, env: Env) -> dict[int, Value] | None:
        """``zip(*results)`` of a list of worker tuples: a list per position (``metrics,
        arrays = zip(*results)``); ``None`` for another call."""
        if not (
            isinstance(node.func, ast.Name)
            and node.func.id == "zip"
            and len(node.args) == 1
            and isinstance(node.args[0], ast.Starred)
        ):
            return None
        gathered = self._gathered(node.args[0].value, env)
        if gathered is None:
            return None
        return {index: Gathered(item) for index, item in gathered.items}

    def _add_key(self, name: str, key: ast.expr, env: Env, value: ast.expr | None = None) -> None:
        """``name[key] = value``: the dict ``name`` gains ``key``."""
        current = env.get(name)
        holder = self._lookup(name, env) if current is None else current
        looped = self._lookup(key.id, env) if isinstance(key, ast.Name) else None
        if isinstance(looped, KeysOf) and isinstance(holder, DictVal) and looped.source is holder:
            return  # ``for k in d: d[k] = f(d[k])`` rewrites keys it already has
        gained = gaining(holder, valued(self._keys(key, env), value))
        if gained is not None:
            env[name] = self._hold(gained, key, value, env)  # ``d["a"] = {...}``: kept (.inner)

    def _mutation(self, call: ast.Call, env: Env) -> None:
        func = call.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if name == _GATHER_OBJECT and len(call.args) == 2 and isinstance(call.args[0], ast.Name):
            gathered = self._keylist(call.args[1], env)
            if gathered is not None:
                nest = gathered.nest + 1
                env[call.args[0].id] = KeyList(gathered.source, gathered.name, nest)
            return
        if not isinstance(func, ast.Attribute):
            return
        held = func.value
        if (
            func.attr in _ACCUMULATE
            and isinstance(held, ast.Subscript)
            and (holder := dict_holder(held.value)) is not None
        ):
            # ``tensors["loss"].append(t)``: a dict of lists gains the key ``loss``.
            self._add_key(holder, held.slice, env)
            return
        if (
            func.attr in _ACCUMULATE
            and isinstance(held, ast.Call)
            and held.args
            and isinstance(held.func, ast.Attribute)
            and held.func.attr == "setdefault"
            and isinstance(held.func.value, ast.Name)
        ):
            # ``groups.setdefault(name, []).append(i)``: ``groups`` gains the key ``name``.
            self._add_key(held.func.value.id, held.args[0], env)
            return
        if func.attr == "append" and isinstance(held, ast.Name) and len(call.args) == 1:
            self._appended(held.id, call.args[0], env)
            return
        holder = dict_holder(held)
        if holder is None:
            return
        name = holder
        if func.attr == "update":
            added = self._arguments_dict(call.args, call.keywords, env)
        elif func.attr == "setdefault" and call.args:
            added = self._keys(call.args[0], env)
        else:
            return
        current = env.get(name) or self._lookup(name, env)
        if isinstance(current, DictVal):
            env[name] = current.merge(added)
        elif isinstance(current, Opaque):
            env[name] = current.as_dict().merge(added)
        else:
            env[name] = added

    def _appended(self, name: str, item: ast.expr, env: Env) -> None:
        """``stats_accum.append(stats)``: a list of dicts, each element holding ``stats``'s
        keys (``stats_accum[0]`` then reads them, as a list of workers' dicts does)."""
        current = env.get(name) or self._lookup(name, env)
        if current is not None and not isinstance(current, Gathered | Opaque):
            return  # a dict, a list of keys, an object: not a list of dicts
        if not self._is_dictish(item, env):
            return
        added = self._dict(item, env)
        if isinstance(current, Gathered) and current.element is not None:
            added = current.element.merge(added)
        env[name] = Gathered(added, current.items if isinstance(current, Gathered) else ())

    def _bind_loop(self, target: ast.expr, iterable: ast.expr, env: Env) -> None:
        if (
            isinstance(iterable, ast.Call)
            and isinstance(iterable.func, ast.Name)
            and iterable.func.id == "enumerate"
            and len(iterable.args) == 1
            and isinstance(target, ast.Tuple)
            and len(target.elts) == 2
        ):
            # ``for i, key in enumerate(KEYS)``: ``key`` runs over the strings ``KEYS`` holds
            # (known ones only: a name known at run time stays a hole where the key is written)
            index, item = target.elts
            strings = self._strings(iterable.args[0], env)
            if strings is not None and all(isinstance(p, str) for s in strings.shapes for p in s):
                for bound in (index, item):
                    if isinstance(bound, ast.Name):
                        what = f"the loop variable `{bound.id}`"
                        env[bound.id] = Opaque(self.module, bound, what)
                if isinstance(item, ast.Name):
                    env[item.id] = strings
                return
        gathered = self._gathered(iterable, env)
        if gathered is not None and isinstance(target, ast.Name):
            # ``for result in results``: one worker's dict
            env[target.id] = gathered.element or Opaque(self.module, target)
            return
        listed = self._keylist(iterable, env)
        if listed is not None and isinstance(target, ast.Name):
            # ``for key in sorted(keys)``: each key of the dict (or, nested, each list of them)
            env[target.id] = (
                KeysOf(listed.source, listed.name)
                if listed.nest <= 1
                else KeyList(listed.source, listed.name, listed.nest - 1)
            )
            return
        names = [target] if isinstance(target, ast.Name) else []
        if isinstance(target, ast.Tuple) and target.elts:
            names = [e for e in target.elts if isinstance(e, ast.Name)]
            first = target.elts[0]
        else:
            first = target
        source = iterable
        over_items = False
        if (
            isinstance(source, ast.Call)
            and isinstance(source.func, ast.Attribute)
            and source.func.attr in {"items", "keys"}
            and not source.args
        ):
            over_items = source.func.attr == "items"
            source = source.func.value
        strings = None if over_items else self._strings(source, env)
        for item in names:
            env[item.id] = Opaque(self.module, item, f"the loop variable `{item.id}`")
        scope = self.func or self.module.full().tree or iterable
        for name, column in columns(target, iterable, self.module.constants, scope).items():
            env[name] = StrVal(tuple((text,) for text in column))  # rows of a literal table
        if isinstance(first, ast.Name):
            if strings is not None and isinstance(target, ast.Name):
                env[first.id] = strings
            elif self._is_dictish(source, env) or over_items or self._dict_parameter(source):
                env[first.id] = KeysOf(self._dict(source, env), _shown(source))

    def _dict_parameter(self, node: ast.expr) -> bool:
        """``node`` is a parameter annotated as a dict (``log_dict: dict``, ``Dict[str,
        float]``, ``Mapping[...]``): a loop over it (``for key in log_dict``) is over its
        keys, which the callers' arguments give."""
        func = self.func
        if func is None or not isinstance(node, ast.Name) or node.id not in self.params:
            return False
        args = func.args
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            if arg.arg == node.id and arg.annotation is not None:
                annotation = arg.annotation
                if isinstance(annotation, ast.Subscript):
                    annotation = annotation.value
                named = _dotted(annotation) if isinstance(annotation, ast.expr) else None
                return named is not None and named.rpartition(".")[2] in _DICT_TYPES
        return False
