"""Accumulators on ``self``: dicts of lists keyed by a mode, and keys passed to helpers.

Trainers built on Hugging Face's ``Trainer`` keep their metrics in an attribute holding
one dict of lists per mode, written by many methods and averaged by the ``log`` override::

    self._metrics = {"train": defaultdict(list), "eval": defaultdict(list)}
    self._metrics[mode]["kl"].append(kl)            # any method of the class
    self._metrics[mode]["num_tokens"] = [n]          # replaced, not appended
    for key, val in self._metrics[mode].items():     # in ``log``: every key written
        metrics[key] = sum(val) / len(val)

The inner dicts are followed as one dict, the synthetic holder ``self._metrics[]``: the
keys every method writes under any index (the mode is not known statically, so the keys
are the union over the modes). A read of ``self._metrics[<anything>]`` holds them.

A key written from a parameter of a helper method (``def _log_metric(self, name, v):
self._pending[name].append(v)``) is the string each call of that method in the class
passes (``self._log_metric("accuracy", a)``), written at the call. When the method is also
handed out as a value (``kwargs["log_metric"] = self._log_metric``, a callback other code
calls), the key stays a hole at the write: it credits no row and is reported there.

Only :mod:`ast` and the source text are read; nothing is imported or run.
"""

from __future__ import annotations

import ast
import bisect
import re
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Final, TypeAlias, TypeVar

from .syntax import bind, walk
from .syntax import params as parameters
from .values import DictVal, Key, Shape

if TYPE_CHECKING:
    from .sources import Module
    from .values import Where

V = TypeVar("V")

__all__ = [
    "NESTED",
    "caller_keys",
    "dict_holder",
    "handed_out",
    "narrowed",
    "nested_holder",
    "read_tags",
    "self_call_index",
    "write_indexes",
    "write_lines",
    "write_pattern",
]

NESTED: Final = "[]"
"""Suffix of the synthetic holder of a dict's inner dicts (``self._metrics[]``)."""

_FuncDef: TypeAlias = ast.FunctionDef | ast.AsyncFunctionDef


def dict_holder(node: ast.expr) -> str | None:
    """The name a dict is followed under: a variable, or ``self.metrics`` (an attribute)."""
    if isinstance(node, ast.Name):
        return node.id
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    ):
        return f"self.{node.attr}"
    return nested_holder(node)  # ``self.m[mode]``: the inner dicts as one (``self.m[]``)


def nested_holder(node: ast.expr) -> str | None:
    """``self.metrics[<index>]`` -> ``self.metrics[]``; anything else ``None``."""
    if not isinstance(node, ast.Subscript):
        return None
    held = node.value
    if (
        isinstance(held, ast.Attribute)
        and isinstance(held.value, ast.Name)
        and held.value.id == "self"
        and not isinstance(node.slice, ast.Slice)
    ):
        return f"self.{held.attr}{NESTED}"
    return None


def write_pattern(attr: str) -> re.Pattern[bytes]:
    """The text of a write into ``self.<attr>`` or, for ``attr[]``, into its inner dicts.

    A regular expression over the source finds the methods to analyse without walking
    every method's tree: ``self.m[k] = v``, ``self.m[k].append(v)``, ``self.m = ...``,
    ``self.m |= ...``, ``self.m.update(``, ``with Timer("x", self.m):``; for ``m[]`` the
    same one index deeper.
    """
    nested = attr.endswith(NESTED)
    name = attr[: -len(NESTED)] if nested else attr
    index = rb"\s*\[[^\]\n]*\]"
    head = rb"self\.%s" % re.escape(name.encode()) + (index if nested else b"")
    return re.compile(
        head + rb"\s*(?:\[[^\]\n]*\]\s*(?:=(?!=)|\.\s*(?:append|extend|add)\b)"
        rb"|=(?!=)|\|=|\.(?:update|setdefault)\s*\("
        rb"|(?P<handed>\)\s*[:,]))"  # ``with Timer("gen", self.m):`` (see .timers)
    )


