"""Keys prefixed by context: a tracker's scope stack, read from the tracker's own code.

A tracker class keeps a list of name segments in a field of ``self`` and builds every key
it records through one method joining them in front of the key::

    def _full_key(self, key):
        if not self.stack:
            return key
        return "/".join(self.stack + [key])        # the separator: "/"

A *scope method* pushes a segment on that list for the length of a ``with`` block: a
``@contextmanager`` method appending its parameter, or a method returning an object whose
``__enter__`` appends the name it was given (``self.tracker.stack.append(self.name)``).
A *scope decorator* is a method whose wrapper runs the function inside ``with
self.<scope method>(name):``. So::

    with tracker.scope("actor"):            # and @tracker.scope_wrapper("actor") on a def
        with tracker.scope("update"):
            tracker.stat(loss=v)               # records actor/update/loss

Everything here is read from the class's code (which field, which separator, which
methods push), never from their names. A key is prefixed only by scopes written around the
call in the same function (or decorating it); a segment that is not a literal string
leaves the keys of that block unprefixed and is not guessed.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

from .instances import Instance, bound_method
from .model import ProjectIndex
from .sources import Module
from .syntax import FuncDef, params, walk
from .values import SLOT, Hole

__all__ = ["Around", "ScopeRules", "composed_argument", "scope_rules", "scoped", "scopes_of"]

Segments: TypeAlias = "tuple[str | Hole, ...]"
"""The scope names open around a call, outermost first (a hole: a name known at run time)."""

_MAX_CARRY = 3
"""Callers followed outward from a function to the scopes open where it is called."""


@dataclass(frozen=True, slots=True)
class ScopeRules:
    """How one tracker class prefixes what it records."""

    stack: str
    """The field of ``self`` holding the segments (``scope_stack``)."""
    separator: str
    """What joins the segments and the key (``"/"``)."""
    composer: str
    """The method building a full key (``_get_full_key``)."""
    pushers: dict[str, tuple[int, str, str]]
    """Scope methods: name -> (position, keyword) of the segment's argument and the
    characters stripped from it (``name.strip("/")``: ``"/"``)."""
    decorators: dict[str, tuple[int, str, str]]
    """Scope decorators, by the same description."""
    recorders: frozenset[str]
    """The methods whose keys go through :attr:`composer` (directly or by ``self.m()``)."""

    def segment(self, call: ast.Call, spec: tuple[int, str, str]) -> str | None:
        """The literal segment a call of a scope method or decorator pushes, else ``None``."""
        position, keyword, strip = spec
        given = call.args[position] if len(call.args) > position else None
        for item in call.keywords:
            if item.arg == keyword:
                given = item.value
        if isinstance(given, ast.Constant) and isinstance(given.value, str):
            return given.value.strip(strip) if strip else given.value
        return None


def _own(func: FuncDef) -> list[str]:
    """The parameters of a method after ``self``."""
    names = params(func)
    return names[1:] if names[:1] == ["self"] else names


def _self_field(node: ast.expr) -> str | None:
    """``self.<field>`` -> the field's name."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr if node.value.id == "self" else None
    return None


def _composer(method: FuncDef) -> tuple[str, str] | None:
    """(stack field, separator) when every ``return`` of ``method`` is its one parameter
    or ``sep.join(self.<stack> + [param])`` (``[*self.<stack>, param]``), at least one the
    latter."""
    names = _own(method)
    if len(names) != 1:
        return None
    param = names[0]
    found: tuple[str, str] | None = None
    for node in walk(method):
        if not isinstance(node, ast.Return) or node.value is None:
            continue
        value = node.value
        if isinstance(value, ast.Name) and value.id == param:
            continue
        joined = _joined(value, param)
        if joined is None or (found is not None and joined != found):
            return None
        found = joined
    return found


