"""Hostile objects shared by the tee and JSONL tests: every dunder a formatter might call raises."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import strategies as st

__all__ = [
    "ArmedKey",
    "ClassRaises",
    "EqRaises",
    "FloatRaises",
    "IndexRaises",
    "ItemRaises",
    "ItemsRaises",
    "MappingRaises",
    "ReprRaises",
    "Unprintable",
    "armed_dict",
    "hostile_metrics",
    "hostile_values",
]


class Unprintable(Exception):  # noqa: N818 - it is raised, but its point is that it cannot be shown
    """An exception whose ``__str__`` and ``__repr__`` raise too."""

    def __str__(self) -> str:
        raise RuntimeError("__str__ of the exception raised")

    def __repr__(self) -> str:
        raise RuntimeError("__repr__ of the exception raised")


class ReprRaises:
    """Any object whose repr and str raise an unprintable exception."""

    def __repr__(self) -> str:
        raise Unprintable

    __str__ = __repr__


class FloatRaises(float):
    """A float whose conversion, repr and str raise."""

    def __float__(self) -> float:
        raise Unprintable

    def __repr__(self) -> str:
        raise Unprintable

    __str__ = __repr__


class IndexRaises(int):
    """An int whose ``__index__``, ``__float__``, ``__int__`` and repr raise."""

    def __index__(self) -> int:
        raise Unprintable

    __int__ = __index__

    def __float__(self) -> float:
        raise Unprintable

    def __repr__(self) -> str:
        raise Unprintable

    __str__ = __repr__


class ItemRaises:
    """A tensor-like object whose ``item()`` and ``tolist()`` raise."""

    shape = ()

    def item(self) -> float:
        raise Unprintable

    tolist = item

    def __repr__(self) -> str:
        raise Unprintable


class ArmedKey(str):
    """A str key whose hash, equality, str and repr raise once armed (after it is in a dict).

    A key whose hash raises from the start cannot enter a dict at all; this one
    turns on whoever looks at it after the dict was built.
    """

    armed = False

    def __hash__(self) -> int:
        if self.armed:
            raise Unprintable
        return str.__hash__(self)

    def __eq__(self, other: object) -> bool:
        if self.armed:
            raise Unprintable
        return str.__eq__(self, other)

    def __str__(self) -> str:
        if self.armed:
            raise Unprintable
        return str.__str__(self)

    def __repr__(self) -> str:
        if self.armed:
            raise Unprintable
        return str.__repr__(self)


def armed_dict(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    """A dict of ``pairs`` whose :class:`ArmedKey` keys are armed once inserted."""
    built: dict[Any, Any] = {}
    for key, value in pairs:
        built[key] = value
    for key in built:
        if isinstance(key, ArmedKey):
            key.armed = True
    return built


class EqRaises:
    """An object hashable only until compared (hash, eq and str raise)."""

    def __hash__(self) -> int:
        raise Unprintable

    def __eq__(self, other: object) -> bool:
        raise Unprintable

    def __str__(self) -> str:
        raise Unprintable

    __repr__ = __str__


class ClassRaises:
    """An object whose ``__class__`` lookup raises (``isinstance`` against it asks for it)."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        raise Unprintable

    def __repr__(self) -> str:
        raise Unprintable


class ItemsRaises(dict[str, Any]):
    """A mapping whose ``items()``, ``get`` and iteration raise."""

    def items(self) -> Any:
        raise Unprintable

    def get(self, *args: Any) -> Any:
        raise Unprintable

    def __iter__(self) -> Any:
        raise Unprintable

    def __len__(self) -> int:
        raise Unprintable


class MappingRaises(Mapping[str, Any]):
    """A mapping (not a dict) whose every method raises."""

    def __getitem__(self, key: str) -> Any:
        raise Unprintable

    def __iter__(self) -> Iterator[str]:
        raise Unprintable

    def __len__(self) -> int:
        raise Unprintable

    def items(self) -> Any:
        raise Unprintable

    def __repr__(self) -> str:
        raise Unprintable


def _self_referencing() -> dict[str, Any]:
    d: dict[str, Any] = {}
    d["a"] = d["b"] = d
    return d


_LEAVES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(),
    st.builds(pow, st.just(10), st.just(5000)),
    st.text(max_size=5),
    st.binary(max_size=5),
    st.none(),
    st.booleans(),
    st.complex_numbers(),
    st.builds(FloatRaises, st.floats(allow_nan=False)),
    st.builds(IndexRaises, st.integers()),
    st.builds(ReprRaises),
    st.builds(ItemRaises),
    st.builds(ClassRaises),
    st.builds(EqRaises),
    st.builds(_self_referencing),
    st.builds(MappingRaises),
    st.builds(ItemsRaises, a=st.floats()),
)
_KEYS = st.one_of(
    st.sampled_from(["loss", "reward", "global_valid_toks", "kl", "accuracy", "generation"]),
    st.text(max_size=5),
    st.integers(),
    st.none(),
    st.builds(ArmedKey, st.text(max_size=3)),
    st.tuples(st.integers()),
)

hostile_values = st.recursive(
    _LEAVES,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.tuples(children, children),
        st.lists(st.tuples(_KEYS, children), max_size=4).map(armed_dict),
    ),
    max_leaves=12,
)
"""Nested values holding the objects above, cycles, huge ints, NaN and bytes."""

hostile_metrics = st.lists(st.tuples(_KEYS, hostile_values), max_size=8).map(armed_dict)
"""A ``log_metrics`` dict: declared keys and odd ones, hostile values."""
