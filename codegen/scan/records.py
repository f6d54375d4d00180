"""Record classes: how ``Cls(...)`` of a dataclass, a ``NamedTuple``, an attrs or pydantic
model, or a class whose ``__init__`` stores its parameters on ``self`` fills its fields.

Only :mod:`ast` facts are read.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Final

from .syntax import walk

__all__ = ["UNREAD", "Record", "class_node", "dataclass_fields", "record_of"]


@dataclass(frozen=True, slots=True)
class Record:
    """How a record class's constructor fills its fields."""

    positional: tuple[str, ...]
    """The field each positional argument fills (``""``: none); empty when unknown."""
    keywords: dict[str, str]
    """Keyword argument -> the field it fills."""


_RECORD_DECORATORS = frozenset({"dataclass", "define", "frozen", "mutable", "attrs"})
_RECORD_BASES = frozenset({"NamedTuple", "BaseModel", "Struct"})


def _last_name(node: ast.expr) -> str:
    """``dataclasses.dataclass(frozen=True)`` -> ``dataclass``."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


UNREAD: Final = Record((), {})
"""A class whose constructor has not been read yet (see ``ObjectFlow._record``)."""


def class_node(tree: ast.Module | None, name: str) -> ast.ClassDef | None:
    """The module-level class ``name`` (also under ``if``/``try``) of ``tree``."""
    body = list(tree.body) if tree is not None else []
    while body:
        stmt = body.pop(0)
        if isinstance(stmt, ast.ClassDef) and stmt.name == name:
            return stmt
        if isinstance(stmt, ast.If | ast.Try):
            body.extend(stmt.body)
    return None


def record_of(node: ast.ClassDef) -> Record | None:
    """How ``Cls(...)`` fills the fields of the class ``node``, or ``None`` (not a record)."""
    bases = [_last_name(base) for base in node.bases]
    if any(_last_name(d) in _RECORD_DECORATORS for d in node.decorator_list) or any(
        base in _RECORD_BASES for base in bases
    ):
        names: list[str] = []
        held: list[str] = []
        by_position = True
        for item in node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                annotation = _words(item.annotation)
                if "classvar" in annotation:
                    continue  # a class attribute, no field
                if "kw_only" in annotation:
                    by_position = False  # the fields after ``_: KW_ONLY`` take keywords only
                    continue
                names += [item.target.id] if by_position else []
                held += [item.target.id] if _may_hold_dict(item.annotation) else []
        keyword_only = any(
            isinstance(d, ast.Call) and any(k.arg == "kw_only" for k in d.keywords)
            for d in node.decorator_list
        )
        own = all(base in _RECORD_BASES or base == "object" for base in bases)
        positional = (
            tuple(n if n in held else "" for n in names) if own and not keyword_only else ()
        )
        return Record(positional, {name: name for name in held}) if held else None
    return _stored_by_init(node)


def dataclass_fields(node: ast.ClassDef) -> list[ast.Name] | None:
    """The fields ``dataclasses.asdict`` gives keys of, in order, for a ``@dataclass`` class
    ``node`` (``ClassVar`` and ``KW_ONLY`` markers left out); ``None`` for another class.
    Fields a base class declares are not read: such a class gives ``None`` too."""
    if not any(_last_name(d) == "dataclass" for d in node.decorator_list) or node.bases:
        return None
    fields: list[ast.Name] = []
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            words = _words(item.annotation)
            if "classvar" not in words and "kw_only" not in words:
                fields.append(item.target)
    return fields


def _may_hold_dict(annotation: ast.expr | None) -> bool:
    """A field or parameter annotated so that it may hold a dict of metrics (or unannotated):
    a field typed ``Tensor`` or ``int`` never does, and is not followed."""
    if annotation is None:
        return True
    text = _words(annotation)
    return any(word in text for word in _DICT_WORDS)


def _words(annotation: ast.expr) -> str:
    """The names and strings of an annotation, lower case (``optional dict str float``)."""
    words = []
    for node in walk(annotation):
        if isinstance(node, ast.Name):
            words.append(node.id)
        elif isinstance(node, ast.Attribute):
            words.append(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            words.append(node.value)  # a string annotation: its text holds the names
    return " ".join(words).lower()


_DICT_WORDS: Final = ("dict", "mapping", "any", "object", "metrics")
"""Words of an annotation that may name a dict (``dict[str, float]``, ``Mapping``, ``Any``,
a ``TypedDict`` subclass named ``...Metrics``)."""


def _stored_by_init(node: ast.ClassDef) -> Record | None:
    """A class whose ``__init__`` stores parameters as they are (``self.metrics = metrics``)."""
    init = next(
        (i for i in node.body if isinstance(i, ast.FunctionDef) and i.name == "__init__"), None
    )
    if init is None:
        return None
    stored: dict[str, str] = {}
    annotated = {a.arg: a.annotation for a in (*init.args.posonlyargs, *init.args.args)}
    for stmt in init.body:
        if (
            isinstance(stmt, ast.Assign | ast.AnnAssign)
            and isinstance(stmt.value, ast.Name)
            and (target := stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target)
            and isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
            and _may_hold_dict(annotated.get(stmt.value.id))
        ):
            stored[stmt.value.id] = target.attr
    if not stored:
        return None
    args = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:]
    return Record(tuple(stored.get(arg, "") for arg in args), stored)