def _joined(value: ast.expr, param: str) -> tuple[str, str] | None:
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "join"
        and isinstance(value.func.value, ast.Constant)
        and isinstance(value.func.value.value, str)
        and len(value.args) == 1
        and not value.keywords
    ):
        return None
    joined = value.args[0]
    stack: str | None = None
    if isinstance(joined, ast.BinOp) and isinstance(joined.op, ast.Add):
        tail = joined.right
        stack = _self_field(joined.left)
        ok = isinstance(tail, ast.List) and [_name(e) for e in tail.elts] == [param]
    elif isinstance(joined, ast.List) and len(joined.elts) == 2:
        head, last = joined.elts
        ok = isinstance(head, ast.Starred) and _name(last) == param
        stack = _self_field(head.value) if isinstance(head, ast.Starred) else None
    else:
        return None
    return (stack, value.func.value.value) if ok and stack is not None else None


def _name(node: ast.expr) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def _pushed(node: ast.expr) -> tuple[str, str] | None:
    """``name`` or ``name.strip("/")``: (the name, the characters stripped)."""
    if isinstance(node, ast.Name):
        return node.id, ""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "strip"
        and isinstance(node.func.value, ast.Name)
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return node.func.value.id, node.args[0].value
    return None


def _appends(func: FuncDef, owner: ast.expr | None, stack: str) -> list[ast.expr]:
    """What ``func`` appends to ``<owner>.<stack>`` (``self.<stack>`` when ``owner`` is
    ``None``; else ``self.<owner attr>.<stack>``)."""
    found = []
    for node in walk(func):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "append"
            and len(node.args) == 1
            and isinstance(node.func.value, ast.Attribute)
            and node.func.value.attr == stack
        ):
            continue
        held = node.func.value.value
        if (owner is None and _name(held) == "self") or (
            owner is not None and _self_field(held) is not None
        ):
            found.append(node.args[0])
    return found


def _spec(method: FuncDef, name: str, strip: str) -> tuple[int, str, str] | None:
    names = _own(method)
    return (names.index(name), name, strip) if name in names else None


def _pusher(
    project: ProjectIndex, home: Module, cls: str, method: FuncDef, stack: str
) -> tuple[int, str, str] | None:
    """How ``method`` is a scope method of ``stack`` (see :class:`ScopeRules`)."""
    decorated = any(
        (d.attr if isinstance(d, ast.Attribute) else _name(d)) == "contextmanager"
        for d in method.decorator_list
    )
    if decorated:
        for pushed in _appends(method, None, stack):
            found = _pushed(pushed)
            if found is not None:
                return _spec(method, *found)
        return None
    for node in walk(method):
        if not isinstance(node, ast.Return) or not isinstance(node.value, ast.Call):
            continue
        made = node.value
        inner = made.func.attr if isinstance(made.func, ast.Attribute) else _name(made.func)
        target = _inner_class(project, home, cls, inner)
        if target is None:
            continue
        return _entered(target, made, method, stack)
    return None


def _inner_class(
    project: ProjectIndex, home: Module, cls: str, name: str | None
) -> ast.ClassDef | None:
    """The class ``name`` a method makes: nested in ``cls`` or defined in its module."""
    tree = home.full().tree
    for node in walk(tree) if tree is not None and name else ():
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    return None


def _entered(
    inner: ast.ClassDef, made: ast.Call, method: FuncDef, stack: str
) -> tuple[int, str, str] | None:
    """``Scope(self, name)`` whose ``__enter__`` appends ``self.<n>`` to the tracker's
    stack and whose ``__init__`` sets ``self.<n> = <its parameter>``: the method's
    parameter passed there."""
    methods = {f.name: f for f in inner.body if isinstance(f, ast.FunctionDef)}
    enter, init = methods.get("__enter__"), methods.get("__init__")
    if enter is None or init is None:
        return None
    for pushed in _appends(enter, ast.Name("self"), stack):
        held = _self_field(pushed)
        for node in walk(init) if held else ():
            if not (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and _self_field(node.targets[0]) == held
            ):
                continue
            found = _pushed(node.value)
            if found is None:
                continue
            init_params = _own(init)
            slot = init_params.index(found[0]) if found[0] in init_params else -1
            given = made.args[slot] if 0 <= slot < len(made.args) else None
            if given is not None and _name(given) is not None:
                return _spec(method, _name(given) or "", found[1])
    return None


