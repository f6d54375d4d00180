"""Receivers a base class binds, followed into its subclasses in other files.

``self.accelerator = Accelerator(...)`` in ``BaseTrainer.__init__`` makes
``self.accelerator.log(stats)`` a logging call in every method of every subclass, though
the subclass's file never names ``Accelerator``: a file is analysed for a qualified call
only when its text names the qualifier (:meth:`~codegen.scan.sources.Module.active`), and
its receivers are read from its own text (:func:`~codegen.scan.logcalls.instances_of`).
Before the first wave, each file binding ``self.<attr>`` to a scanned call's class hands
those receivers, and the calls they make, to the files defining its subclasses.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from .inherited import derives_from, mixed_into
from .logcalls import instances_of

if TYPE_CHECKING:
    from .calls import ScanCall
    from .model import ProjectIndex
    from .sources import Module

__all__ = ["extend_to_mixins", "extend_to_subclasses"]

_CLASS: Final = re.compile(rb"^[ \t]*class[ \t]+(\w+)", re.MULTILINE)
"""A class statement's name, read from the text (a base's file is not parsed for it)."""
_BASES: Final = re.compile(rb"^[ \t]*class[ \t]+\w+[ \t]*\(([^)]*)\)", re.MULTILINE)
"""A class statement's base list, read from the text."""
_WORD: Final = re.compile(rb"\w+")


def extend_to_subclasses(project: ProjectIndex, calls: Sequence[ScanCall]) -> None:
    """Give each subclass's file the ``self.<attr>`` receivers its bases' files bind, and the
    qualified ``calls`` made on them (so that file's lines calling them are analysed)."""
    for module in list(project.modules):
        if not any(spec.qualifier for spec in module.calls):
            continue  # names no scanned call's class: binds none
        if module.instances is None:  # read once: the analysis reads the same receivers
            module.instances = instances_of(module, project.qualifiers)
            for receiver, inherited in module.inherited.items():
                module.instances.setdefault(receiver, set()).update(inherited)
        bound = {
            receiver: classes
            for receiver, classes in module.instances.items()
            if receiver.startswith("self.")
        }
        if not bound:
            continue
        names = {m.decode() for m in _CLASS.findall(module.source)}  # no parse: the text
        held = {cls for classes in bound.values() for cls in classes}
        specs = [s for s in calls if s.qualifier and s.qualifier.rpartition(".")[2] in held]
        for other in project.modules:
            if other is not module and _subclasses(project, other, names):
                _extend(other, bound, specs)


def extend_to_mixins(project: ProjectIndex, calls: Sequence[ScanCall]) -> None:
    """Give a mixin's file the qualified ``calls`` (``Trainer.log``) of a base that a scanned
    class derives from together with the mixin (``class GRPOTrainer(LoggingMixin, Trainer)``),
    though the mixin's file never names that base: its ``self.log(logs)`` runs in a
    ``Trainer``. Read from the text first (the base lists naming the base, the class
    statements of the files without the call); a file is parsed only for a class both name."""
    lists: dict[str, list[bytes]] = {}  # a file's base lists, read once for every call
    for spec in calls:
        if not spec.qualifier:
            continue
        base = spec.qualifier.rpartition(".")[2]
        word = base.encode()
        written: set[str] = set()
        for module in project.modules:
            if spec not in module.calls or word not in module.source:
                continue
            if module.real not in lists:
                lists[module.real] = _BASES.findall(module.source)
            for bases in lists[module.real]:
                if word in bases:
                    written.update(name.decode() for name in _WORD.findall(bases))
        written.discard(base)
        for other in project.modules:
            if not written or spec in other.calls or spec.name.encode() not in other.source:
                continue
            named = {m.decode() for m in _CLASS.findall(other.source)} & written
            if any(mixed_into(project, other, cls, base) for cls in sorted(named)):
                _extend(other, {}, [spec])


def _subclasses(project: ProjectIndex, module: Module, bases: set[str]) -> bool:
    """Whether a class of ``module`` derives from one of ``bases`` (by name, through scanned
    classes); only a file naming one is parsed."""
    named = [base for base in bases if base.encode() in module.source]
    if not named:
        return False
    heads = b"|".join(re.escape(base.encode()) for base in named)
    if re.search(rb"class\s+\w+\s*\([^)]*\b(?:%s)\b" % heads, module.source) is None:
        return False  # names a base without deriving from it (an import, a call): no parse
    return any(derives_from(project, module, cls, base) for cls in module.classes for base in bases)


def _extend(module: Module, bound: dict[str, set[str]], specs: Sequence[ScanCall]) -> None:
    for receiver, classes in bound.items():
        module.inherited.setdefault(receiver, set()).update(classes)
    added = [spec for spec in specs if spec not in module.calls]
    if added:
        module.calls = [*module.calls, *added]
        module.lines = module.mention_lines(spec.name for spec in module.calls)
    module.instances = None  # read again with the inherited receivers
