"""Objects and callables as values: the dict a field of a returned object holds, and what a
function handed over as an argument returns.

Real trainers hand their metrics back in a small record (``return Outputs(loss=l,
metrics=m)``) and call functions they are given (``out = loss_fn(inputs)``, then
``out.metrics``). ``scan`` follows both, statically:

* ``Cls(...)`` of a record class of the scanned files (a dataclass, a ``NamedTuple``, an
  attrs or pydantic model, or a class whose ``__init__`` stores its parameters on ``self``)
  is an :class:`Instance` holding what each field was given, by keyword or by position;
* what a function returns is the union over its ``return`` statements; a ``return`` of
  something not followed leaves the fields partly unresolved, reported where it enters;
* a function used as a value (a module function named as an argument, the nested ``def``
  a factory returns from each branch) is a :class:`Callables`: calling it gives the union of
  what every target returns;
* a parameter that is called (``loss_fn(inputs)``) is its callers' business: a field read
  on what it returns is a :class:`~codegen.scan.values.Spread` with a path (``("()",
  "metrics")``), resolved at every call by what that caller passes, and so on up the calls.

A field read on an object no followed construction gives a dict, and a callable nothing
passes, stay ``SCAN_UNRESOLVED``: a key is only ever reported when some path writes it.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

from .sources import Module
from .syntax import FuncDef, describe, shown
from .values import CALL, SLOT, DictVal, KeyList, KeysOf, Spread, StrVal, Unresolved

__all__ = [
    "Callables",
    "Env",
    "FuncRef",
    "Gathered",
    "Instance",
    "Opaque",
    "Value",
    "gaining",
    "join_objects",
    "steps",
]

FuncRef: TypeAlias = "tuple[Module, FuncDef, str | None]"
"""A scanned function: its module, its definition, and its class (``None``: no method)."""


@dataclass(frozen=True, slots=True)
class Opaque:
    """A value the scanner does not follow (parameters, unknown calls).

    Described lazily: most such values are never logged, and describing one
    unparses source.
    """

    module: Module
    node: ast.AST
    """Where the value comes from."""
    label: str = ""
    """What it is; empty: described from ``node``."""
    shown: ast.AST | None = None
    """An expression shown after ``label``."""
    parameter: bool = False
    param: str = ""
    """The parameter's name when the value is one (its callers' arguments hold the keys)."""
    called: str = ""
    """What calling the parameter of that name returned (``loss_fn(inputs)``): a field read
    on it is the callers' business."""
    callee: Callables | None = None
    """What calling these functions returned (``out = step(x)``, ``step`` a nested ``def``):
    followed only when a field of it is read."""
    field_of: Instance | None = None
    """For ``x = out.metrics``: the object ``out``; ``x`` is read as a dict only where the
    code uses it as one."""
    owner: str = ""
    """For ``self.<attr>`` given to a record's field: the class whose methods write it,
    followed only when that field is read (at ``depth``)."""
    depth: int = 0

    def as_dict(self) -> DictVal:
        """A parameter: its callers' keys (a spread); anything else: unresolved."""
        if self.param:
            return DictVal(spreads=(Spread(self.param, (SLOT,)),))
        return DictVal((), (self.why,))

    @property
    def why(self) -> Unresolved:
        """What cannot be resolved, and where."""
        what = self.label or describe(self.node)
        if self.shown is not None:
            what += f"`{shown(self.shown)}`"
        return Unresolved(what, self.module.where(self.node))


@dataclass(frozen=True, slots=True)
class Instance:
    """An object: what each field was given in every construction that reaches here, what
    reaches here unfollowed, and the objects callers pass (a spread with a path)."""

    fields: tuple[tuple[str, DictVal | Opaque], ...] = ()
    """Field name -> what one construction gave it (an :class:`Opaque`: no dict, described
    only when read)."""
    unresolved: tuple[Unresolved, ...] = ()
    spreads: tuple[Spread, ...] = ()

    def merge(self, other: Instance) -> Instance:
        """Either object: every field's dicts, unresolved parts and spreads (each once)."""
        return Instance(
            tuple(dict.fromkeys(self.fields + other.fields)),
            tuple(dict.fromkeys(self.unresolved + other.unresolved)),
            tuple(dict.fromkeys(self.spreads + other.spreads)),
        )

    def field(self, name: str, unknown: Unresolved, settle: Callable[[Opaque], DictVal]) -> DictVal:
        """The dict the field ``name`` holds; ``unknown`` when nothing here gives it one;
        ``settle`` says what a field given something not yet followed holds."""
        spreads = tuple(dataclasses.replace(s, path=(*s.path, name)) for s in self.spreads)
        result = DictVal((), self.unresolved, spreads)
        given = False
        for field_name, value in self.fields:
            if field_name == name:
                held = value if isinstance(value, DictVal) else settle(value)
                result, given = result.merge(held), True
        if not given and result.empty():
            return DictVal((), (unknown,))
        return result


@dataclass(frozen=True, slots=True)
class Callables:
    """A function as a value: the scanned functions it may be, and what reaches unfollowed."""

    targets: tuple[FuncRef, ...] = ()
    unresolved: tuple[Unresolved, ...] = ()

    def merge(self, other: Callables) -> Callables:
        """Any function of either."""
        return Callables(
            tuple(dict.fromkeys(self.targets + other.targets)),
            tuple(dict.fromkeys(self.unresolved + other.unresolved)),
        )


@dataclass(frozen=True, slots=True)
class Gathered:
    """A list of the dicts workers return (``ray.get([w.step.remote() for w in workers])``):
    each element holds ``element``'s keys, or, a tuple per worker (``return metrics, arrays``),
    ``items``' dicts by position. ``zip(*results)`` turns the items into lists of their own."""

    element: DictVal | None = None
    items: tuple[tuple[int, DictVal], ...] = ()

    def item(self, index: int) -> DictVal | None:
        """The dict at ``index`` of each element's tuple (``None``: none followed)."""
        return next((value for at, value in self.items if at == index), None)


Value: TypeAlias = DictVal | StrVal | KeysOf | KeyList | Opaque | Instance | Callables | Gathered
Env: TypeAlias = dict[str, Value]


def gaining(holder: object, added: DictVal) -> DictVal | None:
    """What a dict holding ``holder`` holds once ``added`` is written into it: a followed
    dict or a parameter (its callers' keys) gains the keys; ``None`` holder (nothing
    known yet) becomes ``added``; ``None`` back: anything else, left as it is."""
    if isinstance(holder, DictVal):
        return holder.merge(added)
    if isinstance(holder, Opaque):
        return holder.as_dict().merge(added)
    return added if holder is None else None


def join_objects(values: list[Value]) -> Value | None:
    """The objects or callables a name holds after branches, or ``None`` (none of them)."""
    if not any(isinstance(v, Instance | Callables) for v in values):
        return None
    objects = [v for v in values if isinstance(v, Instance)]
    functions = [v for v in values if isinstance(v, Callables)]
    if not objects and not functions:
        return None
    unknown = tuple(
        v.why
        for v in values
        if isinstance(v, Opaque) and not (isinstance(v.node, ast.Constant) and v.node.value is None)
    )
    if objects and not functions:
        joined = Instance(unresolved=unknown)
        for item in objects:
            joined = joined.merge(item)
        return joined
    if functions and not objects:
        together = Callables(unresolved=unknown)
        for function in functions:
            together = together.merge(function)
        return together
    return None


def steps(path: tuple[str, ...]) -> str:
    """A spread's path as shown in messages: ``("()", "metrics")`` -> ``(...).metrics``."""
    return "".join("(...)" if step == CALL else f".{step}" for step in path)