def _decorator(method: FuncDef, pushers: dict[str, tuple[int, str, str]]) -> str | None:
    """The parameter of ``method`` its inner wrapper opens a scope with (``with
    self.scope(name):``), else ``None``."""
    for node in walk(method):
        if not isinstance(node, ast.With):
            continue
        for item in node.items:
            call = item.context_expr
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and _name(call.func.value) == "self"
                and call.func.attr in pushers
                and call.args
                and _name(call.args[0]) in _own(method)
                and method.name not in pushers
            ):
                return _name(call.args[0])
    return None


def _recorders(methods: dict[str, FuncDef], composer: str) -> frozenset[str]:
    """The methods calling ``self.<composer>(...)``, and those calling one of them."""
    calls = {
        name: {
            node.func.attr
            for node in walk(method)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and _name(node.func.value) == "self"
        }
        for name, method in methods.items()
    }
    found = {name for name, called in calls.items() if composer in called}
    for _ in range(4):  # bounded: a chain of helpers
        found |= {name for name, called in calls.items() if called & found}
    return frozenset(found - {composer})


_RULES: weakref.WeakKeyDictionary[Module, dict[str, ScopeRules | None]] = (
    weakref.WeakKeyDictionary()
)
"""Each module's classes' rules, read once."""


def scope_rules(project: ProjectIndex, home: Module, cls: str) -> ScopeRules | None:
    """How ``cls`` prefixes the keys it records by scope, or ``None`` (no stack, no
    composer, or no method pushing on it)."""
    info = home.full().classes.get(cls)
    if info is None:
        return None
    known = _RULES.setdefault(home, {})
    if cls in known:
        return known[cls]
    rules: ScopeRules | None = None
    for name, method in info.methods.items():
        found = _composer(method)
        if found is None:
            continue
        stack, separator = found
        pushers = {}
        for other, candidate in info.methods.items():
            spec = _pusher(project, home, cls, candidate, stack)
            if spec is not None:
                pushers[other] = spec
        if not pushers:
            continue
        decorators = {}
        for other, candidate in info.methods.items():
            param = _decorator(candidate, pushers)
            spec = _spec(candidate, param, "") if param else None
            if spec is not None:
                decorators[other] = spec
        recorders = _recorders(info.methods, name)
        rules = ScopeRules(stack, separator, name, pushers, decorators, recorders)
        break
    known[cls] = rules
    return rules


def composed_argument(
    project: ProjectIndex, module: Module, cls: str | None, call: ast.expr
) -> ast.expr | None:
    """``self.<composer>(key)`` inside the tracker: ``key`` (the scope is added where the
    tracker is called, see :mod:`.collectors`), else ``None``."""
    if (
        cls is None
        or not isinstance(call, ast.Call)
        or not isinstance(call.func, ast.Attribute)
        or _name(call.func.value) != "self"
        or len(call.args) != 1
        or call.keywords
    ):
        return None
    rules = scope_rules(project, module, cls)
    return call.args[0] if rules is not None and call.func.attr == rules.composer else None


def scoped(segments: Sequence[str | Hole], separator: str) -> tuple[str | Hole, ...]:
    """The template putting ``segments`` in front of a key: ``actor/update/`` + key."""
    parts: list[str | Hole] = []
    for segment in segments:
        parts += [segment, separator]
    return (*parts, SLOT)


def scopes_of(tree: ast.Module) -> Iterator[tuple[FuncDef | ast.Module, str | None]]:
    """A module's top level, its functions and its classes' methods (with the class), not
    the functions nested in them (their calls are their outer function's)."""
    yield tree, None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node, None
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield item, node.name


