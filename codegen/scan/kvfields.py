"""Key-value loggers: an object that stores each recorded key in a dict field of its own
(``self.values[key] = value`` in ``record(key, value)``) and hands that field, when it
dumps, to writers that loop over its keys into a sink (``add_scalar(key, value, step)``).

The rule, with no name of any logger in it:

* a *key sink* is a function whose scanned call logs, as its key, a parameter
  (``def scalar(self, name, v): w.add_scalar(name, v)``) or a variable of a loop over a
  parameter (``for k, v in sorted(values.items()): w.add_scalar(k, v)``, a dict sink);
* a function passing its parameter to a dict sink's parameter is a dict sink too, and a
  class whose method passes ``self.<field>`` there has a *logged field*;
* each method of that class writing ``self.<field>[param] = ...`` takes a key: its callers'
  first (bound) argument is a logged key, reported at the caller's line; a literal written
  there (``self.<field>["lr"] = v``) is logged where written; ``self.<field>.update(d)``
  logs ``d``'s keys (its callers are followed as any wrapper's);
* a key a caller builds from parts known only at run time stays ``SCAN_UNRESOLVED`` at the
  caller, never a guessed key.

A call reaches such a method by its name when every function of that name in the scanned
files is one (``self.logger.record(...)`` on a logger whose class is not written at the
call), or as ``self.<name>(...)`` inside the class.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from .model import Logged, ProjectIndex, Wrapper
from .numeric import module_function
from .sources import Module
from .syntax import FuncDef, is_static, params, walk
from .syntax import bind as _bind
from .syntax import dotted as _dotted
from .syntax import passed as _passed
from .syntax import shown as _shown
from .values import SLOT, Hole, Key, Shape, Spread, Unresolved, Where, concat

__all__ = [
    "kv_logged",
]

_MAX_ROUNDS: Final = 8
"""Wrappers of wrappers followed this deep (a chain of loggers handing keys on)."""


@dataclass(frozen=True, slots=True)
class _Func:
    """A function of the scanned files: where it is, and the class it is a method of."""

    module: Module
    func: FuncDef
    cls: str | None


@dataclass(frozen=True, slots=True)
class _Taker:
    """A function whose parameter ``param`` is a logged key (or, ``whole``, a dict whose
    keys are logged): what its callers pass there is logged by ``inner``'s call."""

    at: _Func
    param: str
    inner: Logged


def _positional(func: FuncDef, method: bool) -> list[str]:
    """The parameters a caller binds (``self`` of a method left out)."""
    names = params(func)
    return names[1:] if method and names and not is_static(func) else names


def _functions(module: Module) -> Iterator[_Func]:
    """The module's functions and methods (nested ones with their enclosing scope's class)."""
    tree = module.full().tree
    if tree is None:
        return
    stack: list[tuple[ast.AST, str | None]] = [(stmt, None) for stmt in tree.body]
    while stack:
        node, cls = stack.pop()
        if isinstance(node, ast.ClassDef):
            stack.extend((stmt, node.name) for stmt in node.body)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield _Func(module, node, cls)
            stack.extend((stmt, None) for stmt in node.body if isinstance(stmt, ast.ClassDef))


def _enclosing(module: Module, line: int) -> _Func | None:
    """The innermost function whose body holds ``line``."""
    best: _Func | None = None
    for found in _functions(module):
        func = found.func
        inside = func.lineno <= line <= (func.end_lineno or func.lineno)
        if inside and (best is None or func.lineno >= best.func.lineno):
            best = found
    return best


def _argument(call: ast.Call, logged: Logged) -> ast.expr | None:
    """The argument holding the key of a key-taking scanned call (``add_scalar(tag, ...)``)."""
    spec = logged.spec.key
    return None if spec is None else _passed(call, spec.position, spec.keywords)


