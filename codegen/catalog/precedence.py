"""Which row takes a logged key: the series rules' precedence, over the catalog's rows.

Two teed rows *meet* when some logged ``(prefix, key)`` pair matches both
(decided exactly by :func:`metric_catalog.series_rules.overlap`, once for the
prefixes and once for the keys). Where they meet, the more specific row takes
the key (:func:`metric_catalog.series_rules.address_rank`: the key pattern's
specificity, then the prefix's), so the other is *shadowed* there; rows of
equal rank that meet are ambiguous, which validation reports as
``KEY_PATTERN_OVERLAP`` with the shared key. A deprecated row and the row its
``replaced_by`` names may share keys (the tee feeds both).

A row is scoped to the loops that emit it (``emitted_by``; none: every loop).
Two rows whose scopes are disjoint never meet, whatever their keys: a run of
one loop routes its keys among that loop's rows only (:func:`shared_loops`).
Likewise two rows whose conditions choose them by one configuration value that
cannot choose both (``config.critic.clip_value`` / ``not config.critic.clip_value``:
:func:`exclusive`) may share a literal key: the run's configuration routes it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from metric_catalog.series_rules import (
    Capture,
    ConfigChoice,
    address_rank,
    overlap,
    parse_pattern,
    placeholders,
)

from .conditions import ConditionError, choice_of, parse_condition
from .model import Attribute, Catalog, MetricRow

__all__ = [
    "EVERY_LOOP",
    "Meeting",
    "captures",
    "exclusive",
    "meetings",
    "renames",
    "row_captures",
    "row_choice",
    "row_placeholders",
    "scope_text",
    "shadowed_by",
    "shared_keys",
    "shared_loops",
]


@dataclass(frozen=True, slots=True)
class Meeting:
    """Two rows that both match the logged pair ``(prefix, key)``.

    ``winner`` is the more specific of the two, or ``None`` when they rank equal.
    """

    first: MetricRow
    second: MetricRow
    prefix: str
    key: str
    winner: MetricRow | None


def captures(known: Mapping[str, Attribute]) -> dict[str, Capture]:
    """What a placeholder of each declared attribute captures."""
    return {name: attribute.capture for name, attribute in known.items()}


def row_captures(row: MetricRow, known: Mapping[str, Attribute]) -> dict[str, Capture]:
    """What each placeholder of ``row`` captures: the one place a row's capture domain is
    read for routing (live-check, scan, infer); a ref's ``values`` narrow it to the row's
    subset (:meth:`~codegen.catalog.model.AttributeRef.narrow`), as the generated row does
    for the tee."""
    seen = Catalog.row_attributes(row, known)
    return {
        name: (seen.get(name) or known[name]).capture
        for name in row_placeholders(row)
        if name in known
    }


def row_placeholders(row: MetricRow) -> tuple[str, ...]:
    """The attribute names the placeholders of ``row``'s key and prefixes name, once each."""
    names = [*placeholders(row.logger_key or "")]
    for prefix in row.prefixes:
        names += placeholders(prefix)
    return tuple(dict.fromkeys(names))


def renames(row: MetricRow, other: MetricRow) -> bool:
    """Whether one row is deprecated with ``replaced_by`` naming the other."""
    return any(
        old.deprecated is not None and old.deprecated.replaced_by == new.name
        for old, new in ((row, other), (other, row))
    )


EVERY_LOOP = "*"
"""What :func:`shared_loops` returns for two rows neither of which names a loop."""


def shared_loops(row: MetricRow, other: MetricRow) -> tuple[str, ...]:
    """The loops in which both rows may be logged, sorted; empty when their scopes are disjoint.

    A row without ``emitted_by`` may be logged by every loop: beside a scoped row
    the two share that row's loops; two unscoped rows share every loop
    (``(EVERY_LOOP,)``).
    """
    if not row.emitted_by and not other.emitted_by:
        return (EVERY_LOOP,)
    if not row.emitted_by:
        return tuple(sorted(set(other.emitted_by)))
    if not other.emitted_by:
        return tuple(sorted(set(row.emitted_by)))
    return tuple(sorted(set(row.emitted_by) & set(other.emitted_by)))


@functools.lru_cache(maxsize=4096)
def _choice(text: str) -> ConfigChoice | None:
    try:
        condition = parse_condition(text)
    except ConditionError:
        return None  # validation reports it
    return None if condition is None else choice_of(condition)


def row_choice(row: MetricRow) -> ConfigChoice | None:
    """The configuration value a ``conditionally_required`` teed row is chosen by, when its
    condition is one (``config.x``, ``not config.x``, ``config.x == "a"``); else ``None``."""
    if row.condition is None or row.logger_key is None:
        return None
    return _choice(row.condition)


def exclusive(row: MetricRow, other: MetricRow) -> bool:
    """Whether no run's configuration chooses both rows (so they may share a literal key)."""
    mine, theirs = row_choice(row), row_choice(other)
    return mine is not None and theirs is not None and mine.excludes(theirs)


