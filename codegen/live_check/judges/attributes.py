"""Attribute keys, values and budgets of every point, as the tee checks them.

``attribute_value``
    a key family's capture, or a line's ``"attributes"`` value, outside its
    attribute's enum or of another type; the tee drops it.
``undeclared_attribute``
    a point carries an attribute key its row does not declare; the tee drops it.
``missing_attribute``
    a point lacks one of its row's ``required`` attributes (after captures and
    derivations); the tee keeps it without the attribute.
``attribute_budget``
    a series got more distinct values of an open attribute than its
    ``max_cardinality``, or more distinct attribute sets than its budget (the
    row's ``cardinality_limit``, default 2000, smaller when its enums bound
    it; the attribute-less set and the overflow point count, as in the
    runtime's ``series_limit``); past it the tee folds new sets into one
    overflow point. Judged per worker (each process has its own budget).

:class:`AttributeRules` holds what the catalog says (shared by every worker);
:class:`Budgets` holds one worker's admitted sets, counted up to each
series' budget, so memory is bounded by the catalog whatever the log holds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from metric_catalog.series_rules import series_limit, value_fits

from ...catalog.model import Attribute, AttributeRef, Catalog, MetricRow
from ...runs.limits import Limits

__all__ = [
    "AttributeRules",
    "Budgets",
    "accepts",
    "series_budget",
]

_MISSING: Final = object()

Problem = tuple[str, str, str]
"""``(kind, attribute, text)`` of one thing the tee would drop or fold."""


def series_budget(row: MetricRow, attributes: Mapping[str, Attribute]) -> int:
    """The series' budget of attribute sets, overflow point included, as the runtime has it.

    :func:`metric_catalog.series_rules.series_limit` of the row's
    ``cardinality_limit`` and its attributes' bounds (an enum's size, an open
    attribute's ``max_cardinality``; an undeclared attribute is unbounded).
    """
    bounds: list[int | None] = []
    for name in row.attribute_names():
        attribute = attributes.get(name)
        bounds.append(None if attribute is None else attribute.bound)
    return series_limit(row.cardinality_limit, bounds)


def accepts(attribute: Attribute, value: object) -> bool:
    """Whether a JSON ``value`` is of the attribute's type and, for a closed enum, one of its
    values."""
    typed = attribute.typed_values() if attribute.closed_values else ()  # open: any value
    return value_fits(attribute.type, typed, value)


def _first(item: tuple[str, object]) -> str:
    return item[0]


def _as_written(value: object) -> str:
    """A JSON value as catalog tables write it (``true``, ``3``, ``step``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _shown(value: object) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class AttributeRules:
    """What the catalog says of attributes: declarations, derivations, required ones."""

    def __init__(self, catalog: Catalog) -> None:
        self.attributes = catalog.attributes()
        self.derived: dict[str, tuple[AttributeRef, ...]] = {}
        self.required: dict[str, tuple[str, ...]] = {}
        self.views: dict[str, dict[str, Attribute]] = {}

    def of(self, row: MetricRow) -> dict[str, Attribute]:
        """The row's attributes as it sees them (a ref's ``values`` cut the enum), cached."""
        found = self.views.get(row.name)
        if found is None:
            found = self.views[row.name] = Catalog.row_attributes(row, self.attributes)
        return found

    def judge_captures(
        self, captured: Mapping[str, object], row: MetricRow | None = None
    ) -> tuple[str, str] | None:
        """``(kind, text)`` when a key family's captured value is not allowed by its attribute
        (as ``row`` sees it, when given: a ref's ``values`` narrow the enum)."""
        known = self.attributes if row is None else self.of(row)
        for name, captured_value in captured.items():
            attribute = known.get(name)
            if attribute is None:
                continue  # validate reports the unbound placeholder
            value = _as_written(captured_value)
            domain = attribute.domain
            if domain is not None and value not in domain:
                shown = ", ".join(domain[:8]) + (", ..." if len(domain) > 8 else "")
                return (
                    "attribute_value",
                    f"captures {name}={value!r}, which is not one of its values ({shown}); "
                    "the tee drops it: log one of them, or add the value to the attribute",
                )
            if attribute.type == "int" and not value.lstrip("-").isdigit():
                return (
                    "attribute_value",
                    f"captures {name}={value!r}, which is not an integer; the tee drops it",
                )
        return None

    def missing(self, row: MetricRow, checked: Mapping[str, object]) -> list[Problem]:
        """A ``missing_attribute`` problem per required attribute the point lacks."""
        required = self.required.get(row.name)
        if required is None:
            required = tuple(r.name for r in row.attributes if r.requirement_level == "required")
            self.required[row.name] = required
        return [
            (
                "missing_attribute",
                name,
                f"has no value for its required attribute {name!r}; the tee keeps the point "
                "without it, so queries grouping by it miss the point: pass it on every "
                "point (or capture it from the logger key), or lower its requirement_level",
            )
            for name in required
            if name not in checked
        ]

    def derivations(self, row: MetricRow) -> tuple[AttributeRef, ...]:
        """The row's derived attributes, each after the attributes it reads (cached per row)."""
        found = self.derived.get(row.name)
        if found is not None:
            return found
        pending = [ref for ref in row.attributes if ref.derive is not None]
        done = {ref.name for ref in row.attributes if ref.derive is None}
        ordered: list[AttributeRef] = []
        while pending:
            ready = [ref for ref in pending if ref.derive is not None and ref.derive.source in done]
            if not ready:  # a cycle or an unknown source: validate reports both
                break
            for ref in ready:
                ordered.append(ref)
                done.add(ref.name)
                pending.remove(ref)
        self.derived[row.name] = found = tuple(ordered)
        return found

    def checked(
        self, row: MetricRow, given: Mapping[str, object], captured: Mapping[str, object]
    ) -> tuple[dict[str, object], list[Problem]]:
        """The point's attribute set as the tee records it, and what the tee drops."""
        problems: list[Problem] = []
        checked: dict[str, object] = dict(captured)
        declared = row.attribute_names() if given else ()
        for key, value in given.items():
            if key in checked:
                continue  # a captured value wins, as in the tee
            attribute = self.of(row).get(key) if key in declared else None
            if attribute is None:
                listed = ", ".join(declared) if declared else "none"
                problems.append(
                    (
                        "undeclared_attribute",
                        key,
                        f"carries attribute {key!r}, which its row does not declare "
                        f"(declared: {listed}); the tee drops it from the point: declare it "
                        "in the row's attributes, or stop passing it",
                    )
                )
                continue
            if not accepts(attribute, value):
                if attribute.values:
                    listed = ", ".join(v.value for v in attribute.values[:8])
                    more = ", ..." if len(attribute.values) > 8 else ""
                    allowed = f"one of the {attribute.type} values {listed}{more}"
                else:
                    allowed = f"values of type {attribute.type}"
                problems.append(
                    (
                        "attribute_value",
                        key,
                        f"carries {key}={_shown(value)}, but the attribute takes {allowed}; "
                        "the tee drops the attribute from the point: pass an allowed value, "
                        "or add it to the attribute",
                    )
                )
                continue
            checked[key] = value
        for ref in self.derivations(row):
            derive = ref.derive
            found = checked.get(derive.source, _MISSING) if derive is not None else _MISSING
            if derive is not None and found is not _MISSING:
                derived = derive.lookup(_as_written(found))
                if derived is not None:
                    checked[ref.name] = derived  # replaces a passed value, as in the tee
        problems.extend(self.missing(row, checked))
        return checked, problems


class Budgets:
    """One worker's admitted attribute sets per series, counted up to each series' budget.

    Per series, the admitted attribute sets are counted up to its budget
    (:func:`series_budget`) and the values of each open attribute with a
    ``max_cardinality`` up to that count; counting stops there. Every state
    is created on first use, so a worker without attributes costs nothing.
    """

    __slots__ = ("caps", "clean", "limits", "over", "rules", "sets", "values")

    def __init__(self, rules: AttributeRules, caps: Limits | None = None) -> None:
        self.rules = rules
        self.caps = caps or Limits()
        self.sets: dict[str, set[tuple[tuple[str, object], ...]]] = {}
        self.values: dict[tuple[str, str], set[object]] = {}
        self.limits: dict[str, int] = {}
        self.over: set[tuple[str, str]] = set()
        self.clean: set[tuple[str, tuple[tuple[str, object], ...]]] = set()
        """(series, captures) whose point was admitted without a problem (up to a cap)."""

    def check(
        self, row: MetricRow, given: Mapping[str, object], captured: Mapping[str, object]
    ) -> list[Problem]:
        """``(kind, attribute, text)`` of what the tee would drop or fold for this point."""
        if not given and not captured:
            # The attribute-less set is always within the budget; only a required
            # attribute can be wanting.
            return self.rules.missing(row, {})
        if not given:
            # A family key seen before with the same captures and no attributes
            # was admitted cleanly: the same input gives the same set.
            memo = (row.name, tuple(captured.items()))
            if memo in self.clean:
                return []
        checked, problems = self.rules.checked(row, given, captured)
        over = self._admit(row, checked)
        if over is not None:
            problems.append(over)
        elif not problems and not given and len(self.clean) < self.caps.max_family_keys:
            admitted = self.sets.get(row.name)
            if admitted is not None and tuple(sorted(checked.items(), key=_first)) in admitted:
                self.clean.add((row.name, tuple(captured.items())))
        return problems

    def _admit(self, row: MetricRow, checked: dict[str, object]) -> Problem | None:
        """Count the point's attribute set; the budget finding when it would overflow."""
        name = row.name
        chosen = tuple(sorted(checked.items(), key=_first))
        sets = self.sets.get(name)
        if sets is None:
            sets = self.sets[name] = {()}
            self.limits[name] = series_budget(row, self.rules.of(row))
        if chosen in sets:
            return None
        for key, value in chosen:
            attribute = self.rules.of(row).get(key)
            budget = None if attribute is None else attribute.max_cardinality
            if attribute is None or attribute.closed_values or budget is None:
                continue
            if value in attribute.typed_values():  # an open enum's known values are free
                continue
            seen = self.values.setdefault((name, key), set())
            if value not in seen and len(seen) >= min(budget, self.caps.max_tracked_values):
                return self._over(
                    (name, key),
                    f"got more than {budget} distinct values of {key} (its max_cardinality), "
                    f"first over it {_shown(value)}; the tee folds further values into one "
                    "overflow point: raise the budget or log fewer values",
                )
        limit = self.limits[name]
        if len(sets) >= limit - 1:
            return self._over(
                (name, ""),
                f"got more distinct attribute sets than its budget of {limit} (the attribute-"
                "less set and the overflow point included; the row's cardinality_limit, "
                f"bounded by its enums), first over it {dict(chosen)!r}; the tee folds further "
                "sets into one overflow point: raise cardinality_limit or log fewer sets",
            )
        for key, value in chosen:
            seen_values = self.values.get((name, key))
            attribute = self.rules.of(row).get(key)
            if seen_values is not None and (
                attribute is None or value not in attribute.typed_values()
            ):
                seen_values.add(value)
        sets.add(chosen)
        return None

    def _over(self, slot: tuple[str, str], text: str) -> Problem | None:
        """The budget finding, the first time ``slot`` overflows (later ones are folded)."""
        if slot in self.over:
            return None
        self.over.add(slot)
        return ("attribute_budget", slot[1], text)
