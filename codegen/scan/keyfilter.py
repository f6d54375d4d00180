"""Filters that drop keys by their text, evaluated statically per key.

A trainer often passes its statistics through a function that keeps some keys and
drops others by a test on the key's text before logging them::

    for k, v in metrics.items():
        if any(k.startswith(p) for p in SKIP):
            continue
        if k.startswith("entropy/") and not k.endswith("/mean"):
            continue
        out[k] = v

:class:`KeyTest` answers, for one key, whether the loop reaches the statement writing
``out[k]``: it walks the loop body with the key's text, evaluating ``if`` tests made
of literals, ``==``/``in``, ``str.startswith``/``endswith``/``split``, ``len``,
``any``/``all`` over literal tuples, and calls of small module-level helper functions.
Anything else makes the answer unknown (``None``): the scanner then reports the key as
unresolved instead of guessing. Nothing is imported or run; only these operations on
strings, tuples, sets and integers are evaluated.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final

from .syntax import children, walk

__all__ = ["HOLE_SAMPLES", "KeyTest", "bound_once", "has_exit", "literal_table"]

HOLE_SAMPLES: Final = ("x", "x/y")
"""Values tried for a part of a key the scanner cannot know (``entropy/{env}/mean``)."""

_MAX_CALL_DEPTH: Final = 4
_MAX_ITEMS: Final = 256


_MAX_STEPS: Final = 20_000
"""Most expressions evaluated to decide one key: past it, the answer is unknown (a filter
calling a helper that calls itself over a tuple of prefixes can take exponential time)."""


class _UnknownError(ValueError):
    """The evaluation needs something the scanner does not evaluate (caught: unknown)."""


class _SpentError(RuntimeError):
    """:data:`_MAX_STEPS` reached: unknown, and not an answer a helper's result may cache."""


_GAVE_UP: Final = (
    _UnknownError,
    _SpentError,
    TypeError,
    ValueError,
    IndexError,
    KeyError,
    RecursionError,
)
"""What ends an evaluation without an answer: a construct it cannot evaluate, a spent
budget, or the key's own operations failing."""


_REACHED: Final = "reached"
_RENAMED: Final = "\x00renamed"
"""In a rename's scope: where the walk leaves the key expression's value (no Python name
can spell it)."""
_STOPPED: Final = "stopped"
_FELL: Final = "fell"

_STR_METHODS: Final = frozenset(
    {
        "startswith",
        "endswith",
        "split",
        "rsplit",
        "strip",
        "lstrip",
        "rstrip",
        "lower",
        "upper",
        "count",
        "partition",
        "rpartition",
        "replace",
        "removeprefix",
        "removesuffix",
    }
)
_TYPES: Final[dict[str, type]] = {"str": str, "int": int, "bool": bool, "tuple": tuple}
"""Classes ``isinstance`` is evaluated against (``isinstance(k, str)`` in a rename)."""
_BUILTINS: Final[dict[str, Callable[..., object]]] = {
    "len": len,
    "tuple": tuple,
    "set": set,
    "frozenset": frozenset,
    "list": list,
    "bool": bool,
}


def _safe(value: object) -> object:
    """Only plain data (strings, numbers, and containers of them) is kept."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, tuple | list | set | frozenset):
        if len(value) > _MAX_ITEMS:
            raise _UnknownError
        for item in value:
            _safe(item)
        return value
    raise _UnknownError


def literal_table(body: Sequence[ast.stmt]) -> dict[str, object]:
    """``NAME = <literal>`` assignments at the top of ``body`` (tuples of prefixes)."""
    table: dict[str, object] = {}
    for stmt in body:
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            try:
                table[stmt.targets[0].id] = _safe(ast.literal_eval(stmt.value))
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError, _UnknownError):
                continue
    return table


def bound_once(func: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, object]:
    """``NAME = <literal>`` anywhere in ``func``'s own body (under an ``if`` too), for names
    bound nowhere else in it: a set of keys to skip written where it is used."""
    stores: dict[str, int] = {}
    found: list[ast.Assign] = []
    stack: list[ast.AST] = list(func.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, ast.Assign):
            found.append(node)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue  # a nested scope binds its own names
        stack.extend(children(node))
    table = literal_table(found)
    return {name: value for name, value in table.items() if stores.get(name) == 1}


def has_exit(body: Sequence[ast.stmt]) -> bool:
    """``continue`` or ``break`` in ``body`` that leaves this loop's iteration."""
    return any(isinstance(node, ast.Continue | ast.Break) for node in _own_nodes(body))


