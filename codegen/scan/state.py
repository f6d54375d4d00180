"""The per-module analysis's state, and the small readers its parts share.

The analysis of one module (:class:`~codegen.scan.extract._Scanner`) is assembled from
parts, one concern each: statements and scopes (:mod:`.statements`), dict values and the
calls building them (:mod:`.dictvalues`), key expressions (:mod:`.keyexpr`), objects and
callables (:mod:`.objectflow`) and the logging calls themselves (:mod:`.logcalls`).
:class:`ScanState` holds what they share: the module, the scope being read, and the
signatures by which one part calls another.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from .calls import ScanCall
from .keyfilter import KeyTest
from .model import Logged, ProjectIndex, Returns, Wrapper
from .objects import Callables, Env, Gathered, Instance, Opaque, Value
from .sources import Module
from .syntax import FuncDef
from .syntax import dotted as _dotted
from .values import NON_SCALAR_VALUES, DictVal, Key, KeyList, KeysOf, Shape, StrVal, Where

__all__ = [
    "MAX_ALTERNATIVES",
    "OBJECT_EXPRESSIONS",
    "ScanState",
    "dict_item",
    "is_field",
    "is_format",
    "joined",
    "literal",
    "valued",
]


class ScanState:
    """What the parts of one module's analysis share: the module, the scope being read, and
    (for the type checker) the methods by which one part calls another."""

    def __init__(
        self,
        project: ProjectIndex,
        module: Module,
        lines: list[int],
        *,
        cls: str | None = None,
        depth: int = 0,
        calls: Sequence[ScanCall] = (),
        wrappers: Sequence[Wrapper] = (),
        fields: Sequence[ScanCall] = (),
    ) -> None:
        self.project = project
        self.calls = calls
        self.pick = ""
        self.guard: tuple[str, bool] | None = None
        """Set for a producer returning its metrics under a key (``returns = "metrics"``)."""
        self.wrappers: dict[str, list[Wrapper]] = {}
        for wrapper in wrappers:
            self.wrappers.setdefault(wrapper.name, []).append(wrapper)
        self.fields = fields
        self.module = module
        self.lines = lines
        self.cls = cls
        self.depth = depth
        self.found: list[Logged] = []
        self.func: FuncDef | None = None
        self.params: set[str] = set()
        self.outer: list[Env] = []
        self.typed: dict[str, tuple[Module, str]] = {}
        """Variables assigned an instance of a scanned dict subclass (``t = Tensors()``)."""
        self.objects: dict[str, tuple[Module, str]] = {}
        """Variables assigned an instance of any scanned class (see :mod:`.collectors`)."""
        self.stmt: ast.stmt | None = None
        """The statement being analysed (a key filter decides whether it runs)."""
        self.loops: dict[str, tuple[ast.For | ast.AsyncFor, dict[str, object]]] = {}
        """Loop variables over a dict's keys whose loop may skip keys (``continue``)."""
        self.tests: dict[tuple[int, int], KeyTest | None] = {}
        self.tags: dict[Key, tuple[str, str]] = {}
        """Keys read from ``self.m[mode]`` that one mode only holds (see :mod:`.accumulators`)."""
        self.last_target: tuple[ast.expr, tuple[Module, FuncDef, str | None] | None] | None = None
        """The last call resolved by :meth:`_function`, valid within one statement."""
        self.pending: dict[str, tuple[FuncDef, dict[str, DictVal]]] = {}
        self.dry = False
        """Inside the first pass over a loop's body (see :meth:`_carried`)."""
        self.ever: dict[str, DictVal] = {}
        """What each ``self.<attr>`` held before a method replaced it (see :mod:`.own_writes`)."""
        """Nested functions filling a dict of this one from their parameters: each call
        of one adds what it passes (see :meth:`_closure`)."""

    if TYPE_CHECKING:  # the methods one part calls on another

        def _argument(
            self, call: ast.Call, position: int | None, keywords: tuple[str, ...]
        ) -> ast.expr | None: ...
        def _arguments_dict(
            self, args: Sequence[ast.expr], keywords: Sequence[ast.keyword], env: Env
        ) -> DictVal: ...
        def _at(self, node: ast.AST) -> Where: ...
        def _bind_loop(self, target: ast.expr, iterable: ast.expr, env: Env) -> None: ...
        def _gathered(self, node: ast.expr, env: Env) -> Gathered | None: ...
        def _block(
            self,
            body: list[ast.stmt],
            env: Env,
            nested: list[tuple[ast.stmt, Env]],
            returns: Returns | None = None,
        ) -> Env: ...
        def _calls_in(self, stmt: ast.stmt, env: Env) -> None: ...
        def _closure_calls(self, stmt: ast.stmt, env: Env) -> None: ...
        def _collected(
            self, returned: DictVal, call: ast.Call, env: Env
        ) -> tuple[DictVal, DictVal]: ...
        def _dispatched(
            self, func: ast.Attribute, wrappers: Sequence[Wrapper]
        ) -> list[Wrapper]: ...
        def _dict(self, node: ast.expr, env: Env) -> DictVal: ...
        def _dict_class(self, node: ast.Call) -> tuple[Module, str] | None: ...
        def _field_dict(self, node: ast.Attribute, env: Env) -> DictVal | None: ...
        def _field_value_of(self, found: Opaque) -> DictVal: ...
        def _filled(self, call: ast.Call, env: Env) -> None: ...
        def _function(self, func: ast.expr) -> tuple[Module, FuncDef, str | None] | None: ...
        def _flattened(self, node: ast.Call, env: Env) -> DictVal | None: ...
        def _holds_dict_field(self, node: ast.Attribute, env: Env) -> bool: ...
        def _holds_object(self, node: ast.expr, env: Env) -> bool: ...
        def _instantiate(
            self, value: DictVal, call: ast.Call, arguments: dict[str, ast.expr], env: Env
        ) -> DictVal: ...
        def _is_dictish(self, node: ast.expr, env: Env) -> bool: ...
        def _hold(
            self,
            holder: DictVal,
            key: ast.expr | None,
            node: ast.expr | None,
            env: Env,
            *,
            calls: bool = True,
        ) -> DictVal: ...
        def _inner_read(self, node: ast.expr, env: Env) -> DictVal | None: ...
        def _inner_write(self, target: ast.Subscript, node: ast.expr, env: Env) -> bool: ...
        def _keylist(self, node: ast.expr, env: Env) -> KeyList | None: ...
        def _keys(self, node: ast.expr, env: Env) -> DictVal: ...
        def _lookup(self, name: str, env: Env) -> Value | None: ...
        def _loop_test(self, name: str) -> KeyTest | None: ...
        def _looped(self, node: ast.expr, env: Env) -> tuple[str, KeysOf] | None: ...
        def _renamer(self, name: str, node: ast.expr) -> KeyTest: ...
        def _match(self, call: ast.Call, specs: Sequence[ScanCall]) -> ScanCall | None: ...
        def _mentions(self, node: ast.stmt) -> bool: ...
        def _note_object(self, name: str, node: ast.expr) -> None: ...
        def _super_method(self, name: str) -> tuple[Module, FuncDef, str | None] | None: ...
        def _member_targets(self, func: ast.expr) -> list[tuple[Module, FuncDef, str | None]]: ...
        def _on_instance(self, func: ast.expr) -> tuple[Module, FuncDef, str | None] | None: ...
        def _object(self, node: ast.expr, env: Env) -> Instance | Callables | None: ...
        def _object_value(
            self, node: ast.expr, env: Env
        ) -> Opaque | Instance | Callables | None: ...
        def _part(self, node: ast.expr | None, env: Env, plain: bool) -> Sequence[Shape]: ...
        def _reach(self, argument: ast.expr, path: tuple[str, ...], env: Env) -> DictVal: ...
        def _rekeyed(self, node: ast.expr, env: Env, name: str, looped: KeysOf) -> DictVal: ...
        def _return_object(self, node: ast.expr, env: Env, returns: Returns) -> None: ...
        def _returned(self, node: ast.Call) -> tuple[Returns, dict[str, ast.expr]] | None: ...
        def _strings(self, node: ast.expr, env: Env, *, whole: bool = False) -> StrVal | None: ...
        def _value(self, node: ast.expr, env: Env) -> Value: ...


