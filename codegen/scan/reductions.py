"""Reductions chosen when a key is recorded and applied when the tracker exports it.

A stats tracker often records a value with a *reduce type* and turns each recorded key
into the keys it exports only later, by that type::

    def stat(self, reduce=None, **values):          # reduce: Reduce.MEAN_MIN_MAX by default
        if reduce is None:
            reduce = Reduce.MEAN_MIN_MAX
        for key, value in values.items():
            self._tag(key, reduce)                  # self.kinds[key] = reduce
            self.stats[key].append(value)

    def export(self):
        out = {}
        for key in list(self.stats.keys()):
            out.update(self._reduce(key))
        return out

    def _reduce(self, key):
        kind = self.kinds.get(key, Reduce.SCALAR)
        result = {}
        if kind == Reduce.MEAN_MIN_MAX:
            result[key + "/mean"] = ...             # and "/".join([key, "min"]), f"{key}/max"
        elif kind == Reduce.SCALAR:
            result[key] = ...
        return result

An *exporter* is a method looping over the keys of a field of ``self`` and merging, for
each, what a per-key method returns. The keys that method writes, per branch on the key's
tag, are templates around the key; the tag each recording method gives is read from its
own code (a member written there, or its parameter: the call's argument, else the
parameter's default, ``None`` replaced in the body). Nothing is taken from names: a tag
that cannot be told (a variable, a member no branch tests) gives the default branch's
keys when the tag is read with a default, and otherwise no key.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .syntax import FuncDef, defaults, dotted, params, walk
from .values import SLOT, Shape, concat

__all__ = ["Exporter", "exporter_of", "tag_of"]


@dataclass(frozen=True, slots=True)
class Exporter:
    """What an exporter makes of each key recorded in :attr:`field`."""

    field: str
    """The field of ``self`` whose keys it loops over (``stats``)."""
    tags: str
    """The field holding each key's tag (``kinds``)."""
    templates: tuple[tuple[str, tuple[Shape, ...]], ...]
    """Per tag (the member's name, ``MEAN_MIN_MAX``), the keys exported around the key."""
    default: str | None
    """The tag of a key recorded with none (``kinds.get(key, Reduce.SCALAR)``)."""

    def exported(self, tag: str | None) -> tuple[Shape, ...]:
        """The templates for a key recorded with ``tag`` (``None``: not told)."""
        table = dict(self.templates)
        chosen = tag if tag in table else self.default
        return table.get(chosen, ()) if chosen is not None else ()


def _member(node: ast.expr | None) -> str | None:
    """``Reduce.MEAN`` -> ``MEAN`` (an enum member, by its own name)."""
    if isinstance(node, ast.Attribute) and dotted(node.value) is not None:
        return node.attr
    return None


def _self_field(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr if node.value.id == "self" else None
    return None


def _keys_of(node: ast.expr, local: dict[str, ast.expr]) -> str | None:
    """The field whose keys ``node`` lists: ``self.f``, ``self.f.keys()``, ``list(...)``,
    ``sorted(...)``, or a local variable assigned one of those."""
    for _ in range(4):
        if isinstance(node, ast.Name) and node.id in local:
            node = local[node.id]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
            if node.func.id not in {"list", "sorted", "tuple", "set"}:
                return None
            node = node.args[0]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "keys"
        ):
            node = node.func.value
        else:
            break
    return _self_field(node)


def _template(node: ast.expr, key: str) -> Shape | None:
    """A result key written around the key parameter: ``key``, ``key + "/x"``,
    ``f"{key}/x"``, ``"/".join([key, "x"])``; ``None`` for anything else."""
    if isinstance(node, ast.Name):
        return (SLOT,) if node.id == key else None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return (node.value,)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _template(node.left, key), _template(node.right, key)
        return None if left is None or right is None else concat(left, right)
    if isinstance(node, ast.JoinedStr):
        parts: Shape = ()
        for value in node.values:
            inner = value.value if isinstance(value, ast.FormattedValue) else value
            found = _template(inner, key)
            if found is None:
                return None
            parts = concat(parts, found)
        return parts
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "join"
        and isinstance(node.func.value, ast.Constant)
        and isinstance(node.func.value.value, str)
        and len(node.args) == 1
        and isinstance(node.args[0], ast.List | ast.Tuple)
    ):
        pieces = [_template(item, key) for item in node.args[0].elts]
        if any(piece is None for piece in pieces) or not pieces:
            return None
        joined: Shape = ()
        for index, piece in enumerate(pieces):
            joined = concat(joined, (node.func.value.value,)) if index else joined
            joined = concat(joined, piece or ())
        return joined
    return None