def _own_nodes(body: Sequence[ast.stmt]) -> Iterator[ast.AST]:
    """Nodes of ``body``, not descending into nested loops, functions or classes."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        yield node
        for child in children(node):
            if not isinstance(
                child,
                ast.For | ast.AsyncFor | ast.While | ast.FunctionDef | ast.AsyncFunctionDef,
            ) and not isinstance(child, ast.ClassDef | ast.Lambda):
                stack.append(child)


@dataclass(eq=False, frozen=True)
class KeyTest:
    """Whether one iteration of a loop over a dict's keys reaches ``target`` for a key.

    Compared by identity: each (loop, write) pair is one test.
    """

    var: str
    """The loop variable holding the key."""
    body: tuple[ast.stmt, ...]
    target: ast.stmt
    """The statement writing the key (``out[k] = v``)."""
    names: dict[str, object]
    """Literal values of names the tests read (``SKIP = ("a/", "b/")``)."""
    functions: Callable[[str], ast.FunctionDef | ast.AsyncFunctionDef | None]
    """Looks up a helper function the tests call (``_is_stat(k, {...})``)."""
    where: str = ""
    """The loop's function, for messages."""
    key: ast.expr | None = None
    """For a rename (:meth:`rename`): the key expression ``target`` writes, read in the
    walk's scope when it reaches ``target`` (``untag(name)`` of ``out[untag(name)] = v``)."""
    _inside: frozenset[int] = field(default=frozenset(), repr=False)
    _answers: dict[str, bool | None] = field(default_factory=dict, repr=False)
    """Answers already given: a key reaches the filter once per caller and wave."""
    _exits: dict[int, bool] = field(default_factory=dict, repr=False)
    """Statements the walk does not model: whether control flow in them reaches the write."""
    _results: dict[tuple[int, tuple[object, ...]], object] = field(default_factory=dict, repr=False)
    """A helper's result per argument values: it reads only them and literals, so a call
    repeated (a self-recursive helper, every key through one filter) is evaluated once."""
    _steps: list[int] = field(default_factory=lambda: [0], repr=False)
    """Expressions evaluated for the key being decided (see :data:`_MAX_STEPS`)."""

    def __post_init__(self) -> None:
        inside = frozenset(id(n) for stmt in self.body for n in walk(stmt))
        object.__setattr__(self, "_inside", inside)

    def covers(self, stmt: ast.stmt) -> bool:
        """``stmt`` is inside the loop body (so this test decides whether it runs)."""
        return id(stmt) in self._inside

    def decide(self, text: str) -> bool | None:
        """``True``: the write runs for the key ``text``; ``False``: not; ``None``: unknown."""
        if text in self._answers:
            return self._answers[text]
        answer: bool | None
        self._steps[0] = 0
        try:
            answer = self._run(self.body, {self.var: text}, 0) == _REACHED
        except _GAVE_UP:
            answer = None
        self._answers[text] = answer
        return answer

    def rename(self, text: str) -> str | None:
        """The key :attr:`key` makes of the key ``text``; ``None`` when unknown or not a
        non-empty string (the caller reports the key unresolved, never the raw one)."""
        if self.key is None:
            return None
        found: list[object] = []
        self._steps[0] = 0
        try:
            if self._run(self.body, {self.var: text, _RENAMED: found}, 0) != _REACHED:
                return None
        except _GAVE_UP:
            return None
        return found[0] if found and isinstance(found[0], str) and found[0] else None

    def decide_shape(self, parts: Sequence[str | None]) -> bool | None:
        """For a key of literal text and holes (``None``): the same answer for every tried hole
        value, else ``None``."""
        if None not in parts:
            return self.decide("".join(p for p in parts if p is not None))
        answers = {
            self.decide("".join(sample if p is None else p for p in parts))
            for sample in HOLE_SAMPLES
        }
        return answers.pop() if len(answers) == 1 else None

    # --- statements -----------------------------------------------------------

    def _run(self, body: Sequence[ast.stmt], scope: dict[str, object], depth: int) -> str:
        for stmt in body:
            outcome = self._stmt(stmt, scope, depth)
            if outcome != _FELL:
                return outcome
        return _FELL

    def _stmt(self, stmt: ast.stmt, scope: dict[str, object], depth: int) -> str:
        if stmt is self.target:
            renamed = scope.get(_RENAMED)
            if self.key is not None and isinstance(renamed, list):
                renamed.append(self._eval(self.key, scope, depth))
            return _REACHED
        if isinstance(stmt, ast.Continue | ast.Break | ast.Return):
            return _STOPPED
        if isinstance(stmt, ast.If):
            try:
                taken = self._eval(stmt.test, scope, depth)
            except (_UnknownError, TypeError, ValueError, IndexError, KeyError):
                if any(isinstance(n, ast.Name) and n.id == self.var for n in walk(stmt.test)):
                    raise _UnknownError from None  # a test of the key the walk cannot evaluate
                # A test of something else (``if t.numel() == 0:``): either branch may run.
                outcomes = {
                    self._run(stmt.body, dict(scope), depth),
                    self._run(stmt.orelse, dict(scope), depth),
                }
                for outcome in (_REACHED, _FELL):
                    if outcome in outcomes:
                        return outcome
                return _STOPPED
            return self._run(stmt.body if taken else stmt.orelse, scope, depth)
        if isinstance(stmt, ast.Assign):
            if len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                try:
                    scope[stmt.targets[0].id] = self._eval(stmt.value, scope, depth)
                except _UnknownError:
                    scope[stmt.targets[0].id] = _UNKNOWN
            return _FELL
        if isinstance(stmt, ast.With):
            return self._run(stmt.body, scope, depth)
        if isinstance(stmt, ast.For | ast.While) and not stmt.orelse:
            # An inner loop (``for stat in STATS:``): the write runs if one iteration reaches
            # it; its ``continue``/``break`` end that loop's iteration, not this one's.
            inner = dict(scope)
            for node in walk(stmt.target) if isinstance(stmt, ast.For) else ():
                if isinstance(node, ast.Name):
                    inner[node.id] = _UNKNOWN
            if any(isinstance(n, ast.Return) for n in walk(stmt)):
                raise _UnknownError
            return _REACHED if self._run(stmt.body, inner, depth) == _REACHED else _FELL
        exits = self._exits.get(id(stmt))
        if exits is None:
            exits = any(
                node is self.target or isinstance(node, ast.Continue | ast.Break | ast.Return)
                for node in _own_nodes([stmt])
            )
            self._exits[id(stmt)] = exits
        if exits:
            raise _UnknownError  # control flow the walk does not model reaches the write
        return _FELL

    # --- expressions ------------------------------------------------------------

    def _eval(self, node: ast.expr, scope: dict[str, object], depth: int) -> object:
        value = self._value(node, scope, depth)
        if value is _UNKNOWN:
            raise _UnknownError
        if isinstance(node, ast.Name):
            return value  # names hold checked values only (the key, literals, results)
        return _safe(value)

    def _value(self, node: ast.expr, scope: dict[str, object], depth: int) -> object:
        self._steps[0] += 1
        if self._steps[0] > _MAX_STEPS:
            raise _SpentError
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in scope:
                return scope[node.id]
            if node.id in self.names:
                return self.names[node.id]
            raise _UnknownError
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            items = [self._eval(item, scope, depth) for item in node.elts]
            return set(items) if isinstance(node, ast.Set) else tuple(items)
        if isinstance(node, ast.BoolOp):
            return self._boolop(node, scope, depth)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not self._eval(node.operand, scope, depth)
        if isinstance(node, ast.Compare):
            return self._compare(node, scope, depth)
        if isinstance(node, ast.Subscript):
            value = self._eval(node.value, scope, depth)
            if isinstance(node.slice, ast.Slice):
                bounds = [
                    None if part is None else self._eval(part, scope, depth)
                    for part in (node.slice.lower, node.slice.upper, node.slice.step)
                ]
                return value[slice(*bounds)]  # type: ignore[index]
            return value[self._eval(node.slice, scope, depth)]  # type: ignore[index]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            operand = self._eval(node.operand, scope, depth)
            if isinstance(operand, int):
                return -operand
        if isinstance(node, ast.IfExp):
            taken = self._eval(node.test, scope, depth)
            return self._eval(node.body if taken else node.orelse, scope, depth)
        if isinstance(node, ast.Call):
            return self._call(node, scope, depth)
        raise _UnknownError

    def _boolop(self, node: ast.BoolOp, scope: dict[str, object], depth: int) -> object:
        is_and = isinstance(node.op, ast.And)
        result: object = is_and
        for item in node.values:
            result = self._eval(item, scope, depth)
            if bool(result) is not is_and:
                return result
        return result

    def _compare(self, node: ast.Compare, scope: dict[str, object], depth: int) -> bool:
        left = self._eval(node.left, scope, depth)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self._eval(right_node, scope, depth)
            if not _OPS[type(op)](left, right):
                return False
            left = right
        return True

    def _call(self, node: ast.Call, scope: dict[str, object], depth: int) -> object:
        if node.keywords:
            raise _UnknownError
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _STR_METHODS:
            owner = self._eval(func.value, scope, depth)
            if not isinstance(owner, str):
                raise _UnknownError
            args = [self._eval(arg, scope, depth) for arg in node.args]
            return _safe(getattr(owner, func.attr)(*args))
        if not isinstance(func, ast.Name):
            raise _UnknownError
        if func.id == "isinstance" and len(node.args) == 2 and "isinstance" not in scope:
            kind = node.args[1]
            if not (isinstance(kind, ast.Name) and kind.id in _TYPES):
                raise _UnknownError
            return isinstance(self._eval(node.args[0], scope, depth), _TYPES[kind.id])
        if func.id in {"any", "all"} and len(node.args) == 1:
            return self._any_all(func.id, node.args[0], scope, depth)
        if func.id in _BUILTINS and func.id not in scope:
            args = [self._eval(arg, scope, depth) for arg in node.args]
            return _safe(_BUILTINS[func.id](*args))
        helper = self.functions(func.id)
        if helper is None or depth >= _MAX_CALL_DEPTH:
            raise _UnknownError
        return self._helper(helper, node, scope, depth)

    def _any_all(self, name: str, arg: ast.expr, scope: dict[str, object], depth: int) -> bool:
        if not isinstance(arg, ast.GeneratorExp | ast.ListComp) or len(arg.generators) != 1:
            return bool((any if name == "any" else all)(self._eval(arg, scope, depth)))  # type: ignore[arg-type]
        generator = arg.generators[0]
        if not isinstance(generator.target, ast.Name) or generator.ifs or generator.is_async:
            raise _UnknownError
        items = self._eval(generator.iter, scope, depth)
        if not isinstance(items, tuple | list | set | frozenset | str):
            raise _UnknownError
        variable = generator.target.id
        inner = dict(scope)
        for item in items:
            inner[variable] = item
            if bool(self._eval(arg.elt, inner, depth)) is (name == "any"):
                return name == "any"
        return name != "any"

    def _helper(
        self,
        helper: ast.FunctionDef | ast.AsyncFunctionDef,
        node: ast.Call,
        scope: dict[str, object],
        depth: int,
    ) -> object:
        args = helper.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            raise _UnknownError
        if len(node.args) != len(args.args):
            raise _UnknownError
        inner = {
            param.arg: self._eval(value, scope, depth)
            for param, value in zip(args.args, node.args, strict=True)
        }
        try:
            slot = (id(helper), tuple(_frozen(v) for v in inner.values()))
            hash(slot)
        except TypeError:
            return self._helper_body(helper, inner, depth)  # a list argument: not cached
        if slot in self._results:
            return self._results[slot]
        result = self._helper_body(helper, inner, depth)
        self._results[slot] = result
        return result

    def _helper_body(
        self,
        helper: ast.FunctionDef | ast.AsyncFunctionDef,
        inner: dict[str, object],
        depth: int,
    ) -> object:
        for stmt in helper.body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                continue  # a docstring
            if isinstance(stmt, ast.Return) and stmt.value is not None:
                return self._eval(stmt.value, inner, depth + 1)
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
            ):
                inner[stmt.targets[0].id] = self._eval(stmt.value, inner, depth + 1)
                continue
            raise _UnknownError
        raise _UnknownError


def _frozen(value: object) -> object:
    """``value`` as a hashable argument for :attr:`KeyTest._results`: a set, whose ``in``
    test is all a helper does with it, as a frozenset (a list stays a list: not cached)."""
    return frozenset(value) if isinstance(value, set) else value


class _UnknownValue:
    """A name assigned something the walk does not evaluate."""


_UNKNOWN: Final = _UnknownValue()

_OPS: Final[dict[type[ast.cmpop], Callable[[object, object], bool]]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.In: lambda a, b: a in b,  # type: ignore[operator]
    ast.NotIn: lambda a, b: a not in b,  # type: ignore[operator]
    ast.Lt: lambda a, b: a < b,  # type: ignore[operator]
    ast.LtE: lambda a, b: a <= b,  # type: ignore[operator]
    ast.Gt: lambda a, b: a > b,  # type: ignore[operator]
    ast.GtE: lambda a, b: a >= b,  # type: ignore[operator]
    ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b,
}
