"""Checks over the whole catalog: everything a series is known by must be unique.

A series is known by its ``(prefix, logger_key)`` (teed rows), its name (compared
case-insensitively, as OpenTelemetry folds case), its registry key, its
generated Python constant and its Prometheus name (with ``_bucket``, ``_count``
and ``_sum`` for histograms). Generated module names must be unique too, and
``deprecated.replaced_by`` must name a declared series.

Each collision is reported once, at the later declaration (files by path, rows
in order), naming the earlier one, and only under the first of the name-derived
checks it fails, so ``rl.a.b`` vs ``rl.A.b`` is a name clash, not also a
registry-key clash.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from typing import Final

from .diagnostics import Diagnostic, Position, Severity
from .model import Catalog, CatalogFile, MetricRow

__all__ = ["check_catalog"]


@dataclass(frozen=True, slots=True)
class _Claim:
    """One way of naming a series and how a clash on it is explained."""

    code: str
    keys: Callable[[MetricRow], tuple[str, ...]]
    explain: Callable[[MetricRow, MetricRow, str, Position], str]


# Fields two rows of one series are compared on, in message order.
_COMPARED: Final[tuple[str, ...]] = (
    "section",
    "kind",
    "unit",
    "qualified_logger_key",
    "stability",
    "description",
    "deprecated",
)


def _shown(row: MetricRow, field_name: str) -> str:
    value = getattr(row, field_name)
    if field_name == "deprecated":
        return "deprecated" if value is not None else "not deprecated"
    if field_name == "description" and isinstance(value, str) and len(value) > 40:
        return repr(value[:37] + "...")
    return repr(value)


def _differences(row: MetricRow, first: MetricRow) -> str:
    """``; the rows differ in kind (gauge here, counter there)...`` or that they are identical."""
    differing = [
        f"{name.removeprefix('qualified_')} ({_shown(row, name)} here, {_shown(first, name)} there)"
        for name in _COMPARED
        if getattr(row, name) != getattr(first, name)
    ]
    if not differing:
        return "the two rows are identical"
    return "the rows differ in " + ", ".join(differing)


def _here(row: MetricRow) -> str:
    """``'rl.x' (catalog/grpo.yaml)``: a row named with its catalog file."""
    return f"{row.name!r} ({row.position.path})"


def _name_clash(row: MetricRow, first: MetricRow, _key: str, where: Position) -> str:
    if row.section != first.section:
        return (
            f"series {row.name!r} is declared as a {row.section} row here in "
            f"{row.position.path} and as a {first.section} row at {where}; a series is either "
            "teed or recorded, so keep one row."
        )
    if row.name != first.name:
        return (
            f"series {_here(row)} differs only in case from {first.name!r} declared at "
            f"{where}; OpenTelemetry folds case, so rename one of them."
        )
    return (
        f"series {_here(row)} is already declared at {where} ({_differences(row, first)}); "
        "keep one row (a series has one owner)."
    )


def _registry_clash(row: MetricRow, first: MetricRow, key: str, where: Position) -> str:
    return (
        f"series {_here(row)} maps to registry key {key!r}, like {first.name!r} declared at "
        f"{where} ('.' and '_' both become '_'); rename one of them."
    )


def _constant_clash(row: MetricRow, first: MetricRow, key: str, where: Position) -> str:
    return (
        f"series {_here(row)} generates the Python constant {key}, like {first.name!r} "
        f"declared at {where}; rename one of them."
    )


def _prometheus_clash(row: MetricRow, first: MetricRow, key: str, where: Position) -> str:
    return (
        f"series {row.name!r} ({row.kind}, unit {row.unit!r}, {row.position.path}) is "
        "exported to Prometheus as "
        f"{key!r}, which {first.name!r} ({first.kind}, unit {first.unit!r}) declared at "
        f"{where} also produces; rename one of them so the scrape keeps both."
    )


def _prometheus_keys(row: MetricRow) -> tuple[str, ...]:
    family = row.prometheus_name
    if row.kind == "histogram":
        return (family, f"{family}_bucket", f"{family}_count", f"{family}_sum")
    return (family,)


_NAME_CLAIMS: Final[tuple[_Claim, ...]] = (
    _Claim("DUPLICATE_NAME", lambda row: (row.name.lower(),), _name_clash),
    _Claim("DUPLICATE_REGISTRY_KEY", lambda row: (row.registry_key,), _registry_clash),
    _Claim("DUPLICATE_CONSTANT", lambda row: (row.constant_name,), _constant_clash),
    _Claim("DUPLICATE_PROMETHEUS_NAME", _prometheus_keys, _prometheus_clash),
)


def _error(code: str, message: str, position: Position) -> Diagnostic:
    return Diagnostic(code, Severity.ERROR, message, position)


def check_catalog(catalog: Catalog, *, declared: Collection[str] = ()) -> list[Diagnostic]:
    """Every cross-row and cross-file clash in ``catalog``.

    ``declared`` adds series names from rows that failed to load, so a
    ``replaced_by`` pointing at them is not reported as unknown as well.
    """
    rows = [row for _file, row in catalog.rows()]
    diagnostics = list(_modules(catalog))
    diagnostics.extend(_logger_keys(rows))
    diagnostics.extend(_names(rows))
    diagnostics.extend(_replacements(rows, declared))
    diagnostics.extend(_namespaces(rows))
    return diagnostics


def _modules(catalog: Catalog) -> Iterator[Diagnostic]:
    first: dict[str, CatalogFile] = {}
    for catalog_file in catalog.files:
        earlier = first.setdefault(catalog_file.module, catalog_file)
        if earlier is not catalog_file:
            yield _error(
                "DUPLICATE_MODULE",
                f"module {catalog_file.module!r} is already generated from "
                f"{earlier.where('module')}; give this file another 'module' name.",
                catalog_file.where("module"),
            )


def _renames(row: MetricRow, other: MetricRow) -> bool:
    """True when one of the two rows is deprecated with ``replaced_by`` naming the other."""
    return any(
        old.deprecated is not None and old.deprecated.replaced_by == new.name
        for old, new in ((row, other), (other, row))
    )


def _logger_keys(rows: list[MetricRow]) -> Iterator[Diagnostic]:
    """Each ``(prefix, logger_key)`` is teed once, except by a deprecated row and its replacement.

    Renaming a series while the code keeps logging the same key is done by
    adding the new row and deprecating the old one with ``replaced_by``: that
    pair (and only that pair) shares the key, and the tee records into both.
    """
    claimed: dict[tuple[str, str], list[MetricRow]] = {}
    for row in rows:
        if row.logger_key is None:
            continue
        owners = claimed.setdefault((row.prefix or "", row.logger_key), [])
        earlier = next((other for other in owners if not _renames(row, other)), None)
        if earlier is None and len(owners) >= 2:  # a pair at most
            earlier = owners[0]
        owners.append(row)
        if earlier is None:
            continue
        if earlier.deprecated is not None or row.deprecated is not None:
            fix = (
                "only a deprecated row and the row its 'replaced_by' names may share a "
                "logger key; point 'replaced_by' at the other row, or give this row another "
                "key or prefix."
            )
        else:
            fix = (
                "move the row to one owner or give it another prefix (to rename the series "
                "under the same key, deprecate the old row with 'replaced_by' naming the new)."
            )
        yield _error(
            "DUPLICATE_LOGGER_KEY",
            f"logger key {row.logger_key!r} (prefix {row.prefix or ''!r}) of {_here(row)} is "
            f"already teed by {earlier.name!r} at {earlier.position}; {fix}",
            row.position,
        )


def _names(rows: list[MetricRow]) -> Iterator[Diagnostic]:
    clashed: set[tuple[int, int]] = set()
    for claim in _NAME_CLAIMS:
        owners: dict[str, int] = {}
        for index, row in enumerate(rows):
            for key in claim.keys(row):
                earlier = owners.setdefault(key, index)
                if earlier == index or (earlier, index) in clashed:
                    continue
                clashed.add((earlier, index))
                first = rows[earlier]
                message = claim.explain(row, first, key, first.position)
                yield _error(claim.code, message, row.position)


def _replacements(rows: list[MetricRow], declared: Collection[str]) -> Iterator[Diagnostic]:
    names = {row.name for row in rows} | set(declared)
    sorted_names: list[str] | None = None
    for row in rows:
        target = row.deprecated.replaced_by if row.deprecated else None
        if target is None:
            continue
        where = row.where("deprecated.replaced_by")
        if target == row.name:
            yield _error(
                "REPLACED_BY_SELF",
                f"{row.name!r} names itself in 'replaced_by'; name the series that replaces it.",
                where,
            )
        elif target not in names:
            if sorted_names is None:
                sorted_names = sorted(names)
            # Never the row itself: a deprecated row is not its own replacement.
            close = [
                name
                for name in difflib.get_close_matches(target, sorted_names, n=2, cutoff=0.6)
                if name != row.name
            ]
            fix = f"did you mean {close[0]!r}?" if close else "declare it or fix the name."
            yield _error(
                "REPLACED_BY_UNKNOWN",
                f"'replaced_by' of {row.name!r} names {target!r}, which no catalog row "
                f"declares; {fix}",
                where,
            )


def _namespaces(rows: list[MetricRow]) -> Iterator[Diagnostic]:
    order = {id(row): index for index, row in enumerate(rows)}
    by_name = {row.name.lower(): row for row in reversed(rows)}
    for row in rows:
        parts = row.name.lower().split(".")
        for end in range(2, len(parts)):
            parent = by_name.get(".".join(parts[:end]))
            if parent is None:
                continue
            # Reported once, at whichever of the two rows comes later.
            later, earlier = (row, parent) if order[id(row)] > order[id(parent)] else (parent, row)
            yield Diagnostic(
                "NAME_IS_NAMESPACE",
                Severity.WARNING,
                f"series {parent.name!r} is also the namespace of {row.name!r} (the other "
                f"row is at {earlier.position}); rename {parent.name!r} (e.g. "
                f"'{parent.name}.value') so series names form a tree.",
                later.position,
            )
