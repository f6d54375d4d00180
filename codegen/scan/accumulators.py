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
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Final, TypeAlias

if TYPE_CHECKING:
    from .extract import DictVal, Key, Module, Project

__all__ = ["NESTED", "caller_keys", "nested_holder", "write_pattern"]

NESTED: Final = "[]"
"""Suffix of the synthetic holder of a dict's inner dicts (``self._metrics[]``)."""

_FuncDef: TypeAlias = ast.FunctionDef | ast.AsyncFunctionDef


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
    ``self.m |= ...``, ``self.m.update(``; for ``m[]`` the same one index deeper.
    """
    nested = attr.endswith(NESTED)
    name = attr[: -len(NESTED)] if nested else attr
    index = rb"\s*\[[^\]\n]*\]"
    head = rb"self\.%s" % re.escape(name.encode()) + (index if nested else b"")
    return re.compile(
        head + rb"\s*(?:\[[^\]\n]*\]\s*(?:=(?!=)|\.\s*(?:append|extend|add)\b)"
        rb"|=(?!=)|\|=|\.(?:update|setdefault)\s*\()"
    )


def caller_keys(
    project: Project, module: Module, cls: str, method: _FuncDef, value: DictVal
) -> DictVal:
    """``value`` (what ``method`` writes into an attribute) with keys that are a parameter
    filled by the strings each call ``self.<method>(...)`` in the class passes there.

    A key stays a hole where it is written when no call passes it, when the method is
    handed out as a value (a callback), or when a call's argument is not a known string.
    """
    from .extract import DictVal, Key, _bind, _params, _Scanner  # noqa: PLC0415 - import cycle

    own = set(_params(method))
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
    calls = list(_calls_of(info.methods.values(), method.name)) if info is not None else []
    if not calls or _handed_out(module.source, method.name):
        return value
    scanner = _Scanner(project, module, [], cls=cls)
    keys: list[Key] = []
    for key in value.keys:
        part = key.shape[0] if len(key.shape) == 1 else None
        if part is None or isinstance(part, str) or part.param not in params:
            keys.append(key)
            continue
        for call in calls:
            argument = _bind(call, method, method=True).get(part.param)
            if argument is None:
                keys.append(key)  # left at its default, or passed by ``*``/``**``
                continue
            where = module.where(argument)
            keys.extend(Key(shape, where) for shape in scanner._part(argument, {}, True))
    return DictVal(tuple(dict.fromkeys(keys)), value.unresolved, value.spreads)


def _calls_of(methods: Iterable[_FuncDef], name: str) -> Iterator[ast.Call]:
    """Calls ``self.<name>(...)`` in ``methods``."""
    for func in methods:
        for node in ast.walk(func):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == name
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "self"
            ):
                yield node


def _handed_out(source: bytes, name: str) -> bool:
    """``self.<name>`` read as a value, not called: other code may call it with any key."""
    for found in re.finditer(rb"\bself\.%s\b" % re.escape(name.encode()), source):
        rest = source[found.end() : found.end() + 64].lstrip(b" \t")
        if rest.startswith(b"(") or (rest.startswith(b"=") and not rest.startswith(b"==")):
            continue  # called, or assigned
        return True
    return False