def write_lines(attr: str, source: bytes) -> list[int]:
    """The lines of ``source`` that may write into ``self.<attr>`` (:func:`write_pattern`);
    an attribute handed to a call counts on a ``with`` line only (a timer filling it)."""
    starts: list[int] = []
    line, position = 1, 0
    for match in write_pattern(attr).finditer(source):
        line += source.count(b"\n", position, match.start())
        position = match.start()
        if match.lastgroup == "handed":
            begin = source.rfind(b"\n", 0, position) + 1
            if not source[begin:position].lstrip().startswith((b"with ", b"async with ")):
                continue
        starts.append(line)
    return starts


def caller_keys(
    module: Module,
    cls: str,
    method: _FuncDef,
    value: DictVal,
    parts: Callable[[ast.expr], Sequence[Shape]],
) -> DictVal:
    """``value`` (what ``method`` writes into an attribute) with keys that are a parameter
    filled by the strings each call ``self.<method>(...)`` in the class passes there.

    A key stays a hole where it is written when no call passes it, when the method is
    handed out as a value (a callback), or when a call's argument is not a known string.
    ``parts`` gives the strings an argument may be (the scanner's key expressions).
    """
    own = set(parameters(method))
    params = {
        part.param
        for key in value.keys
        if len(key.shape) == 1
        for part in key.shape
        if not isinstance(part, str) and part.param in own
    }
    if not params:
        return value
    info = module.classes.get(cls)
    called = re.compile(rb"\bself\.%s\s*\(" % re.escape(method.name.encode()))
    if info is None or not called.search(module.source) or handed_out(module.source, method.name):
        return value  # no call passes it (a text search first: walking every method costs)
    calls = list(_calls_of(info.methods.values(), method.name))
    keys: list[Key] = []
    for key in value.keys:
        part = key.shape[0] if len(key.shape) == 1 else None
        if part is None or isinstance(part, str) or part.param not in params:
            keys.append(key)
            continue
        for call in calls:
            argument = bind(call, method, method=True).get(part.param)
            if argument is None:
                keys.append(key)  # left at its default, or passed by ``*``/``**``
                continue
            where = module.where(argument)
            keys.extend(Key(shape, where) for shape in parts(argument))
    return DictVal(tuple(dict.fromkeys(keys)), value.unresolved, value.spreads)


def _calls_of(methods: Iterable[_FuncDef], name: str) -> Iterator[ast.Call]:
    """Calls ``self.<name>(...)`` in ``methods``."""
    for func in methods:
        for node in walk(func):
            if isinstance(node, ast.Call) and _self_call(node) == name:
                yield node


def self_call_index(
    methods: Iterable[_FuncDef],
) -> dict[str, list[tuple[_FuncDef, ast.Call]]]:
    """Every ``self.<name>(...)`` in ``methods``, by ``name``, each with the method making
    it: one walk of a class for all its methods' callers."""
    index: dict[str, list[tuple[_FuncDef, ast.Call]]] = {}
    for func in methods:
        for node in walk(func):
            if isinstance(node, ast.Call) and (name := _self_call(node)) is not None:
                index.setdefault(name, []).append((func, node))
    return index


def _self_call(node: ast.Call) -> str | None:
    """The ``<name>`` of a call ``self.<name>(...)``, else ``None``."""
    if (
        isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "self"
    ):
        return node.func.attr
    return None


def handed_out(source: bytes, name: str) -> bool:
    """``self.<name>`` read as a value, not called: other code may call it with any key."""
    for found in re.finditer(rb"\bself\.%s\b" % re.escape(name.encode()), source):
        rest = source[found.end() : found.end() + 64].lstrip(b" \t")
        if rest.startswith(b"(") or (rest.startswith(b"=") and not rest.startswith(b"==")):
            continue  # called, or assigned
        return True
    return False


# --- the mode a key is written under --------------------------------------------------