def _reducer(
    method: FuncDef,
) -> tuple[str, tuple[tuple[str, tuple[Shape, ...]], ...], str | None] | None:
    """A per-key method: (tags field, tag -> templates, default tag), or ``None``."""
    own = [name for name in params(method) if name != "self"]
    if not own:
        return None
    key = own[0]
    tag_var: str | None = None
    tags: str | None = None
    default: str | None = None
    for node in walk(method):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and node.value.func.attr == "get"
            and _self_field(node.value.func.value) is not None
            and node.value.args
            and isinstance(node.value.args[0], ast.Name)
            and node.value.args[0].id == key
        ):
            tag_var, tags = node.targets[0].id, _self_field(node.value.func.value)
            default = _member(node.value.args[1]) if len(node.value.args) > 1 else None
    if tag_var is None or tags is None:
        return None
    templates: dict[str, tuple[Shape, ...]] = {}
    for node in walk(method):
        if not isinstance(node, ast.If):
            continue
        test = node.test
        if not (
            isinstance(test, ast.Compare)
            and isinstance(test.left, ast.Name)
            and test.left.id == tag_var
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq | ast.Is)
        ):
            continue
        member = _member(test.comparators[0])
        written = []
        for stmt in node.body:
            for inner in walk(stmt):
                if isinstance(inner, ast.Assign) and len(inner.targets) == 1:
                    target = inner.targets[0]
                    if isinstance(target, ast.Subscript):
                        found = _template(target.slice, key)
                        if found is not None and SLOT in found:
                            written.append(found)
        if member is not None and written:
            templates[member] = tuple(dict.fromkeys(written))
    return (tags, tuple(templates.items()), default) if templates else None


def exporter_of(methods: dict[str, FuncDef], getter: FuncDef) -> Exporter | None:
    """How ``getter`` exports each key of a field (see the module's docstring), else
    ``None``."""
    local: dict[str, ast.expr] = {}
    for node in walk(getter):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            local.setdefault(node.targets[0].id, node.value)
    for node in walk(getter):
        if not isinstance(node, ast.For) or not isinstance(node.target, ast.Name):
            continue
        field = _keys_of(node.iter, local)
        if field is None:
            continue
        for inner in walk(node):
            if not (
                isinstance(inner, ast.Call)
                and isinstance(inner.func, ast.Attribute)
                and inner.func.attr == "update"
                and len(inner.args) == 1
                and isinstance(inner.args[0], ast.Call)
            ):
                continue
            call = inner.args[0]
            name = call.func.attr if isinstance(call.func, ast.Attribute) else None
            if (
                name in methods
                and isinstance(call.func, ast.Attribute)
                and _self_field(call.func) is not None
                and call.args
                and isinstance(call.args[0], ast.Name)
                and call.args[0].id == node.target.id
            ):
                found = _reducer(methods[name])
                if found is not None:
                    return Exporter(field, *found)
    return None


def _tag_param(method: FuncDef, tags: str, methods: dict[str, FuncDef]) -> ast.expr | None:
    """What ``method`` writes as a key's tag: into ``self.<tags>[...]`` or through a setter
    method writing its second parameter there."""
    for node in walk(method):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Subscript) and _self_field(target.value) == tags:
                return node.value
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and _self_field(node.func) is not None
            and node.func.attr in methods
            and node.func.attr != method.name
            and len(node.args) == 2
        ):
            setter = methods[node.func.attr]
            if _tag_param(setter, tags, {}) is not None:
                return node.args[1]
    return None


def tag_of(method: FuncDef, call: ast.Call, tags: str, methods: dict[str, FuncDef]) -> str | None:
    """The tag ``call`` of the recording ``method`` gives its keys (a member's name), or
    ``None`` when it cannot be told."""
    written = _tag_param(method, tags, methods)
    member = _member(written)
    if member is not None or not isinstance(written, ast.Name):
        return member
    name = written.id
    own = [p for p in params(method) if p != "self"]
    for keyword in call.keywords:
        if keyword.arg == name:
            return _member(keyword.value)
    if name in own and own.index(name) < len(call.args):
        return _member(call.args[own.index(name)])
    default = defaults(method).get(name)
    if isinstance(default, ast.Constant) and default.value is None:
        for node in walk(method):  # ``if reduce is None: reduce = Reduce.X``
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == name
            ):
                return _member(node.value)
        return None
    return _member(default)
