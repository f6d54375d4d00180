"""Checks over the whole catalog: everything a series is known by must be unique.

A series is known by its ``(prefix, logger_key)`` (teed rows), its name (compared
case-insensitively, as OpenTelemetry folds case), its registry key, its
generated Python constant and its Prometheus name (with ``_bucket``, ``_count``
and ``_sum`` for histograms). Generated module names must be unique too, and
``deprecated.replaced_by`` must name a declared series, or one no declared name is a
near miss of (a series outside the catalog, with a warning).

Each collision is reported once, at the later declaration (files by path, rows
in order), naming the earlier one, and only under the first of the name-derived
checks it fails, so ``rl.a.b`` vs ``rl.A.b`` is a name clash, not also a
registry-key clash.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from typing import Final

from metric_catalog.series_rules import (
    INVALID,
    is_literal,
    parse_value,
    placeholders,
    qualified_key,
    value_fits,
)

from .conditions import (
    MAX_CONDITION_ATTRIBUTE_VALUES,
    ConditionError,
    condition_attributes,
    for_value,
    parse_condition,
)
from .diagnostics import Diagnostic, Position, Severity
from .model import Attribute, AttributeRef, Catalog, CatalogFile, MetricRow
from .precedence import exclusive, meetings, renames, row_choice, scope_text, shared_loops
from .similar import closest

__all__ = ["check_catalog"]


@dataclass(frozen=True, slots=True)
class _Claim:
    """One way of naming a series and how a clash on it is explained."""

    code: str
    keys: Callable[[MetricRow], tuple[str, ...]]
    explain: Callable[[MetricRow, MetricRow, str, Position], str]


# Fields two rows of one series are compared on, in message order.
def _logged_as(row: MetricRow) -> object:
    """Every ``prefix/logger_key`` a teed row is logged as (one string when there is one)."""
    if row.logger_key is None:
        return None
    keys = list(row.logged_keys)
    return keys[0] if len(keys) == 1 else keys


def _short(text: object) -> object:
    if isinstance(text, str) and len(text) > 40:  # display width
        return text[:37] + "..."
    return text


_COMPARED: Final[tuple[tuple[str, Callable[[MetricRow], object]], ...]] = (
    ("section", lambda row: row.section),
    ("kind", lambda row: row.kind),
    ("unit", lambda row: row.declared_unit),
    ("logger_key", _logged_as),
    ("attributes", lambda row: list(row.attribute_names())),
    ("cardinality_limit", lambda row: row.cardinality_limit),
    ("stability", lambda row: row.stability),
    ("description", lambda row: _short(row.description)),
    ("deprecated", lambda row: "deprecated" if row.deprecated else "not deprecated"),
)
"""Fields two rows of one series are compared on, in message order, and how each shows."""


def _differences(row: MetricRow, first: MetricRow) -> str:
    """``the rows differ in kind ('gauge' here, 'counter' there)...`` or that they are identical."""
    differing = []
    for label, shown in _COMPARED:
        here, there = shown(row), shown(first)
        if here != there:
            differing.append(f"{label} ({here!r} here, {there!r} there)")
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
    diagnostics.extend(_sums(rows, declared))
    diagnostics.extend(_namespaces(rows))
    diagnostics.extend(check_attributes(catalog, rows))
    diagnostics.extend(_loop_names(catalog))
    diagnostics.extend(_bookkeeping(catalog, rows))
    return diagnostics


def _bookkeeping(catalog: Catalog, rows: list[MetricRow]) -> Iterator[Diagnostic]:
    """Each bookkeeping key is declared once, and is no teed row's logged key."""
    first: dict[str, Position] = {}
    logged: dict[str, MetricRow] = {}
    for row in rows:
        if row.logger_key is not None and not row.is_family:
            for key in row.logged_keys:
                logged.setdefault(key.replace("{{", "{").replace("}}", "}"), row)
    for loop in catalog.loops():
        for step in loop.step_keys:
            owner = logged.get(step.key)
            if owner is not None:
                yield _error(
                    "STEP_KEY_DECLARED",
                    f"step key {step.key!r} of loop {loop.name!r} is also logged by teed row "
                    f"{_here(owner)} at {owner.position}; the loop's step_keys declare it "
                    "(it is the step, not a metric): drop the row.",
                    step.position or loop.position,
                )
    for catalog_file in catalog.files:
        for entry in catalog_file.bookkeeping:
            earlier = first.setdefault(entry.key, entry.position)
            if earlier is not entry.position:
                yield _error(
                    "DUPLICATE_BOOKKEEPING_KEY",
                    f"bookkeeping key {entry.key!r} is already declared at {earlier}; keep "
                    "one declaration with its reason.",
                    entry.position,
                )
                continue
            owner = next((r for key, r in logged.items() if entry.matches(key)), None)
            if owner is not None:
                yield _error(
                    "BOOKKEEPING_KEY_DECLARED",
                    f"bookkeeping key {entry.key!r} is also logged by teed row {_here(owner)} "
                    f"at {owner.position}; a key is a metric or bookkeeping, not both: drop "
                    "the bookkeeping entry or the row.",
                    entry.position,
                )


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


