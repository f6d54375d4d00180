"""Objects made once at module level, and the bound methods a module hands out for them.

A module that builds ``DEFAULT = Tracker()`` at its top level and exports ``stat =
DEFAULT.stat`` makes one object its importers share: ``stats.stat(x=v)``,
``stats.DEFAULT.stat(x=v)`` and ``from .stats import stat; stat(x=v)`` are calls of
``Tracker.stat`` on that one object, in whatever module they are written (through a
package's ``__init__`` re-exporting the name, too). :mod:`.collectors` reads a getter called
on such an object as what every call on it, anywhere, adds.

Only module-level assignments count: an object made inside a function is another object
each call, and a name rebound anywhere in its module's top level is not an instance.
"""

from __future__ import annotations

import ast
import weakref
from typing import TypeAlias

from .inherited import exported
from .model import ProjectIndex
from .sources import Module
from .state import joined

__all__ = ["Bound", "Instance", "aliases", "bound_method", "instances", "may_use"]

Instance: TypeAlias = "tuple[Module, str]"
"""A module-level object: the module making it and the name it is bound to there."""

Bound: TypeAlias = "tuple[Module, str, tuple[Module, str], str]"
"""A call on a module-level object: its module, its name, its class, the method called."""

_BINDINGS: weakref.WeakKeyDictionary[Module, dict[str, ast.expr | None]] = (
    weakref.WeakKeyDictionary()
)
"""What each module's top level binds, read once per module."""


def _top_assignments(module: Module) -> dict[str, ast.expr | None]:
    """Name -> the value a module's top level binds it to once (``None``: bound twice or
    by anything but a plain assignment, so not one known value)."""
    cached = _BINDINGS.get(module)
    if cached is not None:
        return cached
    tree = module.full().tree
    found: dict[str, ast.expr | None] = {}
    _BINDINGS[module] = found
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for name, value in _pairs(target, node.value):
                    found[name] = None if name in found else value
        elif isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
            found[node.target.id] = None
    return found


_SHADOWED: weakref.WeakKeyDictionary[Module, tuple[ast.Module | None, frozenset[int]]] = (
    weakref.WeakKeyDictionary()
)
"""Each module's calls of a locally bound name, found once per parsed tree."""

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _shadowed(module: Module) -> frozenset[int]:
    """The ``Name`` nodes called in ``module`` that a function around them binds itself (a
    parameter, a nested ``def`` or class, an assignment, a loop or ``with`` target, an
    import): such a call is the local one, not a module-level alias (no guessed key). Kept
    with the tree they were read from: a released and re-read module is read again."""
    tree = module.full().tree
    cached = _SHADOWED.get(module)
    if cached is not None and cached[0] is tree:
        return cached[1]
    found: set[int] = set()
    if tree is not None:
        _shadowed_in(tree, frozenset(), found)
    result = frozenset(found)
    _SHADOWED[module] = (tree, result)
    return result


def _shadowed_in(scope: ast.AST, bound: frozenset[str], found: set[int]) -> None:
    """Record in ``found`` the calls of ``scope`` (not of scopes inside it, which recurse
    with their own names added) whose name is in ``bound`` or bound by ``scope``."""
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        names = {arg.arg for arg in ast.walk(scope.args) if isinstance(arg, ast.arg)}
        names.update(_bound_directly(scope))
        bound = bound | names
    for node in _own_nodes(scope):
        if isinstance(node, _SCOPES):
            _shadowed_in(node, bound, found)
        elif (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in bound
        ):
            found.add(id(node.func))


def _own_nodes(scope: ast.AST) -> list[ast.AST]:
    """The nodes of ``scope`` outside the scopes nested in it (those themselves included)."""
    out: list[ast.AST] = []
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        out.append(node)
        if not isinstance(node, _SCOPES):
            todo.extend(ast.iter_child_nodes(node))
    return out


def _bound_directly(scope: ast.AST) -> set[str]:
    """The names ``scope`` itself binds (nested scopes' own names are theirs)."""
    names: set[str] = set()
    for node in _own_nodes(scope):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).partition(".")[0])
    return names


_MADE: weakref.WeakKeyDictionary[Module, dict[str, tuple[Module, str]]] = (
    weakref.WeakKeyDictionary()
)
"""Each module's module-level objects, found once per module."""


def _pairs(target: ast.expr, value: ast.expr | None) -> list[tuple[str, ast.expr | None]]:
    """The names an assignment binds and their values (``a, b = x.a, x.b`` pairwise;
    ``None`` when a name's value is not its own expression)."""
    if isinstance(target, ast.Name):
        return [(target.id, value)]
    if isinstance(target, ast.Tuple | ast.List):
        values = value.elts if isinstance(value, ast.Tuple | ast.List) else None
        if values is not None and len(values) != len(target.elts):
            values = None
        return [
            pair
            for index, element in enumerate(target.elts)
            for pair in _pairs(element, values[index] if values is not None else None)
        ]
    return []


