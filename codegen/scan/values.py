"""The values ``scan`` follows through source code: keys as text and holes, dicts of keys,
the parameters' keys their callers decide (spreads), strings and loops over keys.

Pure data and the operations on it (merging, rewriting every key by a template, filtering a
caller's keys into a parameter's): no syntax tree is read here.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from types import MappingProxyType
from typing import Final, TypeAlias

from .keyfilter import KeyTest

__all__ = [
    "CALL",
    "NON_SCALAR_VALUES",
    "SLOT",
    "DictVal",
    "Hole",
    "Key",
    "KeyList",
    "KeysOf",
    "Shape",
    "Spread",
    "StrVal",
    "Unresolved",
    "Where",
    "concat",
    "rewrite",
    "shape_text",
    "spread_into",
    "substitute",
    "union",
]


NON_SCALAR_VALUES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "Table": "table",
        "Image": "image",
        "Histogram": "histogram",
        "Video": "media",
        "Audio": "media",
        "Html": "media",
        "Object3D": "media",
        "Molecule": "media",
    }
)
"""The trackers' value classes (``wandb.Table``, ``trackio.Table``...) -> the catalog's
``value_type`` of a row logging one: a key whose value is built by ``<x>.<class>(...)``
gets it suggested."""


@dataclass(frozen=True, slots=True)
class Hole:
    """A part of a key the scanner cannot know: an f-string field or an unknown operand."""

    text: str
    """The expression's source text (``name`` of ``f"timing_s/{name}"``)."""
    param: str = ""
    """A parameter of the enclosing function: its callers' arguments fill the hole."""


Shape: TypeAlias = tuple[str | Hole, ...]
"""A key as literal text and holes, adjacent literals merged."""

SLOT: Final = Hole("\x00key")
"""In a template, where each key of a parameter's dict goes (``("train/", SLOT)``)."""

CALL: Final = "()"
"""In a :attr:`Spread.path`: the value is called (``loss_fn(inputs)``)."""


def shape_text(shape: Shape) -> str:
    """``timing_s/{name}`` as shown in messages."""
    return "".join(part if isinstance(part, str) else "{" + part.text + "}" for part in shape)


def concat(*shapes: Shape) -> Shape:
    parts: list[str | Hole] = []
    for shape in shapes:
        for part in shape:
            if isinstance(part, str):
                if not part:
                    continue
                if parts and isinstance(parts[-1], str):
                    parts[-1] += part
                    continue
            parts.append(part)
    return tuple(parts)


@dataclass(frozen=True, slots=True, order=True)
class Where:
    """A place in a source file: path as shown, 1-based line and column (characters)."""

    path: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


@dataclass(frozen=True, slots=True)
class Key:
    """One key a dict holds (or may hold), where it is written."""

    shape: Shape
    where: Where
    why: str = ""
    """For a key with holes from a dict the scanner cannot follow: what that dict is."""
    value: str = ""
    """The constructor of a value that is not a number, written with the key
    (``wandb.Table``: see :data:`NON_SCALAR_VALUES`)."""


@dataclass(frozen=True, slots=True)
class Unresolved:
    """Something logged that the scanner cannot follow: what it is, and where."""

    what: str
    """``a dict built by a call to `reduce_metrics(...)```: reads after "cannot resolve"."""
    where: Where


@dataclass(frozen=True, slots=True)
class Spread:
    """Every key of a parameter's dict, each rewritten by ``template`` (the callers decide)."""

    param: str
    template: Shape
    """The key as written around :data:`SLOT` (``("train/", SLOT)`` for ``"train/%s" % k``)."""
    keep: tuple[tuple[KeyTest, Shape], ...] = ()
    """Filters each key of the parameter passes first: a test of the key as rewritten by
    the shape (``out[k] = v`` only when ``not k.startswith("debug/")``)."""
    path: tuple[str, ...] = ()
    """Where the dict is, from the parameter: empty for the parameter itself; ``CALL`` then
    ``metrics`` for ``param(...).metrics`` (the parameter a callable, its result an object)."""
    renames: tuple[tuple[KeyTest, Shape], ...] = ()
    """Rewrites each key passes after ``keep`` and before ``template``, in order: the key
    the test's :attr:`~codegen.scan.keyfilter.KeyTest.key` makes of the key as rewritten by
    the shape (``out[k.rsplit("@", 1)[0]] = v``, ``{untag(k): v for k, v in d.items()}``)."""