def _logger_keys(rows: list[MetricRow]) -> Iterator[Diagnostic]:
    """Each ``(prefix, logger_key)`` is teed once, except by a deprecated row and its replacement.

    Renaming a series while the code keeps logging the same key is done by
    adding the new row and deprecating the old one with ``replaced_by``: that
    pair (and only that pair) shares the key, and the tee records into both.
    """
    claimed: dict[tuple[str, str], list[MetricRow]] = {}
    for row in rows:
        if row.logger_key is None or not is_literal(row.logger_key):
            continue  # families: see _key_overlaps ('{{' is a literal brace, not one)
        clash = _first_clash(claimed, row)
        if clash is None:
            continue
        prefix, earlier = clash
        loops = shared_loops(row, earlier)
        if earlier.deprecated is not None or row.deprecated is not None:
            fix = (
                "only a deprecated row and the row its 'replaced_by' names may share a "
                "logger key; point 'replaced_by' at the other row, or give this row another "
                "key or prefix."
            )
        elif row_choice(row) is not None and row_choice(earlier) is not None:
            fix = (
                f"the rows' conditions ({row.condition!r}, {earlier.condition!r}) can hold "
                "together, so the run's configuration cannot say which row the key feeds: "
                "test one configuration value both ways ('config.x' and 'not config.x', or "
                "'config.x == \"a\"' and 'config.x == \"b\"'), or give this row another key "
                "or prefix."
            )
        else:
            fix = (
                "move the row to one owner or give it another prefix (to rename the series "
                "under the same key, deprecate the old row with 'replaced_by' naming the new; "
                "when the key means something else in each loop, scope the rows to disjoint "
                "loops with 'emitted_by'; when it means something else by the run's "
                "configuration, make both rows conditionally_required with conditions on one "
                "configuration value that cannot hold together: 'config.x' and "
                "'not config.x', or 'config.x == \"a\"' and 'config.x == \"b\"')."
            )
        yield _error(
            "DUPLICATE_LOGGER_KEY",
            f"logger key {row.logger_key!r} (prefix {prefix!r}) of {_here(row)} is "
            f"already teed by {earlier.name!r} at {earlier.position} in "
            f"{scope_text(loops)}; {fix}",
            row.position,
        )


def _first_clash(
    claimed: dict[tuple[str, str], list[MetricRow]], row: MetricRow
) -> tuple[str, MetricRow] | None:
    """Claim each plain ``(prefix, logger_key)`` of ``row``; the first clash, if any.

    A deprecated row and the row its ``replaced_by`` names may share a key (a pair at
    most), and so may rows whose ``emitted_by`` loops are disjoint (no loop logs
    both) and rows whose conditions no configuration meets together
    (:func:`~.precedence.exclusive`); prefix patterns are checked by :func:`_key_overlaps`.
    """
    found: tuple[str, MetricRow] | None = None
    for prefix in row.prefixes:
        if not is_literal(prefix):
            continue
        owners = claimed.setdefault((prefix, row.logger_key or ""), [])
        meeting = [o for o in owners if shared_loops(row, o) and not exclusive(row, o)]
        earlier = next((other for other in meeting if not renames(row, other)), None)
        if earlier is None and len(meeting) >= 2:  # a pair at most
            earlier = meeting[0]
        owners.append(row)
        if earlier is not None and found is None:
            found = (prefix, earlier)
    return found


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
            close = closest(target, (name for name in sorted_names if name != row.name))
            if close is None:
                # Nothing here it could misspell: a series of another catalog or
                # registry (a Weaver renamed_to), allowed and said.
                yield Diagnostic(
                    "REPLACED_BY_EXTERNAL",
                    Severity.WARNING,
                    f"'replaced_by' of {row.name!r} names {target!r}, which no row of this "
                    "catalog declares; it is taken as a series outside the catalog (export "
                    "weaver writes it as renamed_to). If it belongs here, declare it.",
                    where,
                )
                continue
            yield _error(
                "REPLACED_BY_UNKNOWN",
                f"'replaced_by' of {row.name!r} names {target!r}, which no catalog row "
                f"declares; did you mean {close!r}?",
                where,
            )


