"""What the analysis hands between its parts: a function's summary (:class:`Returns`), a
logging call found (:class:`Logged`), a function that logs what its callers pass
(:class:`Wrapper`), and the questions the per-module analysis asks of the whole project
(:class:`ProjectIndex`, which :class:`~codegen.scan.extract.Project` answers).

It sits below every shape module, so none of them imports the project's analysis upward.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from .calls import ScanCall
from .objects import (
    Callables,
    Instance,
    Opaque,
)
from .sources import Module
from .syntax import FuncDef
from .values import (
    DictVal,
    Key,
    Shape,
    Spread,
    Unresolved,
    Where,
)

__all__ = [
    "Logged",
    "ProjectIndex",
    "ReceiverIndex",
    "Returns",
    "Wrapper",
]


@dataclass(slots=True)
class Returns:
    """What a function hands back: its returned dict, the dicts of a returned tuple, and the
    keys it adds to dicts passed as parameters (``metrics.update(...)`` on its argument)."""

    whole: DictVal | None = None
    items: dict[int, DictVal] = field(default_factory=dict)
    filled: dict[str, DictVal] = field(default_factory=dict)
    guarded: list[tuple[str, bool, DictVal]] = field(default_factory=list)
    """Dicts returned under ``if param:`` (``True``) or ``if not param:`` (``False``)."""
    instance: Instance | None = None
    """The objects it returns (``return Outputs(metrics=m)``), see :mod:`.objects`."""
    callables: Callables | None = None
    """The functions it returns (a factory's nested ``def``)."""
    opaque: list[Opaque] = field(default_factory=list)
    """What else it returns: unfollowed parts of its objects or functions."""
    settled: Instance | Callables | None = None
    """Its objects or functions with the unfollowed parts, once asked for (see
    :meth:`~codegen.scan.objects.ObjectFlow._returned_object`)."""

    def add(self, value: DictVal | tuple[DictVal | None, ...]) -> None:
        """Merge one ``return`` statement's value."""
        if isinstance(value, DictVal):
            self.whole = value if self.whole is None else self.whole.merge(value)
            return
        for index, item in enumerate(value):
            if item is not None:
                now = self.items.get(index)
                self.items[index] = item if now is None else now.merge(item)


@dataclass(frozen=True, slots=True)
class Logged:
    """One logging call: what it logs, under which prefixes, and what could not be resolved."""

    call: str
    """The call as written (``logger.log_metrics``)."""
    where: Where
    spec: ScanCall
    prefixes: tuple[Shape, ...] | None
    """Prefix alternatives; ``None`` when the prefix is unknown (see ``unresolved``)."""
    flat: bool
    """The call takes no prefix: keys are matched as ``prefix/key`` of the rows."""
    keys: tuple[Key, ...]
    unresolved: tuple[Unresolved, ...]
    spreads: tuple[Spread, ...] = ()
    """Keys of parameters of the enclosing function: its callers' arguments say which."""
    inside: Wrapper | None = None
    """The enclosing function, when ``spreads`` is not empty."""


@dataclass(eq=False, slots=True)
class Wrapper:
    """A function that logs (part of) a parameter's dict: its callers say what is logged."""

    module: Module
    func: FuncDef
    cls: str | None
    where: Where
    used: bool = False

    @property
    def name(self) -> str:
        """The function's name, as callers spell it."""
        return self.func.name


class ReceiverIndex(Protocol):
    """The wrappers a call reaches when its receiver's class is not written at the call."""

    def actor_wrappers(self, name: str) -> list[Wrapper]:
        """The wrappers ``name`` of Ray actor classes (``handle.<name>.remote(...)``)."""

    def family_wrappers(self, name: str, caller: FuncDef | None) -> list[Wrapper]:
        """The wrappers ``name`` a call on a receiver of unknown class reaches."""

    def actor_methods(self, name: str) -> list[tuple[Module, FuncDef, str]]:
        """The methods ``name`` of Ray actor classes (``handle.<name>.remote(...)`` runs one)."""


class ProjectIndex(Protocol):
    """What the analysis of one module asks of the whole project: the scanned files, the
    calls to scan, and the summaries of functions and attributes of other scopes."""

    modules: list[Module]
    calls: tuple[ScanCall, ...]
    fields: tuple[ScanCall, ...]
    producers: tuple[ScanCall, ...]
    throughs: tuple[ScanCall, ...]
    qualifiers: list[str]
    wrappers: dict[str, list[Wrapper]]
    collector_adds: dict[tuple[object, ...], DictVal]
    """What a method adds to its object's fields (see :mod:`.collectors`)."""
    receivers: ReceiverIndex
    """The wrappers calls on untyped receivers reach (Ray actor handles, config-built
    loggers): :class:`~codegen.scan.receivers.Receivers`."""

    def names_of(self, specs: Sequence[ScanCall]) -> frozenset[str]:
        """The names ``specs`` call."""

    def names_in(self, node: ast.expr) -> tuple[str, ...]:
        """The names ``node`` reads."""

    def find_module(self, name: str, level: int, importer: Module) -> Module | None:
        """The scanned module an import in ``importer`` names."""

    def class_named(self, importer: Module, name: str) -> tuple[Module, str] | None:
        """Where the class ``name`` in ``importer`` is defined."""

    def method(
        self, module: Module, cls: str, name: str, depth: int = 0
    ) -> tuple[Module, FuncDef, str | None] | None:
        """The method ``name`` of class ``cls`` or of its bases."""

    def wrapped_by(self, wrapper: Wrapper) -> list[Logged]:
        """The logging calls inside ``wrapper`` that log its parameters' keys."""

    def defined(self, name: str) -> int:
        """How many functions or methods of the scanned files are named ``name``."""

    def attribute_dict(
        self, module: Module, cls: str, attr: str, depth: int, skip: FuncDef | None = None
    ) -> DictVal | None:
        """The keys the methods of ``cls`` write into ``self.<attr>``."""

    def returned(self, module: Module, func: FuncDef, cls: str | None, depth: int) -> Returns:
        """What ``func`` returns and fills in its parameters."""
