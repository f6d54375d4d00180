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

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .inherited import derives_from
from .logcalls import instances_of

if TYPE_CHECKING:
    from .calls import ScanCall
    from .model import ProjectIndex
    from .sources import Module

__all__ = ["extend_to_subclasses"]


def extend_to_subclasses(project: ProjectIndex, calls: Sequence[ScanCall]) -> None:
    """Give each subclass's file the ``self.<attr>`` receivers its bases' files bind, and the
    qualified ``calls`` made on them (so that file's lines calling them are analysed)."""
    for module in list(project.modules):
        if not any(spec.qualifier for spec in module.calls):
            continue  # names no scanned call's class: binds none
        bound = {
            receiver: classes
            for receiver, classes in instances_of(module, project.qualifiers).items()
            if receiver.startswith("self.")
        }
        if not bound:
            continue
        names = set(module.classes)
        held = {cls for classes in bound.values() for cls in classes}
        specs = [s for s in calls if s.qualifier and s.qualifier.rpartition(".")[2] in held]
        for other in project.modules:
            if other is not module and _subclasses(project, other, names):
                _extend(other, bound, specs)


def _subclasses(project: ProjectIndex, module: Module, bases: set[str]) -> bool:
    """Whether a class of ``module`` derives from one of ``bases`` (by name, through scanned
    classes); only a file naming one is parsed."""
    if not any(base.encode() in module.source for base in bases):
        return False
    return any(derives_from(project, module, cls, base) for cls in module.classes for base in bases)


def _extend(module: Module, bound: dict[str, set[str]], specs: Sequence[ScanCall]) -> None:
    for receiver, classes in bound.items():
        module.inherited.setdefault(receiver, set()).update(classes)
    added = [spec for spec in specs if spec not in module.calls]
    if added:
        module.calls = [*module.calls, *added]
        module.lines = module.mention_lines(spec.name for spec in module.calls)
    module.instances = None  # read again with the inherited receivers
