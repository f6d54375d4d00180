"""Coverage: which declared rows, and which values of their enums, a run showed.

``overall`` is the share of the rows that apply to the run's loop that were
logged. A teed row applies unless its ``emitted_by`` rules the run's loop
out (presence ``not_emitted``, or ``undecided`` when the loop is unknown) or
the run's configuration rules its condition out (``not_applicable``); other
rows of owners that logged nothing count as unseen. A conditional row whose
condition could not be decided (prose, or a configuration the run did not
log: presence ``conditional``) is not known to apply, so it counts only when
it was logged: a run is not marked down for a row it may rightly never log; so does an
``opt_in`` row, which no run is asked to log. The same share is given
per owner (the catalog file's ``owner``). For every applicable key family
(a row whose logger key or prefix holds placeholders) and every applicable
row with a ``required`` enum attribute, ``families`` and ``enum_values``
list which of each enum's values were seen (captured from a key or passed
as an attribute) and which were not.

``overall`` is 0 when no row applied (nothing was judged), never a vacuous 1.

Everything here is bounded by the catalog.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from metric_catalog.series_rules import placeholders

from ..catalog.model import Catalog, MetricRow
from .statistics import RowSummary

__all__ = ["NOT_APPLICABLE", "Coverage", "ValueTracker", "compute_coverage"]

NOT_APPLICABLE: Final = frozenset(
    {"not_emitted", "undecided", "not_applicable", "conditional", "not_due"}
)
"""Presence states of rows not known to apply to the run (only unlogged rows have them):
``not_due`` too, since a run that stopped (or resumed) before a row's step could not log it."""


MAX_OPEN_VALUES: Final = 32
"""Values of one open placeholder the coverage lists at most (past it: ``capped``)."""


def _share(seen: int, total: int) -> float:
    return round(seen / total, 4) if total else 1.0


class ValueTracker:
    """The enum values seen per ``(row, attribute)`` the coverage reports on."""

    def __init__(self, catalog: Catalog) -> None:
        self.tracked: dict[str, tuple[tuple[str, frozenset[str]], ...]] = {}
        self.open: dict[str, tuple[str, ...]] = {}
        """Rows of a key family whose placeholders have no enum: their names."""
        self.open_seen: dict[tuple[str, str], set[str]] = {}
        self.open_capped: set[tuple[str, str]] = set()
        self.family: set[str] = set()
        self.required: dict[str, tuple[str, ...]] = {}
        known = catalog.attributes()
        for _, row in catalog.rows():
            if row.section != "teed" or row.logger_key is None:
                continue
            attributes = Catalog.row_attributes(row, known)  # the row's subsets count
            shaped = placeholders(row.logger_key) + tuple(
                name for prefix in row.prefixes for name in placeholders(prefix)
            )
            # A family's placeholders are in ``families``; its other required attributes here.
            required = tuple(
                ref.name
                for ref in row.attributes
                if ref.requirement_level == "required" and ref.name not in shaped
            )
            pairs = []
            for name in dict.fromkeys((*shaped, *required)):
                attribute = attributes.get(name)
                domain = None if attribute is None else attribute.domain
                if domain is not None:
                    pairs.append((name, frozenset(domain)))
            if shaped:
                self.family.add(row.name)
            self.required[row.name] = required
            # An open placeholder (no enum): the values it took are listed, capped, so a
            # misspelling the family swallowed shows.
            opened = tuple(
                name
                for name in dict.fromkeys(shaped)
                if (attribute := attributes.get(name)) is not None and attribute.domain is None
            )
            if opened:
                self.open[row.name] = opened
            if pairs or opened:
                self.tracked[row.name] = tuple(pairs)
        self.seen: dict[tuple[str, str], set[str]] = {}

    def see(self, row: MetricRow, values: Mapping[str, object]) -> None:
        """Note the tracked attributes' values of one point of ``row``."""
        pairs = self.tracked.get(row.name)
        if pairs is None:
            return
        for name in self.open.get(row.name, ()):
            value = values.get(name)
            if value is not None:
                self._see_open((row.name, name), str(value))
        for name, domain in pairs:
            value = values.get(name)
            if value is None:
                continue
            text = ("true" if value else "false") if isinstance(value, bool) else str(value)
            if text in domain:
                self.seen.setdefault((row.name, name), set()).add(text)

    def _see_open(self, slot: tuple[str, str], text: str) -> None:
        seen = self.open_seen.setdefault(slot, set())
        if text in seen:
            return
        if len(seen) >= MAX_OPEN_VALUES:
            self.open_capped.add(slot)
            return
        seen.add(text)

    def open_values(self) -> dict[str, dict[str, object]]:
        """``{row: {attribute: {seen, capped}}}``: the values each open placeholder took."""
        out: dict[str, dict[str, object]] = {}
        for (row, name), seen in sorted(self.open_seen.items()):
            out.setdefault(row, {})[name] = {
                "seen": sorted(seen),
                "capped": (row, name) in self.open_capped,
            }
        return out

    def values(self, row: str, names: tuple[str, ...] | None = None) -> dict[str, object]:
        """``{attribute: {seen, unseen, share}}`` of ``row``'s tracked attributes (or ``names``)."""
        out: dict[str, object] = {}
        for name, domain in self.tracked.get(row, ()):
            if names is not None and name not in names:
                continue
            seen = self.seen.get((row, name), set())
            out[name] = {
                "seen": sorted(seen),
                "unseen": sorted(domain - seen),
                "overall": _share(len(seen), len(domain)),
            }
        return out