@dataclass(frozen=True, slots=True)
class DictVal:
    """What a dict expression holds: keys, parts that could not be followed, parameters' keys."""

    keys: tuple[Key, ...] = ()
    unresolved: tuple[Unresolved, ...] = ()
    spreads: tuple[Spread, ...] = ()
    """Keys of a parameter's dict (the function's callers pass them), rewritten."""
    inner: tuple[tuple[str, DictVal], ...] = ()
    """The dicts held under literal keys (``d["fipo"] = {...}``), by key: what a later
    ``d["fipo"].items()`` loops over. Only where a dict is followed as a whole; a rewrite of
    the keys drops them (the inner dicts are not the rewritten keys')."""

    def empty(self) -> bool:
        """Holds nothing at all."""
        return not (self.keys or self.unresolved or self.spreads)

    def merge(self, other: DictVal) -> DictVal:
        """Both dicts' keys, unresolved parts and spreads (each once)."""
        if self.empty() and not self.inner:
            return other
        if other.empty() and not other.inner:
            return self
        return DictVal(
            tuple(dict.fromkeys(self.keys + other.keys)),
            tuple(dict.fromkeys(self.unresolved + other.unresolved)),
            tuple(dict.fromkeys(self.spreads + other.spreads)),
            _inner_union((self, other)),
        )

    def nested(self, key: str) -> DictVal | None:
        """The dict held under the literal ``key`` (``None``: none is known)."""
        for name, value in self.inner:
            if name == key:
                return value
        return None

    def holding(self, key: str, value: DictVal) -> DictVal:
        """This dict with ``value`` under ``key``: a later write replaces an earlier one
        (``d["clip"] = {...}`` in one branch and another: the branches' join merges them)."""
        kept = tuple((name, held) for name, held in self.inner if name != key)
        return dataclasses.replace(self, inner=(*kept, (key, value)))


def union(values: Iterable[DictVal]) -> DictVal:
    """:meth:`DictVal.merge` of all ``values`` in one pass: linear in what they hold, where
    merging them one by one copies the growing union each time (a dict literal of 3,000
    keys, a class of 1,000 methods writing one attribute)."""
    parts = [value for value in values if not value.empty() or value.inner]
    if len(parts) <= 1:
        return parts[0] if parts else DictVal()
    return DictVal(
        tuple(dict.fromkeys(chain.from_iterable(v.keys for v in parts))),
        tuple(dict.fromkeys(chain.from_iterable(v.unresolved for v in parts))),
        tuple(dict.fromkeys(chain.from_iterable(v.spreads for v in parts))),
        _inner_union(parts),
    )


def _inner_union(parts: Sequence[DictVal]) -> tuple[tuple[str, DictVal], ...]:
    """The inner dicts of ``parts``, those under one key merged (in first-seen order)."""
    if not any(part.inner for part in parts):
        return ()
    held: dict[str, list[DictVal]] = {}
    for part in parts:
        for name, value in part.inner:
            held.setdefault(name, []).append(value)
    return tuple((name, union(values)) for name, values in held.items())


def substitute(shape: Shape, inner: Shape) -> Shape:
    """``shape`` with :data:`SLOT` replaced by ``inner`` (a key, or another template)."""
    if SLOT not in shape:
        return shape
    parts: list[Shape] = [inner if part is SLOT or part == SLOT else (part,) for part in shape]
    return concat(*parts)


_IDENTITY: Final = ((SLOT,), ("", SLOT))


def rewrite(value: DictVal, template: Shape) -> DictVal:
    """Every key of ``value`` rewritten by ``template`` (``train/`` + key); spreads composed."""
    if template in _IDENTITY:
        return value  # no prefix (``key-prefix = ""``): n keys not rebuilt per call
    keys = tuple(Key(substitute(template, k.shape), k.where, k.why, k.value) for k in value.keys)
    spreads = tuple(
        Spread(s.param, substitute(template, s.template), s.keep, s.path, s.renames)
        for s in value.spreads
    )
    return DictVal(keys, value.unresolved, spreads)


def _test_key(keep: Sequence[tuple[KeyTest, Shape]], shape: Shape) -> bool | None:
    """Whether a key passes every filter: ``None`` when one of them cannot tell."""
    answer: bool | None = True
    for test, template in keep:
        parts = [p if isinstance(p, str) else None for p in substitute(template, shape)]
        decided = test.decide_shape(parts)
        if decided is False:
            return False
        if decided is None:
            answer = None
    return answer


_ANY_KEY: Final = Hole("key")
"""A key of a dict scan cannot follow, in the shape a template gives it."""


def _shaped(spread: Spread, value: DictVal) -> DictVal:
    """A caller's dict scan cannot follow, handed to a parameter whose keys are rewritten
    with literal text (``f"eval/{k}"``): a key of that shape with a hole, unresolved where
    the dict enters (``eval/{key}``, "keys of a dict read from `result.data`"), instead of
    losing the shape. It credits no row."""
    if not value.unresolved or not any(isinstance(p, str) and p for p in spread.template):
        return value
    holed = tuple(Key((_ANY_KEY,), found.where, found.what) for found in value.unresolved)
    return DictVal(value.keys + holed, (), value.spreads)


