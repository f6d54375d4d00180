"""Members: an attribute of ``self`` holding an object of a scanned class.

A learner builds its helpers in ``__init__`` and calls them elsewhere::

    class Learner:
        def __init__(self, args):
            if args.asynchronous:
                self.collector = AsyncCollector(args)
            else:
                self.collector = Collector(args)

        def run(self):
            data, self.info = self.collector.collect(prompts)   # what ``collect`` returns

``self.collector.collect(...)`` goes to the ``collect`` of every scanned class the class's
own methods assign to ``self.collector`` (``AsyncCollector``'s override and
``Collector``'s, each found through its bases): what the call returns is the union of what
they return. An attribute also assigned anything else (a parameter, an unknown call's
result) is not followed: another object may be there.
"""

from __future__ import annotations

import ast
import weakref
from typing import TYPE_CHECKING, Final

from .inherited import exported
from .syntax import FuncDef, walk

if TYPE_CHECKING:
    from .model import ProjectIndex
    from .sources import Module

__all__ = ["member_methods"]

_TABLES: Final[weakref.WeakKeyDictionary[Module, dict[str, dict[str, list[ast.expr | None]]]]] = (
    weakref.WeakKeyDictionary()
)
"""Per file and class: what its methods assign to each ``self.<attr>`` (one walk a class)."""


def _assigned(
    project: ProjectIndex, module: Module, cls: str, attr: str
) -> list[tuple[Module, str]]:
    """The scanned classes ``cls``'s methods assign to ``self.<attr>`` (empty: any other
    value is assigned there too, or none)."""
    tables = _TABLES.setdefault(module, {})
    table = tables.get(cls)
    if table is None:
        table = tables[cls] = {}
        info = module.full().classes.get(cls)
        for method in info.methods.values() if info is not None else ():
            for node in walk(method):
                for name, value in _values(node):
                    table.setdefault(name, []).append(value)
    found: list[tuple[Module, str]] = []
    for value in table.get(attr, ()):
        made = _made(project, module, value)
        if made is None:
            return []
        if made not in found:
            found.append(made)
    return found


def _values(node: ast.AST) -> list[tuple[str, ast.expr | None]]:
    """What ``node`` assigns to each ``self.<attr>`` (``None``: an item unpacked from a
    tuple, not known here); ``self.<attr> = None`` assigns nothing a call could go to."""
    if isinstance(node, ast.Assign):
        targets, value = node.targets, node.value
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        targets, value = [node.target], node.value
    else:
        return []
    if isinstance(value, ast.Constant) and value.value is None:
        return []
    values: list[tuple[str, ast.expr | None]] = []
    for target in targets:
        for item in target.elts if isinstance(target, ast.Tuple | ast.List) else [target]:
            if (
                isinstance(item, ast.Attribute)
                and isinstance(item.value, ast.Name)
                and item.value.id == "self"
            ):
                values.append((item.attr, value if item is target else None))
    return values


def _made(
    project: ProjectIndex, module: Module, value: ast.expr | None
) -> tuple[Module, str] | None:
    """The scanned class ``value`` instantiates (``Collector(args)``), else ``None``."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
        return None
    found = project.class_named(module, value.func.id)
    if found is None:
        return None
    home, name = exported(project, *found)  # ``from oat.collectors import Collector``
    return (home, name) if name in home.full().classes else None


def member_methods(
    project: ProjectIndex, module: Module, cls: str, func: ast.expr
) -> list[tuple[Module, FuncDef, str | None]]:
    """The methods ``self.<attr>.<name>`` (``func``) in a method of ``cls`` may call."""
    if not (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Attribute)
        and isinstance(func.value.value, ast.Name)
        and func.value.value.id == "self"
    ):
        return []
    targets: list[tuple[Module, FuncDef, str | None]] = []
    for home, name in _assigned(project, module, cls, func.value.attr):
        target = project.method(home, name, func.attr)
        if target is not None and all(target[1] is not t[1] for t in targets):
            targets.append(target)
    return targets