MAX_ALTERNATIVES: Final = 64
"""Most alternatives one key expression expands to (a product of loops over literals)."""


OBJECT_EXPRESSIONS: Final = (ast.Call, ast.Name, ast.Await)
"""Expressions that may hold an object or a function (see :mod:`.objects`)."""


def valued(keys: DictVal, value: ast.expr | None) -> DictVal:
    """``keys`` with the constructor of their value when it is not a number
    (``wandb.Table(...)``, see :data:`~codegen.scan.values.NON_SCALAR_VALUES`)."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
        return keys
    if value.func.attr not in NON_SCALAR_VALUES or not keys.keys:
        return keys
    made = _dotted(value.func) or value.func.attr
    marked = tuple(dataclasses.replace(key, value=made) for key in keys.keys)
    return DictVal(marked, keys.unresolved, keys.spreads)


def joined(module: str, attr: str | None) -> str:
    """``pkg.mod`` + ``name`` -> ``pkg.mod.name`` (``from . import name``: just ``name``)."""
    if attr is None:
        return module
    return f"{module}.{attr}" if module else attr


def is_format(node: ast.Call) -> bool:
    """``"...".format(...)`` on a string literal."""
    func = node.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "format"
        and isinstance(func.value, ast.Constant)
        and isinstance(func.value.value, str)
    )


def dict_item(node: ast.Dict, name: str) -> ast.expr | None:
    """The value under the literal key ``name`` of a dict display."""
    for key, value in zip(node.keys, node.values, strict=True):
        if isinstance(key, ast.Constant) and key.value == name:
            return value
    return None


def is_field(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == name


def literal(node: ast.expr) -> object:
    return node.value if isinstance(node, ast.Constant) else None