_INDEXES: Final[weakref.WeakKeyDictionary[Module, dict[str, dict[Where, str]]]] = (
    weakref.WeakKeyDictionary()
)


def write_indexes(module: Module, cls: str, attr: str) -> dict[Where, str]:
    """Where a key of ``self.<attr>[<index>][<key>]`` is written under a known index -> it.

    The index is known when it is a string (``self.m["train"]["step_time"]``) or a
    variable an enclosing ``if mode == "train":`` fixes. Keys written under a variable
    index (``self.m[mode][k]``) are absent: any mode may hold them.
    """
    per_module = _INDEXES.setdefault(module, {})
    slot = f"{cls}.{attr}"
    if slot in per_module:
        return per_module[slot]
    found: dict[Where, str] = {}
    info = module.classes.get(cls)
    if info is not None and attr.endswith(NESTED):
        name = attr[: -len(NESTED)]
        lines = _lines(module.source, write_pattern(attr))
        for method in info.methods.values():
            if _spans(method, lines):
                fixed = _constants(
                    module, info.methods.values(), method, _index_names(method, name)
                )
                _indexes(module, method.body, fixed, name=name, found=found, lines=lines)
    per_module[slot] = found
    return found


def _index_names(method: _FuncDef, name: str) -> set[str]:
    """The variables ``method`` indexes ``self.<name>`` with (``mode`` of ``self.m[mode][k]``)."""
    return {
        node.slice.id
        for node in walk(method)
        if isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Name)
        and nested_holder(node) == f"self.{name}{NESTED}"
    }


def _constants(
    module: Module, methods: Iterable[_FuncDef], method: _FuncDef, names: set[str]
) -> dict[str, str]:
    """Which of ``names`` hold one string throughout ``method``: a local only ever assigned
    that string (``mode = "train"``), or a parameter never rebound that every call
    ``self.<method>(...)`` of the class passes that string (``mode="train"``), the method
    never handed out as a value. A key written under such an index is written under that
    mode only: a trainer that records its metrics in training mode only logs no ``eval_``
    copy of them."""
    if not names:
        return {}
    stored: dict[str, set[str | None]] = {}
    constant: dict[int, str] = {}
    for node in walk(method):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            constant[id(node.targets[0])] = node.value.value
    for node in walk(method):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            stored.setdefault(node.id, set()).add(constant.get(id(node)))
        elif isinstance(node, ast.ExceptHandler) and node.name:
            stored.setdefault(node.name, set()).add(None)
        elif isinstance(node, ast.alias):
            stored.setdefault(node.asname or node.name.partition(".")[0], set()).add(None)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            for bound in node.names:
                stored.setdefault(bound, set()).add(None)
    fixed: dict[str, str] = {}
    own = parameters(method)
    for name in names:
        held = stored.get(name)
        if held is not None:
            only = next(iter(held)) if len(held) == 1 else None
            if name not in own and only is not None:
                fixed[name] = only
        elif name in own:
            passed = _passed(module, methods, method, name)
            if passed is not None:
                fixed[name] = passed
    return fixed


def _passed(
    module: Module, methods: Iterable[_FuncDef], method: _FuncDef, param: str
) -> str | None:
    """The one string every call ``self.<method>(...)`` of the class passes for ``param``
    (``None``: no call, a call passing something else, or the method handed out)."""
    if handed_out(module.source, method.name):
        return None
    strings: set[object] = set()
    for call in _calls_of(methods, method.name):
        argument = bind(call, method, method=True).get(param)
        strings.add(argument.value if isinstance(argument, ast.Constant) else None)
        if len(strings) > 1:
            return None
    only = next(iter(strings), None)
    return only if isinstance(only, str) else None


def _lines(source: bytes, pattern: re.Pattern[bytes]) -> list[int]:
    """Sorted 1-based lines where ``pattern`` matches."""
    lines: list[int] = []
    line, position = 1, 0
    for match in pattern.finditer(source):
        line += source.count(b"\n", position, match.start())
        position = match.start()
        lines.append(line)
    return lines