def _loop_source(func: FuncDef, name: str, params: set[str]) -> str | None:
    """The parameter a ``for`` loop binding ``name`` iterates over (``for (k, v), _ in
    zip(sorted(values.items()), ...)`` iterates ``values`` and binds ``k``)."""
    for node in walk(func):
        if not isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
            continue
        bound = {n.id for n in walk(node.target) if isinstance(n, ast.Name)}
        if name not in bound:
            continue
        read = [n for n in walk(node.iter) if isinstance(n, ast.Name) and n.id in params]
        # The key is the first element: of the first parameter written (``zip(a, b)``).
        if read and _keys_first(node.target, name):
            return min(read, key=lambda n: (n.lineno, n.col_offset)).id
    return None


def _parameter_key(logged: Logged) -> str | None:
    """The parameter a call logs as a whole key (``{name: value}``, ``add_scalar(name,
    ...)``), when it is the only key of the call; ``None`` otherwise."""
    if len(logged.keys) != 1:
        return None
    shape = logged.keys[0].shape
    if len(shape) == 1 and isinstance(shape[0], Hole) and shape[0].param:
        return shape[0].param
    return None


def _keys_first(target: ast.expr, name: str) -> bool:
    """``name`` is the target itself or the first element of the first tuple (``k`` of
    ``(k, v), x`` or ``k, v``): a dict's key, not its value."""
    while isinstance(target, ast.Tuple | ast.List) and target.elts:
        target = target.elts[0]
    return isinstance(target, ast.Name) and target.id == name


def _self_field(node: ast.expr) -> str | None:
    """``field`` of ``self.field``."""
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    ):
        return node.attr
    return None