@dataclass(slots=True)
class Coverage:
    """Shares of the applicable rows, and of enum values, that the run showed."""

    overall: float = 1.0
    seen: int = 0
    applicable: int = 0
    owners: dict[str, dict[str, object]] = field(default_factory=dict)
    families: dict[str, dict[str, object]] = field(default_factory=dict)
    enum_values: dict[str, dict[str, object]] = field(default_factory=dict)
    open_values: dict[str, dict[str, object]] = field(default_factory=dict)
    """Row -> attribute -> the values an open placeholder (no enum) took, capped:
    information, so a misspelt key an open family swallowed is visible."""
    minimum: float | None = None
    """``--min-coverage`` as a share (0 to 1), when given."""

    @property
    def below_minimum(self) -> bool:
        """Whether ``overall`` is below ``--min-coverage``."""
        return self.minimum is not None and self.overall < self.minimum

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict with stable keys."""
        return {
            "overall": self.overall,
            "seen": self.seen,
            "applicable": self.applicable,
            "owners": self.owners,
            "families": self.families,
            "enum_values": self.enum_values,
            "open_values": self.open_values,
            "min": self.minimum,
            "ok": not self.below_minimum,
        }


def compute_coverage(
    rows: list[RowSummary], owner_of: Mapping[str, str], tracker: ValueTracker
) -> Coverage:
    """The coverage of a finished check (presence states set)."""
    out = Coverage()
    by_owner: dict[str, list[int]] = {}
    for summary in rows:
        if summary.presence in NOT_APPLICABLE:
            continue
        if summary.row.requirement_level == "opt_in" and not summary.logged:
            continue  # an opt_in row is asked of no run: it counts only when logged
        if (
            summary.row.requirement_level == "conditionally_required"
            and not summary.logged
            and summary.presence != "missing"
        ):
            # Not known to apply unless the run's configuration decided its condition holds
            # (then it is missing): an owner the run never imported does not decide it.
            continue
        name = summary.row.name
        logged = 1 if summary.logged else 0
        out.applicable += 1
        out.seen += logged
        counts = by_owner.setdefault(owner_of[name], [0, 0])
        counts[0] += logged
        counts[1] += 1
        if name in tracker.family:
            values = tracker.values(name)
            if values:
                out.families[name] = {"logged": summary.logged, "attributes": values}
        required = tracker.required.get(name, ())
        if required:
            values = tracker.values(name, required)
            if values:
                out.enum_values[name] = values
    out.open_values = tracker.open_values()
    # A run in which no row could be judged covered nothing: 0, never a vacuous 100%.
    out.overall = _share(out.seen, out.applicable) if out.applicable else 0.0
    for owner, (seen, total) in sorted(by_owner.items()):
        out.owners[owner] = {"seen": seen, "applicable": total, "overall": _share(seen, total)}
    return out