def spread_into(spread: Spread, value: DictVal) -> DictVal:
    """The keys ``value`` (a caller's dict) gives ``spread``: filtered, then rewritten.

    A key a filter cannot decide is unresolved where it is written (a key with a hole is
    kept unless every tried value of the hole is dropped; it stays unresolved anyway).
    """
    value = _shaped(spread, value)
    if not spread.keep and not spread.renames:
        return rewrite(value, spread.template)
    keys: list[Key] = []
    unresolved = list(value.unresolved)
    for key in value.keys if spread.keep else ():
        decided = _test_key(spread.keep, key.shape)
        holed = any(isinstance(part, Hole) for part in key.shape)
        if decided is False:
            continue
        if decided is None and not holed:
            test = spread.keep[0][0]
            what = (
                f"the key '{shape_text(key.shape)}' passes a filter in `{test.where}` "
                "whose test scan cannot evaluate for it"
            )
            unresolved.append(Unresolved(what, key.where))
            continue
        keys.append(key)
    if not spread.keep:
        keys = list(value.keys)
    renamed = _renamed(spread.renames, keys, unresolved)
    spreads = tuple(_composed(s, spread) for s in value.spreads)
    kept = DictVal(tuple(renamed), tuple(dict.fromkeys(unresolved)), spreads)
    return rewrite(kept, spread.template)


def _composed(inner: Spread, outer: Spread) -> Spread:
    """A caller's spread ``inner`` (its own parameter's keys) as ``outer`` filters and
    renames it; ``outer``'s template is added by :func:`rewrite` after."""
    # A filter after the caller's renames is tested before them: the model keeps one order
    # (keep, renames, template), and a filter testing the tag a rename drops is rare.
    keep = inner.keep + tuple((test, substitute(t, inner.template)) for test, t in outer.keep)
    if not outer.renames:
        return Spread(inner.param, inner.template, keep, inner.path, inner.renames)
    (test, first), rest = outer.renames[0], outer.renames[1:]
    renames = (*inner.renames, (test, substitute(first, inner.template)), *rest)
    return Spread(inner.param, (SLOT,), keep, inner.path, renames)


def _renamed(
    renames: Sequence[tuple[KeyTest, Shape]], keys: Sequence[Key], unresolved: list[Unresolved]
) -> list[Key]:
    """``keys`` each rewritten by ``renames`` in order; a key one cannot rewrite is
    appended to ``unresolved`` where it is written (never kept as it was)."""
    if not renames:
        return list(keys)
    out: list[Key] = []
    for key in keys:
        shape: Shape | None = key.shape
        for test, template in renames:
            shape = _rename(test, substitute(template, shape)) if shape is not None else None
        if shape is None:
            test = renames[0][0]
            what = (
                f"the key '{shape_text(key.shape)}' is rewritten in `{test.where}` "
                "in a way scan cannot evaluate for it"
            )
            unresolved.append(Unresolved(what, key.where))
            continue
        out.append(Key(shape, key.where, key.why, key.value))
    return out


def _rename(test: KeyTest, shape: Shape) -> Shape | None:
    """``shape`` as ``test`` renames it; ``None`` when unknown. A hole is taken to hold
    none of the text the rename looks for (as :mod:`.strmethods` takes it for ``replace``):
    it is evaluated as a mark no key spells, and stays a hole where the mark comes out."""
    holes = [part for part in shape if isinstance(part, Hole)]
    marks = [f"\x01{number}\x02" for number in range(len(holes))]
    holed = iter(marks)
    text = test.rename("".join(p if isinstance(p, str) else next(holed) for p in shape))
    if text is None or any(text.count(mark) != 1 for mark in marks):
        return None
    if not holes:
        return (text,)
    parts: list[Shape] = []
    last = 0
    for found in re.finditer("\x01(\\d+)\x02", text):
        parts.append((text[last : found.start()],))
        parts.append((holes[int(found.group(1))],))
        last = found.end()
    parts.append((text[last:],))
    return concat(*parts)


@dataclass(frozen=True, slots=True)
class StrVal:
    """A string (or a sequence of strings, for loops) with its possible values."""

    shapes: tuple[Shape, ...]
    at: tuple[Where, ...] = ()
    """Where each shape is written, when each is a literal of a module-level constant
    (``KEYS = ["loss/kl", ...]``): a key from it is reported at its own element, the line
    a reader fixes; empty otherwise (then a key is reported where it is written)."""


@dataclass(frozen=True, slots=True)
class KeysOf:
    """A loop variable over a dict's keys (``for k, v in metrics.items()``)."""

    source: DictVal
    name: str
    """The dict's expression text, for messages."""


@dataclass(frozen=True, slots=True)
class KeyList:
    """A collection of a dict's keys (``list(self.keys())``, ``sorted(d)``), ``nest`` deep:
    ``all_gather_object(out, keys)`` makes ``out`` a list of such lists (``nest`` 2)."""

    source: DictVal
    name: str
    nest: int = 1