class _KeyValueLoggers:
    """One pass over the scanned files for the key-value loggers of :func:`kv_logged`."""

    def __init__(self, project: ProjectIndex) -> None:
        self.project = project
        self.by_path = {module.shown: module for module in project.modules}
        self.key_takers: dict[str, list[_Taker]] = {}
        self.dict_sinks: dict[str, list[_Taker]] = {}
        self.found: list[Logged] = []
        self.explained: set[int] = set()
        """The scanned calls (by id) whose key the callers of their function now give."""

    def sinks(self, found: Sequence[Logged]) -> None:
        """Key sinks: scanned key calls logging a parameter or a loop over one."""
        for logged in found:
            if logged.inside is not None:
                continue
            if not any(any(isinstance(p, Hole) for p in k.shape) for k in logged.keys):
                continue
            module = self.by_path.get(logged.where.path)
            if module is None:
                continue
            home = _enclosing(module, logged.where.line)
            if home is None:
                continue
            named = _parameter_key(logged)
            if named is not None:  # ``wandb.log({name: value})``: the parameter is the key
                self._add(self.key_takers, _Taker(home, named, logged))
                continue
            if logged.spec.key is None:
                continue
            call = next(
                (
                    node
                    for node in walk(home.func)
                    if isinstance(node, ast.Call)
                    and node.lineno == logged.where.line
                    and _shown(node.func) == logged.call
                ),
                None,
            )
            key = None if call is None else _argument(call, logged)
            if not isinstance(key, ast.Name):
                continue
            params = set(_positional(home.func, home.cls is not None))
            if key.id in params:
                self._add(self.key_takers, _Taker(home, key.id, logged))
                continue
            source = _loop_source(home.func, key.id, params)
            if source is not None:
                self._add(self.dict_sinks, _Taker(home, source, logged))

    def _explain(self, sink: Logged) -> None:
        """``sink``'s call logs nothing but the key its callers now give: left out."""
        if len(sink.keys) == 1 and not sink.unresolved:
            self.explained.add(id(sink))

    @staticmethod
    def _add(table: dict[str, list[_Taker]], taker: _Taker) -> None:
        held = table.setdefault(taker.at.func.name, [])
        if all(t.at.func is not taker.at.func or t.param != taker.param for t in held):
            held.append(taker)

    def _calls(self, names: set[str]) -> Iterator[tuple[_Func, ast.Call, str]]:
        """``<receiver>.<name>(...)`` calls of ``names`` (methods: an attribute call), with
        the function holding each, in the files whose text calls one."""
        for module in self.project.modules:
            if not any(name.encode() in module.source for name in names):
                continue
            lines = module.mention_lines(names)
            if not lines:
                continue
            wanted = set(lines)
            for home in _functions(module):
                # Only the functions holding a line that calls one of ``names`` are walked.
                first = bisect.bisect_left(lines, home.func.lineno)
                if first == len(lines) or lines[first] > (home.func.end_lineno or 0):
                    continue
                for node in walk(home.func):
                    if (
                        isinstance(node, ast.Call)
                        and node.lineno in wanted
                        and isinstance(node.func, ast.Attribute)
                        and node.func.attr in names
                    ):
                        yield home, node, node.func.attr

    def _targets(self, table: dict[str, list[_Taker]], home: _Func, call: ast.Call) -> list[_Taker]:
        """The takers ``call`` reaches: by name when every function of it is one, else a
        ``self.<name>(...)`` of the taker's own class."""
        assert isinstance(call.func, ast.Attribute)
        name = call.func.attr
        takers = table.get(name, [])
        receiver = _dotted(call.func.value)
        if module_function(home.module.imports, receiver) or (
            receiver is not None and receiver.partition(".")[0] in home.module.imports
        ):
            return []  # ``np.record(...)``, ``json.dump(...)``: a module's function
        if receiver == "self":
            return [t for t in takers if t.at.cls == home.cls and t.at.module is home.module]
        if table is self.dict_sinks:
            # A writer object's method the dumping loop picks (``fmt.write(self.values)``
            # over formats of several classes): one of them reaching a sink is enough, as
            # the argument is the object's own field, which its key-writing methods fill.
            return takers
        funcs = {id(t.at.func) for t in takers}
        if self.project.defined(name) != len(funcs):
            return []
        return takers

    def fields(self) -> set[tuple[str, str, str]]:
        """The logged fields ``(file, class, field)``: handed to a dict sink, through any
        chain of functions passing their parameter on."""
        logged: set[tuple[str, str, str]] = set()
        for _ in range(_MAX_ROUNDS):
            if not self.dict_sinks:
                break
            grown = False
            for home, call, _name in list(self._calls(set(self.dict_sinks))):
                for taker in self._targets(self.dict_sinks, home, call):
                    bound = _bind(call, taker.at.func, method=taker.at.cls is not None)
                    argument = bound.get(taker.param)
                    if argument is None:
                        continue
                    field = _self_field(argument)
                    if field is not None and home.cls is not None:
                        logged.add((home.module.real, home.cls, field))
                        self._explain(taker.inner)
                    elif isinstance(argument, ast.Name) and argument.id in _positional(
                        home.func, home.cls is not None
                    ):
                        new = _Taker(home, argument.id, taker.inner)
                        before = len(self.dict_sinks.get(home.func.name, []))
                        self._add(self.dict_sinks, new)
                        grown |= len(self.dict_sinks[home.func.name]) > before
            if not grown:
                break
        return logged

    def writers(self, fields: set[tuple[str, str, str]]) -> None:
        """The methods writing a logged field: key takers, dict wrappers, literal keys."""
        sink = next(t.inner for takers in self.dict_sinks.values() for t in takers)
        for module in self.project.modules:
            wanted = {(c, f) for real, c, f in fields if real == module.real}
            if not wanted:
                continue
            for home in _functions(module):
                if home.cls is None:
                    continue
                names = {f for c, f in wanted if c == home.cls}
                if names:
                    self._writes(home, names, sink)

    def _writes(self, home: _Func, names: set[str], sink: Logged) -> None:
        params = set(_positional(home.func, True))
        module = home.module
        for node in walk(home.func):
            if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if (
                        not isinstance(target, ast.Subscript)
                        or _self_field(target.value) not in names
                    ):
                        continue
                    index = target.slice
                    if isinstance(index, ast.Name) and index.id in params:
                        self._add(self.key_takers, _Taker(home, index.id, sink))
                    elif isinstance(index, ast.Constant) and isinstance(index.value, str):
                        where = module.where(target)
                        key = Key((index.value,), where)
                        self.found.append(self._logged(sink, _shown(target), where, (key,)))
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "update"
                and _self_field(node.func.value) in names
                and len(node.args) == 1
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id in params
            ):
                where = module.where(node)
                wrapper = Wrapper(module, home.func, home.cls, module.where(home.func))
                spread = Spread(node.args[0].id, (SLOT,))
                self.found.append(
                    Logged(
                        _shown(node.func),
                        where,
                        sink.spec,
                        sink.prefixes,
                        sink.flat,
                        (),
                        (),
                        (spread,),
                        wrapper,
                    )
                )

    @staticmethod
    def _logged(
        sink: Logged,
        call: str,
        where: Where,
        keys: tuple[Key, ...],
        unresolved: tuple[Unresolved, ...] = (),
    ) -> Logged:
        return Logged(call, where, sink.spec, sink.prefixes, sink.flat, keys, unresolved)

    def callers(self) -> None:
        """Each call of a key taker: the key it passes, at its line (wrappers of wrappers:
        a caller passing its own parameter there takes a key too)."""
        done: set[tuple[str, int, int]] = set()
        for _ in range(_MAX_ROUNDS):
            if not self.key_takers:
                return
            grown = False
            for home, call, _name in list(self._calls(set(self.key_takers))):
                slot = (home.module.real, call.lineno, call.col_offset)
                for taker in self._targets(self.key_takers, home, call):
                    bound = _bind(call, taker.at.func, method=taker.at.cls is not None)
                    argument = bound.get(taker.param)
                    if argument is None or slot in done:
                        continue
                    params = _positional(home.func, home.cls is not None)
                    if isinstance(argument, ast.Name) and argument.id in params:
                        new = _Taker(home, argument.id, taker.inner)
                        before = len(self.key_takers.get(home.func.name, []))
                        self._add(self.key_takers, new)
                        grown |= len(self.key_takers[home.func.name]) > before
                        done.add(slot)
                        continue
                    done.add(slot)
                    self._explain(taker.inner)
                    self._caller_key(home.module, call, argument, taker.inner)
            if not grown:
                return

    def _caller_key(self, module: Module, call: ast.Call, argument: ast.expr, sink: Logged) -> None:
        where = module.where(call)
        shown = _shown(call.func)
        shape = _shape(argument, module)
        if shape is None:
            what = f"the key `{_shown(argument)}` passed to `{shown}`"
            self.found.append(self._logged(sink, shown, where, (), (Unresolved(what, where),)))
            return
        self.found.append(self._logged(sink, shown, where, (Key(shape, where),)))