def instances(project: ProjectIndex, module: Module) -> dict[str, tuple[Module, str]]:
    """The module-level objects of scanned classes ``module`` makes: name -> the class
    (``DEFAULT = Tracker()``, ``Tracker`` defined there or imported by name)."""
    cached = _MADE.get(module)
    if cached is not None:
        return cached
    found: dict[str, tuple[Module, str]] = {}
    _MADE[module] = found
    for name, value in _top_assignments(module).items():
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            ref = project.class_named(module, value.func.id)
            if ref is not None and ref[1] in ref[0].full().classes:
                found[name] = ref
    return found


def aliases(project: ProjectIndex, module: Module) -> dict[str, tuple[str, str]]:
    """The bound methods of those objects ``module`` names: alias -> (object, method)
    (``stat = DEFAULT.stat``)."""
    objects = instances(project, module)
    found: dict[str, tuple[str, str]] = {}
    for name, value in _top_assignments(module).items():
        if (
            isinstance(value, ast.Attribute)
            and isinstance(value.value, ast.Name)
            and value.value.id in objects
        ):
            found[name] = (value.value.id, value.attr)
    return found


def _module_named(project: ProjectIndex, module: Module, node: ast.expr) -> Module | None:
    """The scanned module a name of ``module`` denotes (``import a.b as m``; ``from a import
    b`` where ``b`` is a module)."""
    if not isinstance(node, ast.Name):
        return None
    imported = module.imports.get(node.id)
    if imported is None:
        return None
    name, attr, level = imported
    return project.find_module(joined(name, attr) if attr else name, level, module)


def _binding(project: ProjectIndex, module: Module, name: str) -> tuple[Module, str] | None:
    """The module whose top level binds ``name`` as seen from ``module``, following
    ``from .x import name`` re-exports (a bounded chain)."""
    home, found = exported(project, module, name, defines=lambda m, n: n in _top_assignments(m))
    return (home, found) if found in _top_assignments(home) else None


def _referent(project: ProjectIndex, module: Module, node: ast.expr) -> tuple[Module, str] | None:
    """Where the top-level name ``node`` reads is bound: ``name`` or ``module.name``."""
    if isinstance(node, ast.Name):
        return _binding(project, module, node.id)
    if isinstance(node, ast.Attribute):
        source = _module_named(project, module, node.value)
        if source is not None:
            return _binding(project, source, node.attr)
    return None


def bound_method(project: ProjectIndex, module: Module, func: ast.expr) -> Bound | None:
    """What a called expression of ``module`` is, when it is a method of a module-level
    object: ``DEFAULT.stat``, ``stats.DEFAULT.stat``, ``stat`` or ``stats.stat`` (an alias
    of ``DEFAULT.stat``); ``None`` for anything else."""
    if isinstance(func, ast.Attribute):
        owner = _referent(project, module, func.value)
        if owner is not None:
            made = instances(project, owner[0]).get(owner[1])
            if made is not None:
                return owner[0], owner[1], made, func.attr
    if isinstance(func, ast.Name) and id(func) in _shadowed(module):
        return None  # a function around the call binds the name itself: not the alias
    alias = _referent(project, module, func)
    if alias is None:
        return None
    named = aliases(project, alias[0]).get(alias[1])
    if named is None:
        return None
    return alias[0], named[0], instances(project, alias[0])[named[0]], named[1]


def may_use(project: ProjectIndex, module: Module, maker: Module, names: set[str]) -> bool:
    """Whether ``module`` can reach a name ``maker`` binds at its top level: it is
    ``maker``, imports one of ``names`` or ``maker`` itself, or imports a module that does
    (a package re-exporting them). A cheap test before reading its functions."""
    if module is maker:
        return True
    for local, (name, attr, level) in module.imports.items():
        if local in names or attr in names:
            return True
        target = project.find_module(joined(name, attr) if attr else name, level, module)
        if target is maker or (target is not None and _imports(project, target, maker)):
            return True
    return False


def _imports(project: ProjectIndex, module: Module, maker: Module) -> bool:
    """``module`` imports from ``maker`` (a package's ``__init__`` re-exporting it)."""
    return any(
        project.find_module(name, level, module) is maker
        or project.find_module(joined(name, attr) if attr else name, level, module) is maker
        for name, attr, level in module.imports.values()
    )
