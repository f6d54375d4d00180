"""Which wrappers a call reaches when its receiver's class is not written where it is made.

Two shapes of RL code hand a metrics dict to a logger whose class the call site does not
name:

* **Ray actor calls.** ``handle.log_dict.remote(d, step=s)`` calls ``log_dict(d, step=s)``
  on an actor: an instance of a class decorated ``@ray.remote`` (or passed to
  ``ray.remote(Cls)``). Its receiver is a handle, typed by nothing, so the call goes to
  the wrappers of that name among the actor classes of the scanned files.
* **Loggers built from config.** ``self.logger = config.instantiate(cfg.metric_logger)``
  then ``self.logger.log_dict(d)``: the object is any class of a family the config picks.
  The call goes to the wrappers of that name when every other method of the name in the
  scanned files belongs to the same family: a class declaring the method that a wrapper's
  class derives from (the interface), or a class deriving from it (a logger writing to a
  file or the console). A method of the name outside the family (an unrelated class) keeps
  the call unmatched: the receiver could be that class.

Only :mod:`ast` facts and the files' text are read; answers are remembered per name.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from .inherited import derives_from, exported
from .state import joined
from .syntax import dotted

if TYPE_CHECKING:
    from .model import ProjectIndex, Wrapper
    from .sources import Module
    from .syntax import FuncDef

__all__ = [
    "REMOTE",
    "Receivers",
    "annotated_class",
    "called_name",
    "is_ray_get",
    "remote_method",
    "visibly_no_dict",
]

REMOTE: Final = "remote"
"""The attribute a Ray actor method is called through (``handle.method.remote(...)``)."""

_MAX_DEFINITIONS: Final = 64
"""Most methods of one name weighed for the family rule (more: the call stays unmatched)."""

_MAX_CHAIN: Final = 64
"""Most wrappers (``Optional[...]``, ``X | None``, quotes) :func:`annotated_class` unwraps."""

_OPTIONAL: Final = frozenset({"Optional", "typing.Optional", "t.Optional"})
"""Annotations wrapping the class a parameter holds (``Optional[ModelDims]``)."""

_ACTOR_CALL: Final = re.compile(rb"\bremote\s*\((?:[^()]*\)\s*\()?\s*([A-Za-z_]\w*)\s*\)")
"""``ray.remote(Cls)`` and ``ray.remote(num_gpus=1)(Cls)``: a class made an actor by a call."""


def remote_method(func: ast.expr) -> ast.Attribute | None:
    """``handle.method`` of a Ray actor call ``handle.method.remote(...)``; else ``None``."""
    if isinstance(func, ast.Attribute) and func.attr == REMOTE:
        inner = func.value
        if isinstance(inner, ast.Attribute):
            return inner
    return None


def called_name(func: ast.expr) -> str | None:
    """The name a call goes to: ``f`` of ``f(...)``, ``x.f(...)`` and ``x.f.remote(...)``."""
    if isinstance(func, ast.Name):
        return func.id
    method = remote_method(func)
    if method is not None:
        return method.attr
    return func.attr if isinstance(func, ast.Attribute) else None


def visibly_no_dict(node: ast.expr) -> bool:
    """A literal that is no dict (``[episode]``, a number, a string): a wrapper's dict
    parameter given one (``monitors.log([episode])``, a wrapper taking lists too) logs no
    key through that call."""
    return isinstance(
        node,
        ast.List
        | ast.Tuple
        | ast.Set
        | ast.ListComp
        | ast.SetComp
        | ast.GeneratorExp
        | ast.Constant
        | ast.JoinedStr,
    )


def annotated_class(
    project: ProjectIndex, module: Module, func: FuncDef | None, name: str
) -> tuple[Module, str] | None:
    """The scanned class the parameter ``name`` of ``func`` is annotated with
    (``model_dims: ModelDims``, ``utils.ModelDims``, ``"ModelDims"``, ``ModelDims | None``,
    ``Optional[ModelDims]``): where it is defined; ``None`` for anything else."""
    if func is None:
        return None
    args = func.args
    arg = next(
        (a for a in (*args.posonlyargs, *args.args, *args.kwonlyargs) if a.arg == name), None
    )
    node = arg.annotation if arg is not None else None
    for _ in range(_MAX_CHAIN):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            node = (
                node.right if _is_none(node.left) else node.left if _is_none(node.right) else None
            )
        elif isinstance(node, ast.Subscript) and dotted(node.value) in _OPTIONAL:
            node = node.slice
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value, mode="eval").body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return None
        else:
            break
    written = dotted(node) if isinstance(node, ast.Name | ast.Attribute) else None
    if written is None:
        return None
    head, _, last = written.rpartition(".")
    if not head:
        found = project.class_named(module, last)
    else:
        imported = module.imports.get(head.partition(".")[0])
        source = None
        if imported is not None and "." not in head:
            source = project.find_module(joined(imported[0], imported[1]), imported[2], module)
        found = None if source is None else (source.full(), last)
    if found is None:
        return None
    home, cls = exported(project, found[0].full(), found[1])
    return (home, cls) if cls in home.classes else None


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def is_ray_get(func: ast.expr, module: Module) -> bool:
    """``ray.get`` (through ``import ray`` or ``import ray as r``) or ``get`` imported from ray."""
    name = dotted(func)
    if name is None:
        return False
    head, _, last = name.rpartition(".")
    imported = module.imports.get(head or last)
    if imported is None:
        return False
    if head:
        return last == "get" and joined(imported[0], imported[1]) == "ray"
    return imported == ("ray", "get", 0)


def _is_actor_decorator(node: ast.expr) -> bool:
    """``@ray.remote``, ``@ray.remote(num_gpus=1)`` or ``@remote`` (imported from ray)."""
    target = node.func if isinstance(node, ast.Call) else node
    name = dotted(target)
    return name is not None and name.rpartition(".")[2] == REMOTE


class Receivers:
    """The wrappers a call of an untyped receiver reaches, remembered per name."""

    def __init__(self, project: ProjectIndex) -> None:
        self.project = project
        self._actors: dict[tuple[str, str], Module] | None = None
        self._definitions: dict[str, list[tuple[Module, FuncDef, str | None]] | None] = {}

    def actor_wrappers(self, name: str) -> list[Wrapper]:
        """The wrappers ``name`` of actor classes, which ``handle.<name>.remote(...)`` calls."""
        actors = self._actor_classes()
        return [
            wrapper
            for wrapper in self.project.wrappers.get(name, [])
            if wrapper.cls is not None and (wrapper.module.real, wrapper.cls) in actors
        ]

    def actor_methods(self, name: str) -> list[tuple[Module, FuncDef, str]]:
        """The methods ``name`` of actor classes, which ``handle.<name>.remote(...)`` runs."""
        found = []
        for (_, cls), module in sorted(self._actor_classes().items(), key=lambda item: item[0]):
            info = module.full().classes.get(cls)
            if info is not None and name in info.methods:
                found.append((module, info.methods[name], cls))
        return found

    def family_wrappers(self, name: str, caller: FuncDef | None) -> list[Wrapper]:
        """The wrappers ``name`` a call on a receiver of unknown class reaches: all of them,
        when every other method ``name`` of the scanned files (``caller`` aside: a method
        forwarding to the object it holds) is of the wrappers' family; else none."""
        wrappers = self.project.wrappers.get(name, [])
        definitions = self._defined(name)
        if not wrappers or definitions is None:
            return []
        wrapped = {id(wrapper.func) for wrapper in wrappers}
        typed = [(w.module, w.cls) for w in wrappers if w.cls is not None]
        interfaces = [(module, cls) for module, _, cls in definitions if cls is not None]
        for module, func, cls in definitions:
            if id(func) in wrapped or func is caller:
                continue
            if cls is None or not self._in_family(module, cls, typed, interfaces):
                return []
        return list(wrappers)

    def _in_family(
        self,
        module: Module,
        cls: str,
        typed: Sequence[tuple[Module, str]],
        interfaces: Sequence[tuple[Module, str]],
    ) -> bool:
        """Class ``cls`` and a wrapper's class both are or derive from one class declaring
        the method (named alike: bases are resolved by name, as :func:`derives_from` does)."""
        project = self.project
        for _, interface in interfaces:
            if cls != interface and not derives_from(project, module, cls, interface):
                continue
            for home, owner in typed:
                if owner == interface or derives_from(project, home, owner, interface):
                    return True
        return False

    def _defined(self, name: str) -> list[tuple[Module, FuncDef, str | None]] | None:
        """Every function and method ``name`` of the scanned files, with its class; ``None``
        when there are too many to weigh."""
        if name in self._definitions:
            return self._definitions[name]
        pattern = re.compile(rb"\bdef\s+" + re.escape(name.encode()) + rb"\s*\(")
        listed: list[tuple[Module, FuncDef, str | None]] = []
        found: list[tuple[Module, FuncDef, str | None]] | None = listed
        for module in self.project.modules:
            if name.encode() not in module.source or not pattern.search(module.source):
                continue
            full = module.full()
            if name in full.functions:
                listed.append((full, full.functions[name], None))
            for cls, info in full.classes.items():
                if name in info.methods:
                    listed.append((full, info.methods[name], cls))
            if len(listed) > _MAX_DEFINITIONS:
                found = None
                break
        self._definitions[name] = found
        return found

    def _actor_classes(self) -> dict[tuple[str, str], Module]:
        """(file, class) of every Ray actor class of the scanned files -> its module."""
        if self._actors is not None:
            return self._actors
        actors: dict[tuple[str, str], Module] = {}
        for module in self.project.modules:
            if b"remote" not in module.source:
                continue
            named = {found.decode() for found in _ACTOR_CALL.findall(module.source)}
            tree = module.full().tree
            assert tree is not None  # full() parsed it
            for stmt in tree.body:  # the classes a wrapper's ``cls`` names: module level
                if isinstance(stmt, ast.ClassDef) and any(
                    _is_actor_decorator(node) for node in stmt.decorator_list
                ):
                    actors[(module.real, stmt.name)] = module
            for cls in named:
                found = self.project.class_named(module, cls)
                if found is not None:
                    actors[(found[0].real, found[1])] = found[0]
        self._actors = actors
        return actors