def _shape(node: ast.expr, module: Module) -> Shape | None:
    """A key's text and holes: literals, module constants, ``+`` and f-strings of them;
    ``None`` for anything else (a name bound at run time, a call)."""
    if isinstance(node, ast.Constant):
        return (node.value,) if isinstance(node.value, str) else None
    if isinstance(node, ast.Name):
        held = module.constants.get(node.id)
        if isinstance(held, ast.Constant) and isinstance(held.value, str):
            return (held.value,)
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _shape(node.left, module), _shape(node.right, module)
        return None if left is None or right is None else concat(left, right)
    if isinstance(node, ast.JoinedStr):
        parts: list[Shape] = []
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                parts.append((value.value,))
            elif isinstance(value, ast.FormattedValue):
                inner = _shape(value.value, module) if value.format_spec is None else None
                parts.append(inner if inner is not None else (Hole(_shown(value.value)),))
            else:
                return None
        return concat(*parts)
    return None


def kv_logged(project: ProjectIndex, found: Sequence[Logged]) -> list[Logged]:
    """``found`` (the scanned calls so far) with what key-value loggers log (see the
    module's docstring): the keys at their callers' lines, and ``update`` wrappers whose
    callers the waves of :meth:`~codegen.scan.extract.Project.logged` follow. A sink's
    own call logging a parameter's key is left out once callers give that key, as a
    wrapper's call is."""
    loggers = _KeyValueLoggers(project)
    loggers.sinks(found)
    if loggers.dict_sinks:
        fields = loggers.fields()
        if fields:
            loggers.writers(fields)
    loggers.callers()
    if not loggers.found:
        return list(found)
    kept = [logged for logged in found if id(logged) not in loggers.explained]
    return kept + loggers.found
