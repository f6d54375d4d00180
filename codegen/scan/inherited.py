"""Which calls a ``scan-calls`` name matches through inheritance and imports.

* ``Trainer.log`` names a method a class inherits: it matches ``super().log(...)`` and
  ``self.log(...)`` in any class deriving from a class named ``Trainer``, directly or
  through classes of the scanned files (``class GRPOTrainer(BaseTrainer)``, ``class
  BaseTrainer(Trainer)``), though ``Trainer`` itself is not scanned (Hugging Face
  transformers' ``Trainer.log(logs)``, which TRL's trainers override and call).
* A bare name (``log``) matches calls of functions and methods, not a function of a
  numeric package the file imports (:mod:`.numeric`).

Only :mod:`ast` facts are read.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from .calls import ScanCall
    from .model import ProjectIndex
    from .sources import Module
    from .syntax import FuncDef

__all__ = [
    "derives_from",
    "exported",
    "function_named",
    "mixed_into",
    "named_like_its_callers_match",
    "subclass_call",
]

_MAX_BASES: Final = 8
"""How many classes up a chain of bases is followed."""

_LIBRARY_BASES: Final = {"Trainer": frozenset({"transformers", "trl"})}
"""Installed packages whose classes named ``*<base>`` all derive from ``<base>``, though they
are never scanned: every ``*Trainer`` of transformers and TRL is a transformers ``Trainer``, so
``from trl import GRPOTrainer as LibTrainer`` then ``class X(Mixin, LibTrainer)`` is one."""


def subclass_call(
    project: ProjectIndex, module: Module, cls: str | None, func: ast.expr, qualifier: str
) -> bool:
    """``super().f(...)`` or ``self.f(...)`` in a class deriving from ``qualifier``'s class."""
    if cls is None or not isinstance(func, ast.Attribute):
        return False
    receiver = func.value
    on_self = isinstance(receiver, ast.Name) and receiver.id == "self"
    on_super = (
        isinstance(receiver, ast.Call)
        and isinstance(receiver.func, ast.Name)
        and receiver.func.id == "super"
    )
    if not (on_self or on_super):
        return False
    base = qualifier.rpartition(".")[2]
    return derives_from(project, module, cls, base) or mixed_into(project, module, cls, base)


def mixed_into(project: ProjectIndex, module: Module, cls: str, base: str) -> bool:
    """Class ``cls`` of ``module`` is a mixin of a ``base``: a scanned class derives from both
    (``class GRPOTrainer(LoggingMixin, Trainer)``), so ``self.log``/``super().log`` in the
    mixin's methods run in a ``base``'s method resolution order."""
    known = module.mixed.get((cls, base))
    if known is not None:
        return known
    module.mixed[(cls, base)] = False  # a cycle of bases ends here
    name = cls.encode()
    found = False
    for other in project.modules:
        if found:
            break
        if name not in other.source:
            continue  # most files never name the mixin: no parse
        for sub, info in other.classes.items():
            if any(written.rpartition(".")[2] == cls for written in info.bases) and (
                _same_class(project, other, cls, module) and derives_from(project, other, sub, base)
            ):
                found = True
                break
    module.mixed[(cls, base)] = found
    return found


def _same_class(project: ProjectIndex, where: Module, name: str, home: Module) -> bool:
    """Whether ``name`` in ``where`` is ``home``'s class ``name`` (defined, or imported)."""
    located = project.class_named(where, name)
    if located is None:
        return False
    source, defined = exported(project, located[0], located[1])
    return source.real == home.real and defined == name


def named_like_its_callers_match(
    project: ProjectIndex, module: Module, cls: str | None, name: str, specs: Sequence[ScanCall]
) -> bool:
    """Whether calls of a function ``name`` (a method of ``cls``, or a module function for
    ``None``) are matched by ``specs`` already: a bare name (``log_metrics``) matches any
    call of it, ``Trainer.log`` the calls of a ``log`` method of a class deriving from
    ``Trainer``. A module function ``log`` wrapping ``wandb.log`` is no such function: its
    callers (``logging_utils.log(args, d)``) are found as a wrapper's."""
    for spec in specs:
        if spec.name != name:
            continue
        qualifier = spec.qualifier
        if qualifier is None:
            return True
        owner = qualifier.rpartition(".")[2]
        if cls is not None and (cls == owner or derives_from(project, module, cls, owner)):
            return True  # ``Tracking.log`` itself, or an override of it
    return False


def derives_from(
    project: ProjectIndex, module: Module, cls: str, base: str, depth: int = 0
) -> bool:
    """Class ``cls`` of ``module`` has ``base`` among its bases (as named), or a scanned
    base class of it does."""
    info = module.classes.get(cls)
    if info is None or depth > _MAX_BASES:
        return False
    for written in info.bases:
        head, _, last = written.rpartition(".")
        if last == base:
            return True
        source: Module | None = module if not head and last in module.classes else None
        if source is None:
            imported = module.imports.get(head.partition(".")[0] if head else last)
            if imported is not None:
                where = _joined(imported[0], imported[1]) if head else imported[0]
                source = project.find_module(where, imported[2], module)
                if not head and imported[1] is not None:
                    last = imported[1]  # ``from x import Trainer as HFTrainer``
                    if last == base:
                        return True
                if source is None and _library_subclass(imported[0], imported[2], last, base):
                    return True
        if source is not None:
            source, last = exported(project, source, last)
            if last == base:
                return True
            if derives_from(project, source, last, base, depth + 1):
                return True
    return False


def exported(
    project: ProjectIndex,
    module: Module,
    name: str,
    *,
    function: bool = False,
    defines: Callable[[Module, str], bool] | None = None,
) -> tuple[Module, str]:
    """Where class ``name`` (``function``: the function; ``defines``: what that predicate
    says a module binds) of ``module`` is defined: ``module`` itself, or the module a
    package's ``__init__`` re-exports it from (``from .rl import RLLearner``, ``from .memory
    import get_memory_stats``), a few hops."""
    for _ in range(_MAX_BASES):
        if defines is not None:
            if defines(module, name):
                break
        elif name in (module.functions if function else module.classes):
            break
        imported = module.imports.get(name)
        if imported is None or imported[1] is None:
            break
        source = project.find_module(imported[0], imported[2], module)
        if source is None:
            break
        module, name = source.full(), imported[1]
    return module, name


def function_named(
    project: ProjectIndex, module: Module, name: str
) -> tuple[Module, FuncDef] | None:
    """The scanned module-level function ``name`` means in ``module``: defined there, or
    imported from a scanned module (through a package's re-exports, see :func:`exported`)."""
    if name in module.functions:
        return module, module.functions[name]
    imported = module.imports.get(name)
    if imported is None or imported[1] is None:
        return None
    source = project.find_module(imported[0], imported[2], module)
    if source is None:
        return None
    source, name = exported(project, source.full(), imported[1], function=True)
    return (source, source.functions[name]) if name in source.functions else None


def _library_subclass(package: str, level: int, name: str, base: str) -> bool:
    """Class ``name`` imported from ``package`` (not scanned) derives from ``base`` by
    :data:`_LIBRARY_BASES` (``transformers.Seq2SeqTrainer``, ``trl.GRPOTrainer``)."""
    libraries = _LIBRARY_BASES.get(base)
    return (
        libraries is not None
        and level == 0
        and package.partition(".")[0] in libraries
        and name.endswith(base)
    )


def _joined(module: str, attr: str | None) -> str:
    if attr is None:
        return module
    return f"{module}.{attr}" if module else attr