@dataclass
class Around:
    """The scopes of one module-level tracker open around the code of one module."""

    project: ProjectIndex
    module: Module
    tracker: Instance
    rules: ScopeRules
    _inside: dict[int, dict[int, Segments]] = field(default_factory=dict)
    _outer: dict[int, list[Segments]] = field(default_factory=dict)

    def prefixes(
        self, scope: FuncDef | ast.Module, cls: str | None, node: ast.AST
    ) -> list[Segments]:
        """Every list of scopes ``node`` in ``scope`` may run under: those around it in
        its function, after those open where the function is called or handed on
        (``batched_call(self._update, data)`` inside a scope), callers of the same class
        or module followed a few levels out; no caller seen: none."""
        inside = self._segments(scope).get(id(node), ())
        return [(*outer, *inside) for outer in self._callers(scope, cls, 0)]

    def _callers(self, scope: FuncDef | ast.Module, cls: str | None, depth: int) -> list[Segments]:
        if isinstance(scope, ast.Module) or depth > _MAX_CARRY:
            return [()]
        if id(scope) in self._outer:
            return self._outer[id(scope)]
        self._outer[id(scope)] = [()]  # a function reaching itself adds nothing more
        tree = self.module.full().tree
        found: list[Segments] = []
        for other, other_cls in scopes_of(tree) if tree is not None else ():
            if other is scope or other_cls != cls or isinstance(other, ast.Module):
                continue
            refs = [node for node in walk(other) if _names(node, scope.name, cls)]
            if not refs:
                continue
            inside = self._segments(other)
            for outer in self._callers(other, other_cls, depth + 1):
                found += [(*outer, *inside.get(id(ref), ())) for ref in refs]
        result = list(dict.fromkeys(found)) or [()]
        self._outer[id(scope)] = result
        return result

    def _segments(self, scope: FuncDef | ast.Module) -> dict[int, Segments]:
        """The segments around each call and name in ``scope`` (by the node's ``id``): the
        tracker's scope methods opened by ``with`` around it, outermost first, after those
        of its scope decorators on the functions holding it. A segment that is not a
        literal string is a hole (its keys are then not resolved)."""
        if id(scope) in self._inside:
            return self._inside[id(scope)]
        found: dict[int, Segments] = {}
        todo: list[tuple[ast.AST, Segments]] = [(scope, ())]
        while todo:  # iterative: a deeply nested tree cannot exhaust the stack
            node, outer = todo.pop()
            inner, heads = outer, []
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                heads = list(node.decorator_list)
                for decorator in heads:
                    segment = self._pushed(decorator, self.rules.decorators)
                    inner = inner if segment is None else (*inner, segment)
            elif isinstance(node, ast.With | ast.AsyncWith):
                heads = [item.context_expr for item in node.items]
                for head in heads:
                    segment = self._pushed(head, self.rules.pushers)
                    inner = inner if segment is None else (*inner, segment)
            elif isinstance(node, ast.Call | ast.Attribute | ast.Name):
                found[id(node)] = outer
            todo.extend((head, outer) for head in heads)
            todo.extend(
                (child, inner)
                for child in ast.iter_child_nodes(node)
                if not any(child is head for head in heads)
            )
        self._inside[id(scope)] = found
        return found

    def _pushed(self, call: ast.expr, specs: dict[str, tuple[int, str, str]]) -> str | Hole | None:
        if not isinstance(call, ast.Call):
            return None
        other = bound_method(self.project, self.module, call.func)
        if other is None or other[:2] != self.tracker or other[3] not in specs:
            return None
        segment = self.rules.segment(call, specs[other[3]])
        return Hole(ast.unparse(call)) if segment is None else segment


def _names(node: ast.AST, name: str, cls: str | None) -> bool:
    """``node`` reads the function ``name``: ``self.name`` in a method of ``cls``, the bare
    name in a module function."""
    if cls is not None:
        return (
            isinstance(node, ast.Attribute)
            and node.attr == name
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
        )
    return isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)