def _sums(rows: list[MetricRow], declared: Collection[str]) -> Iterator[Diagnostic]:
    """Each ``sum_of`` item names another declared series."""
    names = {row.name for row in rows} | set(declared)
    for row in rows:
        for index, part in enumerate(row.sum_of):
            if part != row.name and part in names:
                continue
            why = "the row itself" if part == row.name else "a series no catalog row declares"
            yield _error(
                "SUM_OF_UNKNOWN",
                f"'sum_of' of {row.name!r} names {part!r}, {why}; list the series whose "
                "values add up to this one.",
                row.where(f"sum_of[{index}]"),
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


# --- attributes and key families ----------------------------------------------------------


def check_attributes(catalog: Catalog, rows: list[MetricRow] | None = None) -> list[Diagnostic]:
    """Attribute clashes, unknown attribute references and overlapping key families."""
    rows = [row for _file, row in catalog.rows()] if rows is None else rows
    declared = [attribute for f in catalog.files for attribute in f.attributes]
    known = catalog.attributes()
    diagnostics = list(_attribute_clashes(declared))
    diagnostics.extend(_attribute_refs(rows, known))
    diagnostics.extend(_key_overlaps(rows, known))
    return diagnostics


def _attribute_clashes(declared: list[Attribute]) -> Iterator[Diagnostic]:
    names: dict[str, Attribute] = {}
    labels: dict[str, Attribute] = {}
    for attribute in declared:
        earlier = names.setdefault(attribute.name.lower(), attribute)
        if earlier is not attribute:
            same = (
                "is already declared"
                if earlier.name == attribute.name
                else (f"differs only in case from {earlier.name!r} declared")
            )
            yield _error(
                "DUPLICATE_ATTRIBUTE",
                f"attribute {attribute.name!r} {same} at {earlier.position}; declare it once "
                "(common attributes belong in catalog/attributes.yaml).",
                attribute.where("name"),
            )
            continue
        earlier = labels.setdefault(attribute.label, attribute)
        if earlier is not attribute:
            yield _error(
                "DUPLICATE_ATTRIBUTE_LABEL",
                f"attribute {attribute.name!r} becomes the Prometheus label "
                f"{attribute.label!r}, like {earlier.name!r} declared at {earlier.position}; "
                "rename one of them so a scrape keeps both.",
                attribute.where("name"),
            )


def _suggestion(name: str, known: Collection[str]) -> str:
    close = closest(name, known)
    if close:
        return f"did you mean {close!r}?"
    return "declare it under 'attributes:' (e.g. in catalog/attributes.yaml) or fix the name."


def _attribute_refs(rows: list[MetricRow], known: dict[str, Attribute]) -> Iterator[Diagnostic]:
    for row in rows:
        for ref in row.attributes:
            if ref.name not in known:
                yield _error(
                    "UNKNOWN_ATTRIBUTE",
                    f"row {row.name!r} lists attribute {ref.name!r}, which no catalog file "
                    f"declares; {_suggestion(ref.name, known)}",
                    ref.position,
                )
        if any(ref.derive is not None for ref in row.attributes):
            yield from _derivations(row, known)
        for ref in row.attributes:
            if ref.values and ref.name in known:
                yield from _subset(row, ref, known[ref.name])
        if row.condition is not None and condition_attributes(row.condition):
            yield from _condition_attributes(row, known)
        if not row.is_family:
            continue
        listed = set(row.attribute_names())
        for field_name, text in (
            ("logger_key", row.logger_key or ""),
            *(("prefix", prefix) for prefix in row.prefixes),
        ):
            for name in placeholders(text):
                where = row.positions.get(field_name) or row.where("prefixes")
                if name in listed:
                    kind = known[name].type if name in known else "string"
                    if kind not in ("string", "int"):
                        yield _error(
                            "PLACEHOLDER_TYPE",
                            f"{text!r} captures {{{name}}}, a {kind} attribute; a placeholder "
                            "captures text, so only a string or int attribute can fill it; "
                            "change the attribute's type or drop the placeholder.",
                            where,
                        )
                    continue
                if name in known:
                    fix = f"add '- ref: {name}' to the row's attributes."
                else:
                    fix = _suggestion(name, listed | set(known))
                yield _error(
                    "PLACEHOLDER_UNBOUND",
                    f"{text!r} captures {{{name}}}, which is not one of the attributes of "
                    f"row {row.name!r}; {fix}",
                    where,
                )


def _condition_attributes(row: MetricRow, known: dict[str, Attribute]) -> Iterator[Diagnostic]:
    """A condition naming ``{attribute}``: one the row's key captures, with an enum, whose
    condition for each value is an expression of the language."""
    text = row.condition or ""
    names = condition_attributes(text)
    where = row.where("condition")
    captured = {n for part in (row.logger_key or "", *row.prefixes) for n in placeholders(part)}
    refs = {ref.name: ref for ref in row.attributes}
    name = names[0]
    problem = None
    if len(names) > 1:
        problem = f"names {len(names)} attributes ({', '.join(names)}); name one"
    elif name not in captured or name not in refs or name not in known:
        problem = (
            f"names {{{name}}}, which the row's key does not capture; name an attribute "
            "a placeholder of its logger_key or prefix captures"
        )
    if problem is None:
        domain = refs[name].narrow(known[name]).domain
        if domain is None or len(domain) > MAX_CONDITION_ATTRIBUTE_VALUES:
            problem = (
                f"names {{{name}}}, which has no enum of at most "
                f"{MAX_CONDITION_ATTRIBUTE_VALUES} values to judge the condition for"
            )
        else:
            problem = _per_value_problem(text, name, domain)
    if problem is not None:
        yield _error(
            "CONDITION_ATTRIBUTE",
            f"the condition of row {row.name!r} {problem} (the condition is one per value "
            f"of the attribute, e.g. config.{{{name}}}.enabled or "
            f'config.workers["{{{name}}}"].enabled).',
            where,
        )


def _per_value_problem(text: str, name: str, domain: tuple[str, ...]) -> str | None:
    """Why the condition of some value is not an expression over the configuration."""
    for value in domain:
        spelled = for_value(text, name, value)
        try:
            parsed = parse_condition(spelled)
        except ConditionError as exc:
            return f"is {spelled!r} for {name}={value!r}, which is refused: {exc}"
        if parsed is None:
            return f"is {spelled!r} for {name}={value!r}, which is no expression over config"
    return None


def _subset(row: MetricRow, ref: AttributeRef, attribute: Attribute) -> Iterator[Diagnostic]:
    """A ref's ``values`` name values of the attribute's enum (an open set has none to cut)."""
    if not attribute.closed_values:
        what = "is an open enum (it takes other values)" if attribute.values else "lists no values"
        yield _error(
            "ATTRIBUTE_SUBSET",
            f"row {row.name!r} narrows attribute {ref.name!r} to {list(ref.values)}, but "
            f"{ref.name!r} {what} (it is open or a bool), so there is no enum to narrow; "
            "declare its values on the attribute (closed), or drop 'values' from the ref.",
            ref.values_positions[0] if ref.values_positions else ref.position,
        )
        return
    for index, text in enumerate(ref.values):
        if not any(value.value == text for value in attribute.values):
            yield _error(
                "ATTRIBUTE_SUBSET",
                f"row {row.name!r} narrows attribute {ref.name!r} to {text!r}, which is not "
                f"one of its values ({_allowed(attribute)}); write one of them, or add the "
                "value to the attribute.",
                _at(ref.values_positions, index, ref.position),
            )


def accepts_text(attribute: Attribute, text: str) -> bool:
    """Whether ``text`` (a value as the catalog writes it) is a value ``attribute`` takes."""
    value = parse_value(attribute.type, text)
    typed = attribute.typed_values() if attribute.closed_values else ()  # open: any value
    return value is not INVALID and value_fits(attribute.type, typed, value)


def _allowed(attribute: Attribute) -> str:
    if attribute.closed_values:
        return "one of " + ", ".join(repr(v.value) for v in attribute.values)
    if attribute.type == "bool":
        return "'true' or 'false'"
    return f"any {attribute.type} value"


def _derivations(row: MetricRow, known: dict[str, Attribute]) -> Iterator[Diagnostic]:
    """Each derived attribute of ``row``: a source on the row that a placeholder captures
    (or that is derived itself, without a loop), table keys the source takes, values the
    attribute takes, and ``required`` only when every point gets a value."""
    refs = {ref.name: ref for ref in row.attributes}
    captured = {
        name for text in (row.logger_key or "", *row.prefixes) for name in placeholders(text)
    }
    for ref in row.attributes:
        derive = ref.derive
        if derive is None:
            continue
        at_source = derive.source_position or ref.position
        if ref.name in captured:
            yield _error(
                "DERIVE_CAPTURED",
                f"attribute {ref.name!r} of row {row.name!r} is captured by a placeholder and "
                f"also derived from {derive.source!r}; a point gets it one way: drop the "
                "placeholder or the 'derive'.",
                derive.position or ref.position,
            )
            continue
        if derive.source not in refs:
            listed = sorted(set(refs) - {ref.name})
            close = closest(derive.source, listed)
            fix = (
                f"did you mean {close!r}?"
                if close
                else f"add '- ref: {derive.source}' to the row, or derive from one of its "
                f"attributes ({', '.join(listed) or 'none'})."
            )
            yield _error(
                "DERIVE_SOURCE_UNKNOWN",
                f"attribute {ref.name!r} of row {row.name!r} is derived from "
                f"{derive.source!r}, which is not an attribute of the row; {fix}",
                at_source,
            )
            continue
        chain = [ref.name]
        step: str | None = derive.source
        looped = False
        while step is not None and step in refs:
            if step in chain:
                looped = True
                break
            chain.append(step)
            upstream = refs[step].derive
            step = upstream.source if upstream is not None else None
        if looped:
            cycle = chain[chain.index(step or "") :]
            order = list(refs)
            if min(cycle, key=order.index) != ref.name:
                continue  # reported once, at the loop's first attribute in the row
            yield _error(
                "DERIVE_CYCLE",
                f"attribute {ref.name!r} of row {row.name!r} is derived in a loop "
                f"({' -> '.join([*chain, step or ''])}); derive from an attribute a "
                "placeholder captures.",
                at_source,
            )
            continue
        root = chain[-1]
        if root not in captured:
            yield _error(
                "DERIVE_SOURCE_NOT_CAPTURED",
                f"attribute {ref.name!r} of row {row.name!r} is derived from "
                f"{derive.source!r}, but no placeholder of the row's logger key or prefixes "
                f"captures {root!r}, so the tee never has a value to derive from; derive "
                "from a captured attribute or capture the source with a placeholder.",
                at_source,
            )
            continue
        source = known.get(derive.source)
        target = known.get(ref.name)
        if source is None or target is None:
            continue  # reported as UNKNOWN_ATTRIBUTE
        # As the row sees them: the generated row lists only its subsets, and importing it
        # refuses a table entry outside them.
        source, target = refs[derive.source].narrow(source), ref.narrow(target)
        yield from _derivation_table(row, ref, source, target, refs[derive.source])


def _derivation_table(
    row: MetricRow,
    ref: AttributeRef,
    source: Attribute,
    target: Attribute,
    source_ref: AttributeRef,
) -> Iterator[Diagnostic]:
    derive = ref.derive
    if derive is None:
        return
    for index, (key, value) in enumerate(derive.table):
        if not accepts_text(source, key):
            yield _error(
                "DERIVE_MAP_KEY",
                f"the table deriving {ref.name!r} of row {row.name!r} maps {key!r}, which "
                f"{source.name!r} never takes ({_allowed(source)}); fix or drop the entry.",
                _at(derive.key_positions, index, ref.position),
            )
        if not accepts_text(target, value):
            yield _error(
                "DERIVE_MAP_VALUE",
                f"the table deriving {ref.name!r} of row {row.name!r} maps {key!r} to "
                f"{value!r}, which {ref.name!r} does not take ({_allowed(target)}); write "
                "one of its values.",
                _at(derive.value_positions, index, ref.position),
            )
    if derive.default is not None and not accepts_text(target, derive.default):
        yield _error(
            "DERIVE_MAP_VALUE",
            f"the default of the table deriving {ref.name!r} of row {row.name!r} is "
            f"{derive.default!r}, which {ref.name!r} does not take ({_allowed(target)}); "
            "write one of its values.",
            derive.default_position or ref.position,
        )
    if ref.requirement_level != "required" or ref.requirement_position is None:
        return
    if source_ref.requirement_level != "required":
        yield _error(
            "DERIVE_NOT_TOTAL",
            f"derived attribute {ref.name!r} of row {row.name!r} is required, but its source "
            f"{source.name!r} is {source_ref.requirement_level}, so a point without the source "
            "gets no value; make the source's table total and required, or leave "
            "requirement_level out (recommended).",
            ref.requirement_position,
        )
        return
    domain = source.domain
    mapped = {key for key, _value in derive.table}
    missing = [v for v in domain or () if v not in mapped] if derive.default is None else []
    if derive.default is None and (domain is None or missing):
        unmapped = ", ".join(repr(v) for v in missing) if missing else "any value it is not given"
        yield _error(
            "DERIVE_NOT_TOTAL",
            f"derived attribute {ref.name!r} of row {row.name!r} is required, but the tee "
            f"leaves it unset when {source.name!r} is {unmapped}; map every value, add a "
            "'default', or leave requirement_level out (recommended).",
            ref.requirement_position,
        )


def _at(positions: tuple[Position, ...], index: int, fallback: Position) -> Position:
    return positions[index] if index < len(positions) else fallback


def _key_overlaps(rows: list[MetricRow], known: dict[str, Attribute]) -> Iterator[Diagnostic]:
    """Two rows sharing a logged key with neither more specific, reported at the later row.

    Where a literal key meets a family, or one family is more specific than
    another, the more specific row takes the key (see :mod:`codegen.catalog.precedence`).
    """
    for meeting in meetings(rows, known):
        if meeting.winner is not None:
            continue
        earlier, later = meeting.first, meeting.second
        prefix, key = meeting.prefix, meeting.key
        logged = qualified_key(prefix, key)
        yield _error(
            "KEY_PATTERN_OVERLAP",
            f"logger key {later.logger_key!r} of {later.name!r} and "
            f"{earlier.logger_key!r} of {earlier.name!r} (declared at "
            f"{earlier.position}) could both match the logged key {logged!r} "
            f"(prefix {prefix!r}) in {scope_text(shared_loops(later, earlier))}, and "
            "neither is more specific (the same literal text and placeholders of the same "
            "widths); make the placeholder's attribute an enum that excludes that value, "
            "give one key or prefix more literal text, or scope the rows to disjoint loops "
            "with 'emitted_by'.",
            later.where("logger_key"),
        )


# --- Presence: loops are declared once, and emitted_by names declared loops ---


def _loop_names(catalog: Catalog) -> Iterator[Diagnostic]:
    first: dict[str, Position] = {}
    for catalog_file in catalog.files:
        for loop in catalog_file.loops:
            earlier = first.setdefault(loop.name, loop.position)
            if earlier is not loop.position:
                yield _error(
                    "DUPLICATE_LOOP",
                    f"loop {loop.name!r} is already declared at {earlier}; keep one "
                    "declaration (loops are shared by the whole catalog).",
                    loop.position,
                )
    known = sorted(first)
    for catalog_file in catalog.files:
        uses = [
            (name, catalog_file.where(f"emitted_by[{i}]"), "the file's 'emitted_by'")
            for i, name in enumerate(catalog_file.emitted_by)
        ]
        for row in catalog_file.teed:
            if "emitted_by" not in row.positions:
                continue  # inherited from the file: reported there once
            uses.extend(
                (name, row.where(f"emitted_by[{i}]"), f"'emitted_by' of {row.name!r}")
                for i, name in enumerate(row.emitted_by)
            )
        for name, where, subject in uses:
            if name in first:
                continue
            close = closest(name, known)
            if close:
                fix = f"did you mean {close!r}?"
            elif known:
                fix = f"declared loops: {', '.join(known)}."
            else:
                fix = "declare it under 'loops:' in a catalog file (e.g. catalog/common.yaml)."
            yield _error(
                "UNKNOWN_LOOP",
                f"{subject} names loop {name!r}, which no catalog file declares; {fix}",
                where,
            )