def _spans(node: ast.stmt, lines: list[int]) -> bool:
    """``node``'s lines hold one of ``lines``."""
    index = bisect.bisect_left(lines, node.lineno)
    return index < len(lines) and lines[index] <= (node.end_lineno or node.lineno)


def _indexes(
    module: Module,
    body: list[ast.stmt],
    fixed: dict[str, str],
    *,
    name: str,
    found: dict[Where, str],
    lines: list[int],
) -> None:
    for stmt in body:
        if not _spans(stmt, lines):
            continue
        if isinstance(stmt, ast.If):
            inside = {**fixed, **_fixed_by(stmt.test, taken=True)}
            _indexes(module, stmt.body, inside, name=name, found=found, lines=lines)
            _indexes(module, stmt.orelse, fixed, name=name, found=found, lines=lines)
            continue
        blocks = [getattr(stmt, field, None) for field in ("body", "orelse", "finalbody")]
        blocks += [h.body for h in getattr(stmt, "handlers", ())]
        if any(isinstance(block, list) for block in blocks):
            for block in blocks:
                if isinstance(block, list):
                    _indexes(module, block, fixed, name=name, found=found, lines=lines)
            continue
        for node in walk(stmt):
            if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Subscript)):
                continue
            if nested_holder(node.value) != f"self.{name}{NESTED}":
                continue
            index = node.value.slice
            known = index.value if isinstance(index, ast.Constant) else None
            if isinstance(index, ast.Name):
                known = fixed.get(index.id)
            if isinstance(known, str):
                found[module.where(node.slice)] = known


def _fixed_by(test: ast.expr, *, taken: bool) -> dict[str, str]:
    """``mode == "eval"`` (alone, or in an ``and`` when the branch is taken): {mode: eval}."""
    tests = (
        test.values
        if taken and isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)
        else [test]
    )
    fixed: dict[str, str] = {}
    for item in tests:
        if (
            isinstance(item, ast.Compare)
            and len(item.ops) == 1
            and isinstance(item.ops[0], ast.Eq)
            and isinstance(item.left, ast.Name)
            and isinstance(item.comparators[0], ast.Constant)
            and isinstance(item.comparators[0].value, str)
        ):
            fixed[item.left.id] = item.comparators[0].value
    return fixed


def read_tags(
    node: ast.expr, value: DictVal, module: Module, cls: str
) -> dict[Key, tuple[str, str]]:
    """The keys a read ``self.m[mode]`` gets that only one mode holds: key -> (mode, it)."""
    if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Name):
        return {}
    holder = nested_holder(node)
    if holder is None:
        return {}
    indexes = write_indexes(module, cls, holder.removeprefix("self."))
    variable = node.slice.id
    return {key: (variable, indexes[key.where]) for key in value.keys if key.where in indexes}


def narrowed(
    env: dict[str, V], test: ast.expr, tags: Mapping[Key, tuple[str, str]], *, taken: bool
) -> dict[str, V]:
    """``env`` in a branch of ``if mode == "eval":``: dicts lose the keys read from
    ``self.m[mode]`` that only another mode holds (taken), or only that mode (not taken)."""
    fixed = _fixed_by(test, taken=True) if taken else _fixed_by(test, taken=False)
    if not fixed or not tags:
        return env
    result = dict(env)
    for name, value in env.items():
        if not isinstance(value, DictVal):
            continue
        kept = tuple(k for k in value.keys if not _excluded(tags.get(k), fixed, taken=taken))
        if len(kept) != len(value.keys):
            result[name] = DictVal(kept, value.unresolved, value.spreads)  # type: ignore[assignment]
    return result


def _excluded(tag: tuple[str, str] | None, fixed: Mapping[str, str], *, taken: bool) -> bool:
    if tag is None or tag[0] not in fixed:
        return False
    same = fixed[tag[0]] == tag[1]
    return not same if taken else same