def scope_text(loops: tuple[str, ...]) -> str:
    """``loop 'sft'``, ``loops 'dpo', 'rm'`` or ``every loop`` for :func:`shared_loops`."""
    if loops == (EVERY_LOOP,):
        return "every loop (neither row names its loops in 'emitted_by')"
    names = ", ".join(repr(loop) for loop in loops)
    return f"loop {names}" if len(loops) == 1 else f"loops {names}"


def _head(text: str) -> str:
    """Literal text before the first brace."""
    return text.split("{", 1)[0]


def _tail(text: str) -> str:
    """Literal text after the last brace."""
    return text.rsplit("}", 1)[-1]


def _may_meet(a: str, b: str) -> bool:
    """Cheap necessary condition for two patterns to share a text (heads and tails agree)."""
    head_a, head_b = _head(a), _head(b)
    tail_a, tail_b = _tail(a), _tail(b)
    heads = head_a.startswith(head_b) or head_b.startswith(head_a)
    tails = tail_a.endswith(tail_b) or tail_b.endswith(tail_a)
    return heads and tails


def _meeting(first: MetricRow, second: MetricRow, known: Mapping[str, Capture]) -> Meeting | None:
    """Where ``first`` and ``second`` meet (most decisive prefix pair first), or ``None``."""
    key_a, key_b = first.logger_key or "", second.logger_key or ""
    if not _may_meet(key_a, key_b):
        return None
    key = overlap(parse_pattern(key_a), parse_pattern(key_b), known)
    if key is None:
        return None
    found: Meeting | None = None
    for prefix_a in first.prefixes:
        for prefix_b in second.prefixes:
            if not _may_meet(prefix_a, prefix_b):
                continue
            prefix = overlap(parse_pattern(prefix_a), parse_pattern(prefix_b), known)
            if prefix is None:
                continue
            rank_a = address_rank(parse_pattern(prefix_a), parse_pattern(key_a), known)
            rank_b = address_rank(parse_pattern(prefix_b), parse_pattern(key_b), known)
            winner = first if rank_a > rank_b else second if rank_b > rank_a else None
            meeting = Meeting(first, second, prefix, key, winner)
            if winner is None:
                return meeting  # an ambiguous pair decides: it is an error
            found = found or meeting
    return found


def meetings(rows: list[MetricRow], known: Mapping[str, Attribute]) -> Iterator[Meeting]:
    """Every pair of teed rows, a family among them, that meets; ``first`` declared first.

    Rows using an undeclared attribute are skipped (validation reports it);
    a deprecated row and its replacement are not a meeting, nor are two rows
    whose ``emitted_by`` loops are disjoint (no run logs both).
    """
    teed = [row for row in rows if row.logger_key is not None]
    if not any(row.is_family for row in teed):
        return
    table = captures(known)
    usable = [row for row in teed if all(name in known for name in _placeholders(row))]
    for index, family in enumerate(usable):
        if not family.is_family:
            continue
        for other_index, other in enumerate(usable):
            if other_index == index or (other.is_family and other_index < index):
                continue  # itself, or a family pair already seen from the other side
            if renames(family, other) or not shared_loops(family, other):
                continue
            first, second = (family, other) if index < other_index else (other, family)
            found = _meeting(first, second, table)
            if found is not None:
                yield found


def _placeholders(row: MetricRow) -> tuple[str, ...]:
    if not row.is_family:
        return ()
    return tuple(n for text in (row.logger_key or "", *row.prefixes) for n in placeholders(text))


def shadowed_by(catalog: Catalog) -> dict[str, tuple[str, ...]]:
    """Series name of a family -> the literal rows (no placeholder) that take some of its keys.

    A literal row always wins where it meets a family; the docs and ``resolve``
    list them on the family's entry, sorted.
    """
    rows = [row for _, row in catalog.rows()]
    found: dict[str, set[str]] = {}
    for meeting in meetings(rows, catalog.attributes()):
        winner = meeting.winner
        if winner is None or winner.is_family:
            continue
        loser = meeting.second if winner is meeting.first else meeting.first
        found.setdefault(loser.name, set()).add(winner.name)
    return {name: tuple(sorted(names)) for name, names in sorted(found.items())}


def shared_keys(catalog: Catalog) -> dict[str, tuple[str, ...]]:
    """Series name -> the rows of other loops, or chosen by another value of the run's
    configuration, that declare one of its logged keys, sorted.

    Rows whose ``emitted_by`` loops are disjoint may share a key (each loop routes it
    to its own row), and so may rows :func:`exclusive` conditions choose (the run's
    configuration routes it); the docs and ``resolve`` name the others on each row's
    entry.
    """
    by_key: dict[str, list[MetricRow]] = {}
    for _file, row in catalog.rows():
        for key in row.logged_keys:
            by_key.setdefault(key, []).append(row)
    found: dict[str, set[str]] = {}
    for rows in by_key.values():
        for row in rows:
            others = {
                o.name
                for o in rows
                if o is not row and (not shared_loops(row, o) or exclusive(row, o))
            }
            if others:
                found.setdefault(row.name, set()).update(others)
    return {name: tuple(sorted(names)) for name, names in sorted(found.items())}
