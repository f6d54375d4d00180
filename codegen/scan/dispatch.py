"""Calls of an abstract method: ``self.learn(...)`` in a base class whose ``learn`` has no
body goes, at run time, to a subclass's override, so what it returns is what the overrides
of the scanned subclasses return (the template-method shape of trainers: a base class's
loop logging what each algorithm's ``learn`` returns).

A method is abstract here when its body holds nothing but a docstring, ``pass``, ``...``
or ``raise NotImplementedError``. Subclasses are found by their bases' names, directly or
through scanned classes (:func:`~codegen.scan.inherited.derives_from`), in the scanned
files whose text defines the method.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Final, TypeAlias

from .inherited import derives_from

if TYPE_CHECKING:
    from .model import ProjectIndex
    from .sources import Module

__all__ = ["is_abstract", "overrides"]

_FuncDef: TypeAlias = ast.FunctionDef | ast.AsyncFunctionDef

MAX_OVERRIDES: Final = 16
"""Most overrides followed for one call (a base class of many algorithms)."""


def is_abstract(func: _FuncDef) -> bool:
    """``func`` does nothing: a docstring, ``pass``, ``...``, ``raise NotImplementedError``."""
    for stmt in func.body:
        if isinstance(stmt, ast.Pass):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # a docstring or ``...``
        if isinstance(stmt, ast.Raise) and _not_implemented(stmt.exc):
            continue
        return False
    return True


def _not_implemented(node: ast.expr | None) -> bool:
    if isinstance(node, ast.Call):
        node = node.func
    return isinstance(node, ast.Name) and node.id == "NotImplementedError"


def overrides(project: ProjectIndex, cls: str, name: str) -> list[tuple[Module, _FuncDef, str]]:
    """The methods ``name`` of the scanned classes deriving from ``cls`` (by name), at most
    :data:`MAX_OVERRIDES`, in the order of the files and classes."""
    defines = re.compile(rb"\bdef\s+" + re.escape(name.encode()) + rb"\s*\(")
    found: list[tuple[Module, _FuncDef, str]] = []
    for module in project.modules:
        source = module.source
        if name.encode() not in source or not defines.search(source):
            continue
        for other, info in module.full().classes.items():
            method = info.methods.get(name)
            if method is None or other == cls or is_abstract(method):
                continue
            if derives_from(project, module, other, cls):
                found.append((module, method, other))
                if len(found) >= MAX_OVERRIDES:
                    return found
    return found
