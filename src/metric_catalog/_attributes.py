"""Per-series attribute handling and key-family matching for the tee (no SDK import).

:class:`SeriesPoints` turns the attributes handed to a tee or ``record_metrics``
call into the attribute dict of one point: it drops undeclared keys and values
outside a row's declaration (one warning per cause), enforces the series'
cardinality budget (new attribute sets past it go to one overflow point with
``otel.metric.overflow="true"``, the OpenTelemetry SDK's convention), and merges
the process's identity labels outside the budget. Every dict it returns is
cached and reused, so a steady training loop pays a dict lookup per point.

:class:`KeyPatterns` matches logged keys against ``{placeholder}`` patterns,
indexed by their literal head and cached per key (bounded), so a family key
costs about what a plain key does after its first step. The patterns are
compiled and ranked by :mod:`metric_catalog.series_rules` (what a placeholder
captures, which row is most specific), the rules validation and live-check use.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Final

from metric_catalog import series_rules
from metric_catalog._warn import safe_repr, safe_text, type_name, warn_once
from metric_catalog.series_rules import Capture, CompiledPattern
from metric_catalog.vocabulary import (
    OVERFLOW_ATTRIBUTE,
    MetricAttribute,
    RecordedMetric,
    TeedMetric,
)

__all__ = [
    "KEY_CACHE_LIMIT",
    "RUNTIME_PREFIX_KEY_CACHE_LIMIT",
    "CompiledTemplate",
    "Derivation",
    "KeyPatterns",
    "SeriesPoints",
    "captures",
    "compile_template",
    "derivations",
    "series_limit",
]

KEY_CACHE_LIMIT: Final = 4096
"""Logged keys whose pattern match is remembered, per prefix (past it: matched each time)."""

RUNTIME_PREFIX_KEY_CACHE_LIMIT: Final = 256
"""The same, per run-time prefix (one matched by a prefix pattern, of which a process
may see as many as the caller invents, up to the group's prefix cache)."""

Attrs = dict[str, Any]
"""The attribute dict of one point (``None`` stands for no attributes)."""

_MISSING: Final = object()


def series_limit(row: TeedMetric | RecordedMetric) -> int:
    """The series' budget of attribute sets, overflow point included.

    The attribute-less set always holds one slot of it, so a series keeps at
    most this many points whatever it is handed.

    :func:`metric_catalog.series_rules.series_limit` of the row's
    ``cardinality_limit`` and its attributes' bounds (an enum's size, an open
    attribute's ``max_cardinality``).
    """
    return series_rules.series_limit(
        row.cardinality_limit,
        (
            series_rules.attribute_bound(len(a.values), a.max_cardinality, open_enum=a.open_enum)
            for a in row.attributes
        ),
    )


Derivation = tuple[str, str, dict[tuple[type, Any], Any], Any]
"""``(target, source, {(type, source value): value}, default)`` of one derived attribute."""


def derivations(attributes: tuple[MetricAttribute, ...]) -> tuple[Derivation, ...]:
    """The row's derived attributes as lookup tables, each after the attributes it reads.

    A source value is looked up with its type, so ``1`` and ``True`` (equal in
    Python) stay apart; ``default`` is ``None`` when an unmapped value leaves
    the attribute unset.
    """
    pending = [a for a in attributes if a.derived_from is not None]
    done = {a.name for a in attributes if a.derived_from is None}
    ordered: list[Derivation] = []
    while pending:
        ready = [a for a in pending if a.derived_from in done]
        if not ready:  # a source outside the row or a loop: the registry rejects both
            break
        for attribute in ready:
            table = {(type(key), key): value for key, value in attribute.derive_map}
            source = attribute.derived_from or ""
            ordered.append((attribute.name, source, table, attribute.derive_default))
            done.add(attribute.name)
            pending.remove(attribute)
    return tuple(ordered)


class SeriesPoints:
    """Attribute check, cardinality budget and identity merge of one series.

    ``attributes(attrs)`` returns the dict to record a point with (or ``None``
    for no attributes). Never raises for any input mapping.
    """

    __slots__ = (
        "_declared",
        "_derived",
        "_full",
        "_identity",
        "_lock",
        "_overflow",
        "_raw",
        "_raw_limit",
        "_required",
        "_seen_values",
        "_sets",
        "base",
        "limit",
        "name",
    )

    def __init__(self, row: TeedMetric | RecordedMetric, identity: Mapping[str, Any]) -> None:
        self.name = row.name
        self._declared: dict[str, MetricAttribute] = {a.name: a for a in row.attributes}
        self._derived = derivations(row.attributes)
        self.limit = series_limit(row)
        self._identity: Attrs = dict(identity)
        self.base: Attrs | None = dict(identity) or None
        """What a point without attributes is recorded with (the identity labels, or None)."""
        self._overflow: Attrs = {OVERFLOW_ATTRIBUTE: "true", **self._identity}
        # Checked attribute set (sorted items) -> the dict recorded; its size is the budget.
        self._sets: dict[tuple[tuple[str, Any], ...], Attrs | None] = {(): self.base}
        self._required: tuple[str, ...] = tuple(
            a.name for a in row.attributes if a.requirement == "required"
        )
        # Raw items as passed -> the dict recorded, so a repeated call skips the check.
        # With required attributes the empty set is checked once too, like any other.
        self._raw: dict[tuple[tuple[str, Any], ...], Attrs | None] = (
            {} if self._required else {(): self.base}
        )
        self._raw_limit = 2 * self.limit + 16
        self._full = False
        # Taken on the miss path only (a set not seen before), so admitting a set and
        # counting it against the budget is one step even when threads race.
        self._lock = threading.Lock()
        # The values counted against an attribute's budget: every value of an open
        # attribute, those an open enum does not list.
        self._seen_values: dict[str, set[Any]] = {
            a.name: set()
            for a in row.attributes
            if not a.closed_values and a.max_cardinality is not None
        }

    def attributes(self, attrs: Mapping[str, Any] | None) -> Attrs | None:
        """The point's attribute dict for ``attrs`` (checked, budgeted, identity merged)."""
        if not attrs:
            if not self._required:
                return self.base
            attrs = {}
        try:
            items = tuple(attrs.items())
            hit = self._raw.get(items, _MISSING)
        except TypeError:  # an unhashable value: check it, never cache it
            return self._resolve(tuple(attrs.items()))
        if hit is not _MISSING:
            return hit  # type: ignore[return-value]
        final = self._resolve(items)
        with self._lock:
            if len(self._raw) < self._raw_limit:
                self._raw[items] = final
        return final

    def _resolve(self, items: tuple[tuple[str, Any], ...]) -> Attrs | None:
        checked: Attrs = {}
        for raw_key, value in items:
            key = raw_key if type(raw_key) is str else safe_text(raw_key)
            if key is None:
                warn_once(
                    ("attribute-key-type", self.name, type_name(raw_key)),
                    f"an attribute key on {self.name} is a {type_name(raw_key)} "
                    f"({safe_repr(raw_key)}), not a str, so it is dropped from the point "
                    "(warned once per series and type)",
                    family="undeclared-attribute",
                )
                continue
            if key in checked:
                continue  # a captured value comes first and wins
            attribute = self._declared.get(key)
            if attribute is None:
                warn_once(
                    ("undeclared-attribute", self.name, key),
                    f"attribute {key!r} on {self.name} is not declared by its row, so it is "
                    "dropped from the point; declare it in the row's attributes or stop "
                    "passing it (warned once per series and attribute)",
                    family="undeclared-attribute",
                )
                continue
            if not attribute.accepts(value):
                allowed = (
                    f"one of {', '.join(map(repr, attribute.values))}"
                    if attribute.closed_values
                    else f"of type {attribute.type}"
                )
                warn_once(
                    ("attribute-value", self.name, key),
                    f"attribute {key!r} on {self.name} got {safe_repr(value)}, but the row allows "
                    f"values {allowed}; the attribute is dropped from the point (warned "
                    "once per series and attribute)",
                )
                continue
            checked[key] = value
        for target, source, table, default in self._derived:
            found = checked.get(source, _MISSING)
            if found is not _MISSING:
                derived = table.get((type(found), found), default)
                if derived is not None:
                    checked[target] = derived
        if self._required:
            self._check_required(checked)
        try:
            key_set = tuple(sorted(checked.items()))
        except TypeError:  # values of mixed types under one key cannot happen; be safe
            key_set = tuple(checked.items())
        known = self._sets.get(key_set, _MISSING)
        if known is not _MISSING:
            return known  # type: ignore[return-value]
        with self._lock:  # double-checked: another thread may have admitted it meanwhile
            known = self._sets.get(key_set, _MISSING)
            if known is not _MISSING:
                return known  # type: ignore[return-value]
            final, warning = self._admit(key_set, checked)
        if warning is not None:
            warn_once(*warning)
        return final

    def _admit(
        self, key_set: tuple[tuple[str, Any], ...], checked: Attrs
    ) -> tuple[Attrs | None, tuple[tuple[str, ...], str] | None]:
        """Admit a new set within the budgets, or send it to overflow. Caller holds _lock.

        Returns the dict to record with and the warning to emit (after the lock is released).
        """
        if len(self._sets) >= self.limit - 1:
            if self._full:
                return self._overflow, None
            self._full = True
            return self._overflow, (
                ("cardinality", self.name),
                f"{self.name} reached its budget of {self.limit} attribute sets (overflow "
                f"point included); new sets are recorded on one point with "
                f"{OVERFLOW_ATTRIBUTE}='true' (warned once per series)",
            )
        for key, seen in self._seen_values.items():
            value = checked.get(key, _MISSING)
            if value is _MISSING or value in seen or value in self._declared[key].values:
                continue
            budget = self._declared[key].max_cardinality or 0
            if len(seen) >= budget:
                return self._overflow, (
                    ("attribute-budget", self.name, key),
                    f"attribute {key!r} on {self.name} reached its max_cardinality of "
                    f"{budget} values; points with new values go to the overflow point "
                    f"({OVERFLOW_ATTRIBUTE}='true') (warned once per series and attribute)",
                )
        for key, seen in self._seen_values.items():
            if key in checked and checked[key] not in self._declared[key].values:
                seen.add(checked[key])
        final: Attrs | None = {**checked, **self._identity} or None
        self._sets[key_set] = final
        return final, None

    def _check_required(self, present: Mapping[str, Any]) -> None:
        """Warn once per series and attribute when a required attribute is absent.

        The point is still recorded (a series without the attribute beats no
        series), but a dashboard summing by it would lose the point, so say so.
        Runs for new attribute sets only: the result of a set is cached.
        """
        for name in self._required:
            if name not in present:
                warn_once(
                    ("required-attribute", self.name, name),
                    f"{self.name} was recorded without its required attribute {name!r}; "
                    "the point is kept without it, so queries grouping by it miss the "
                    "point; pass it (or capture it from the logger key) on every point "
                    "(warned once per series and attribute)",
                )

    @property
    def attribute_sets(self) -> int:
        """Distinct attribute sets admitted so far (the empty set included)."""
        return len(self._sets)


CompiledTemplate = CompiledPattern
"""A compiled ``{placeholder}`` template (the series rules' :class:`CompiledPattern`)."""


def captures(attributes: Mapping[str, MetricAttribute]) -> dict[str, Capture]:
    """What a placeholder of each attribute captures (see :func:`series_rules.capture`)."""
    return {
        name: series_rules.capture(a.type, a.closed_values, spans=a.spans_segments)
        for name, a in attributes.items()
    }


def compile_template(template: str, attributes: Mapping[str, MetricAttribute]) -> CompiledPattern:
    """Compile a validated template with the series rules (:func:`series_rules.compile_pattern`):
    an enum placeholder matches only its values, an int one an optionally signed
    integer, an open string one path segment (several when it spans segments)."""
    return series_rules.compile_pattern(template, captures(attributes))


Hit = tuple[Any, TeedMetric, SeriesPoints, "Attrs | None", "Attrs | None"]
"""``(recorder, row, points, base attributes, captured attributes)`` of one matched series."""


class KeyPatterns:
    """The key patterns of one prefix, indexed by literal head, with a bounded match cache."""

    __slots__ = ("_by_head", "_head_lengths", "cache", "cache_limit")

    def __init__(self, cache_limit: int = KEY_CACHE_LIMIT) -> None:
        self.cache_limit = cache_limit
        """How many logged keys :attr:`cache` remembers at most."""
        # head length -> head -> (pattern, target, captured prefix values, rank)
        self._by_head: dict[int, dict[str, list[tuple[CompiledTemplate, Any, Any, Any]]]] = {}
        self._head_lengths: tuple[int, ...] = ()
        self.cache: dict[str, tuple[Hit, ...]] = {}
        """Logged key -> the series it feeds; read directly by the tee's loops."""

    def add(
        self,
        compiled: CompiledTemplate,
        target: Any,
        captured: Attrs | None,
        prefix_rank: series_rules.Specificity = (0, 0, 0, 0, 0),
    ) -> None:
        """Index ``compiled`` (``target`` is ``(recorder, row, points)``).

        ``prefix_rank`` is the specificity of the prefix pattern the row was
        matched by (a literal prefix: its own); with the key's it ranks the row.
        """
        length = len(compiled.head)
        rank = (compiled.rank, prefix_rank)
        self._by_head.setdefault(length, {}).setdefault(compiled.head, []).append(
            (compiled, target, captured, rank)
        )
        self._head_lengths = tuple(sorted(self._by_head))

    def lookup(self, key: str) -> tuple[Hit, ...]:
        """The series ``key`` feeds, cached per key: the most specific matching row.

        Normally zero or one; rows of equal rank that validation lets share
        keys (a deprecated row and its replacement) all feed. A key that is not
        a str (a caller's dict may hold anything) feeds none.
        """
        hits = self.cache.get(key)
        if hits is not None:
            return hits
        if type(key) is not str and not isinstance(key, str):
            return ()
        found: list[Hit] = []
        for (record, row, points), values, captured in self._winners(key):
            merged = {**values, **captured} if captured else values
            found.append((record, row, points, points.attributes(merged), merged))
        result = tuple(found)
        if len(self.cache) < self.cache_limit:
            self.cache[key] = result
        return result

    def targets(self, key: str) -> tuple[Any, ...]:
        """The targets ``key`` would feed, uncached and without building attribute sets.

        What :meth:`lookup` decides, for comparing routes (no point is counted
        against a series' budget).
        """
        return tuple(target for target, _values, _captured in self._winners(key))

    def _winners(self, key: str) -> list[tuple[Any, Attrs, Attrs | None]]:
        """The targets of the highest rank matching ``key``, with what each captured."""
        best: Any = None
        winners: list[tuple[Any, Attrs, Attrs | None]] = []
        for length in self._head_lengths:
            candidates = self._by_head[length].get(key[:length])
            if candidates is None:
                continue
            for compiled, target, captured, rank in candidates:
                if best is not None and rank < best:
                    continue
                values = compiled.match(key)
                if values is None:
                    continue
                if best is None or rank > best:
                    best, winners = rank, []
                winners.append((target, values, captured))
        return winners
