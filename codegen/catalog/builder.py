"""Turn a loaded, schema-checked node tree into :mod:`codegen.catalog.model` objects.

Only what is valid is built: a row with any error under it is left out (its
error is already reported), so renderers never see half-valid data. Each field
keeps the position of its value in ``positions``; nested fields use dotted
keys (``deprecated.since``) and list items an index (``no_lint[0]``).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Final

import yaml

from metric_catalog.series_rules import adjacent_placeholders, placeholders, unit_scale
from metric_catalog.value_rules import ValueRange, parse_bound
from metric_catalog.vocabulary import DEFAULT_PREFIX, METRIC_NAME_PREFIX, registry_key

from .annotations import EMPTY as NO_ANNOTATIONS
from .annotations import MAX_DEPTH, Annotations, annotation_problem, annotations_from
from .conditions import ConditionError, condition_attributes, parse_condition
from .diagnostics import Diagnostic, Position, Severity, position_texts
from .loader import NonString, YMap, YNode, YScalar, YSeq, subtree_bad
from .model import (
    Attribute,
    AttributeRef,
    AttributeValue,
    Bookkeeping,
    CatalogFile,
    Deprecation,
    Derivation,
    Loop,
    MetricRow,
    Section,
    StepKey,
)
from .schema_check import SchemaResult

__all__ = ["BuiltFile", "FieldPositions", "build_file", "declared_names"]

_FILE_FIELDS = ("owner", "module", "description", "prefix", "namespace")


@dataclass(frozen=True, slots=True)
class BuiltFile:
    """The model of one file (``None`` when its header is unusable) and new findings."""

    catalog_file: CatalogFile | None
    diagnostics: tuple[Diagnostic, ...]


def _text(node: YNode | None) -> str | None:
    if isinstance(node, YScalar) and isinstance(node.value, str) and not node.bad:
        return node.value
    return None


def declared_names(root: YMap) -> set[str]:
    """Every string ``name`` a row of this file declares, valid or not.

    Used so ``replaced_by`` pointing at a row that failed for another reason is
    not reported a second time as unknown.
    """
    names: set[str] = set()
    for section in ("teed", "recorded"):
        rows = root.values.get(section)
        if not isinstance(rows, YSeq):
            continue
        for row in rows.items:
            if isinstance(row, YMap):
                name = _text(row.values.get("name"))
                if name is not None:
                    names.add(name)
    return names


def build_file(root: YMap, display: str, schema: SchemaResult) -> BuiltFile:
    """Build the :class:`CatalogFile` for ``root`` from its valid parts."""
    header: dict[str, str] = {}
    for name in _FILE_FIELDS:
        node = root.values.get(name)
        value = _text(node)
        if value is not None and schema.is_clean((name,)):
            header[name] = value
    # A broken prefix would put every teed row under the wrong key: build nothing.
    if any(name in root.values and name not in header for name in _FILE_FIELDS):
        return BuiltFile(None, ())
    if not all(name in header for name in ("owner", "module", "description")):
        return BuiltFile(None, ())
    # Like a broken prefix, a broken default emitted_by would misjudge every row.
    file_emitted_by = _strings(root.values.get("emitted_by"))
    if "emitted_by" in root.values and (
        file_emitted_by is None or not schema.is_clean(("emitted_by",))
    ):
        return BuiltFile(None, ())
    diagnostics: list[Diagnostic] = []
    file_prefixes = _file_prefixes(root, header, schema, diagnostics)
    if file_prefixes is None:
        return BuiltFile(None, tuple(diagnostics))
    file_prefix = file_prefixes[0]
    namespace = header.get("namespace", METRIC_NAME_PREFIX)
    sections: dict[Section, list[MetricRow]] = {"teed": [], "recorded": []}
    for section in ("teed", "recorded"):
        rows = root.values.get(section)
        if not isinstance(rows, YSeq) or rows.bad:
            continue
        for index, row in enumerate(rows.items):
            if not isinstance(row, YMap):
                continue
            name_ok = _check_name(
                row, schema.is_clean((section, index, "name")), namespace, diagnostics
            )
            if not name_ok or not schema.is_clean((section, index)):
                continue
            parts = _row_parts(row)
            if parts is None or not _presence_ok(row, parts[0], diagnostics):
                continue
            if not _temporality_ok(row, parts[0], diagnostics):
                continue
            if not _schedule_ok(row, parts[0], diagnostics):
                continue
            value_range = _value_range(row, parts[0], diagnostics)
            if value_range is False:
                continue
            extras = _row_extras(row, section, file_prefixes, diagnostics)
            if extras is None:
                continue
            annotations = _annotations(row, "row", diagnostics)
            if annotations is None:
                continue
            built = _with_values(_build_row(row, section, extras, parts), row, value_range)
            if namespace != METRIC_NAME_PREFIX:
                built = replace(built, namespace=namespace)
            if annotations:
                built = replace(built, annotations=annotations)
            if section == "teed":
                built = _with_presence(built, row, parts[0], file_emitted_by or ())
            sections[section].append(built)
    catalog_file = CatalogFile(
        path=display,
        owner=header["owner"],
        module=header["module"],
        description=header["description"],
        teed=tuple(sections["teed"]),
        recorded=tuple(sections["recorded"]),
        prefix=file_prefix,
        positions=_file_positions(root),
        attributes=_attributes(root, display, schema, diagnostics),
        other_prefixes=file_prefixes[1:],
        loops=_loops(root, schema),
        emitted_by=file_emitted_by or (),
        bookkeeping=_bookkeeping(root, display, schema),
        namespace=namespace,
    )
    return BuiltFile(catalog_file, tuple(diagnostics))


def _annotations(item: YMap, what: str, diagnostics: list[Diagnostic]) -> Annotations | None:
    """A row's or attribute's ``annotations``; ``None`` (and a finding) when unusable."""
    node = item.values.get("annotations")
    if node is None:
        return NO_ANNOTATIONS
    found, problem = _annotations_of_node(node)
    if found is None:
        name = _text(item.values.get("name")) or "?"
        diagnostics.append(
            _error(
                "ANNOTATIONS_INVALID",
                f"'annotations' of {what} {name!r} {problem}.",
                node.position,
            )
        )
    return found


def _annotations_of_node(node: YNode) -> tuple[Annotations | None, str | None]:
    """A loaded ``annotations`` node as :class:`Annotations`, or ``None`` and the problem."""
    if not _depth_ok(node):  # before converting: a hostile tree costs no deep recursion
        return None, f"nests deeper than {MAX_DEPTH} levels; flatten it"
    data = _plain(node)
    problem = annotation_problem(data)
    if problem is not None or not isinstance(data, dict):
        return None, problem
    return annotations_from(data), None


def _depth_ok(node: YNode) -> bool:
    """Whether no mapping or list under ``node`` (itself level 1) is deeper than MAX_DEPTH."""
    stack: list[tuple[YNode, int]] = [(node, 1)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, YScalar):
            continue
        if depth > MAX_DEPTH:
            return False
        children = current.values.values() if isinstance(current, YMap) else current.items
        stack.extend((child, depth + 1) for child in children)
    return True


# Plain scalars YAML reads as these types keep them; any other (a date) stays its text.
_TYPED_TAGS: Final = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("null", "bool", "int", "float")
)


def _plain(node: YNode) -> object:
    """The node as plain data: YAML's own types for plain numbers, booleans and nulls."""
    if isinstance(node, YScalar):
        value = node.value
        return _typed(value) if isinstance(value, NonString) else value
    if isinstance(node, YMap):
        return {key: _plain(child) for key, child in node.values.items()}
    return [_plain(child) for child in node.items]


def _typed(value: NonString) -> object:
    """A plain scalar YAML reads as a null, boolean or number, as that; else its text."""
    if value.tag not in _TYPED_TAGS:
        return value.text
    try:
        return yaml.safe_load(value.text)
    except yaml.YAMLError:
        return value.text


def _file_positions(root: YMap) -> dict[str, Position]:
    positions = {
        name: node.position
        for name, node in root.values.items()
        if name
        in (*_FILE_FIELDS, "teed", "recorded", "attributes", "prefixes", "loops", "bookkeeping")
    }
    # Presence: the file's default emitted_by, item by item (emitted_by[0]).
    emitted = root.values.get("emitted_by")
    if isinstance(emitted, YSeq):
        positions["emitted_by"] = emitted.position
        for index, item in enumerate(emitted.items):
            positions[f"emitted_by[{index}]"] = item.position
    return positions


# --- Presence: requirement level, condition, emitted_by, first_step, loops ---


def _strings(node: YNode | None) -> tuple[str, ...] | None:
    """The items of a list of strings, ``None`` when absent or not such a list."""
    if not isinstance(node, YSeq) or subtree_bad(node):
        return None
    items = tuple(_text(item) for item in node.items)
    if any(item is None for item in items):
        return None
    return tuple(item for item in items if item is not None)


def _loops(root: YMap, schema: SchemaResult) -> tuple[Loop, ...]:
    """The file's schema-clean ``loops`` entries."""
    node = root.values.get("loops")
    if not isinstance(node, YSeq) or node.bad:
        return ()
    loops = []
    for index, item in enumerate(node.items):
        if not isinstance(item, YMap) or subtree_bad(item):
            continue
        if not schema.is_clean(("loops", index)):
            continue
        name, description = _text(item.values.get("name")), _text(item.values.get("description"))
        if name is None or description is None:
            continue
        signature = _strings(item.values.get("signature")) or ()
        loops.append(Loop(name, description, signature, item.position, _step_keys(item)))
    return tuple(loops)


def _step_keys(loop: YMap) -> tuple[StepKey, ...]:
    """A schema-clean loop's ``step_keys``."""
    node = loop.values.get("step_keys")
    if not isinstance(node, YSeq):
        return ()
    found = []
    for item in node.items:
        if isinstance(item, YMap):
            key = _text(item.values.get("key"))
            if key is not None:
                prefix = _text(item.values.get("prefix")) or ""
                found.append(StepKey(key, prefix, item.values["key"].position))
    return tuple(found)


def _bookkeeping(root: YMap, display: str, schema: SchemaResult) -> tuple[Bookkeeping, ...]:
    """The file's schema-clean ``bookkeeping`` entries."""
    node = root.values.get("bookkeeping")
    if not isinstance(node, YSeq) or node.bad:
        return ()
    entries = []
    for index, item in enumerate(node.items):
        if not isinstance(item, YMap) or subtree_bad(item):
            continue
        if not schema.is_clean(("bookkeeping", index)):
            continue
        key, reason = _text(item.values.get("key")), _text(item.values.get("reason"))
        if key is None or reason is None:
            continue
        at = item.values["key"].position
        entries.append(Bookkeeping(key, reason, at, display))
    return tuple(entries)


def _presence_ok(row: YMap, texts: dict[str, str], diagnostics: list[Diagnostic]) -> bool:
    """``condition`` goes with ``conditionally_required`` and only with it; else report."""
    level = texts.get("requirement_level")
    if level == "conditionally_required" and "condition" not in texts:
        diagnostics.append(
            Diagnostic(
                "CONDITION_MISSING",
                Severity.ERROR,
                "a conditionally_required row needs a 'condition' saying when it is logged; "
                'add e.g. condition: "when validation runs (val_period > 0)", or use '
                "required or recommended.",
                row.values["requirement_level"].position,
            )
        )
        return False
    if (
        level == "conditionally_required"
        and "condition" in texts
        and not condition_attributes(texts["condition"])  # one per value: checked with the rows
    ):
        try:
            parse_condition(texts["condition"])
        except ConditionError as exc:
            diagnostics.append(
                Diagnostic(
                    "CONDITION_INVALID",
                    Severity.ERROR,
                    f"condition {texts['condition']!r} is an expression over the run's "
                    f"configuration but {exc}; allowed: config.<path>, literals, == != < <= "
                    "> >= in, and/or/not (or write the condition as prose, naming no config)",
                    row.values["condition"].position,
                )
            )
            return False
    if "condition" in texts and level != "conditionally_required":
        diagnostics.append(
            Diagnostic(
                "CONDITION_UNUSED",
                Severity.ERROR,
                f"'condition' applies only to requirement_level: conditionally_required, not "
                f"{level or 'recommended (the default)'}; set requirement_level: "
                "conditionally_required or drop the condition.",
                row.values["condition"].position,
            )
        )
        return False
    return True


def _temporality_ok(row: YMap, texts: dict[str, str], diagnostics: list[Diagnostic]) -> bool:
    """``temporality: cumulative`` only on a counter; else report where it is written."""
    if texts.get("temporality", "delta") == "delta" or texts.get("kind") == "counter":
        return True
    diagnostics.append(
        Diagnostic(
            "TEMPORALITY_NOT_COUNTER",
            Severity.ERROR,
            f"temporality: cumulative says the code logs a running total, which the tee "
            f"turns into a counter's increments; this row is a {texts.get('kind')}. Declare "
            "kind: counter, or drop temporality (a gauge shows the running total as logged).",
            row.values["temporality"].position,
        )
    )
    return False


def _schedule_ok(row: YMap, texts: dict[str, str], diagnostics: list[Diagnostic]) -> bool:
    """``phase`` and ``at_last_step`` shape an ``every`` schedule: refuse them without one."""
    if "every" in texts:
        return True
    ok = True
    for name in ("phase", "at_last_step"):
        if name in texts:
            diagnostics.append(
                Diagnostic(
                    "SCHEDULE_WITHOUT_EVERY",
                    Severity.ERROR,
                    f"{name!r} shapes a periodic row's schedule, but the row has no 'every'; "
                    f'add the period (every: "10", or every: config.trainer.test_freq), or '
                    f"drop {name!r}.",
                    row.values[name].position,
                )
            )
            ok = False
    return ok


# --- What a value may be: range, goal, value_type, sum_of ---------------------------------

_LOWER: Final = (("min", False), ("above", True))
_UPPER: Final = (("max", False), ("below", True))


def _range_error(message: str, node: YNode) -> Diagnostic:
    return Diagnostic("INVALID_RANGE", Severity.ERROR, message, node.position)


def _bound(
    node: YMap, sides: tuple[tuple[str, bool], ...], diagnostics: list[Diagnostic]
) -> tuple[float | None, bool, YNode | None] | None:
    """One side of a range: ``(value, exclusive, node)``; ``None`` (reported) when invalid."""
    written = [(name, open_) for name, open_ in sides if name in node.values]
    if len(written) > 1:
        first, second = written[0][0], written[1][0]
        diagnostics.append(
            _range_error(
                f"the range sets both '{first}' and '{second}', two bounds on one side; keep "
                f"one ('{first}' includes its value, '{second}' excludes it).",
                node.values[second],
            )
        )
        return None
    if not written:
        return None, False, None
    name, exclusive = written[0]
    value_node = node.values[name]
    text = _text(value_node)
    number = None if text is None else parse_bound(text)
    if number is None:
        diagnostics.append(
            _range_error(
                f"range.{name} is {text!r}, not a finite number; write a number in quotes "
                f'such as "0" or "1.5", or leave the bound out for no bound.',
                value_node,
            )
        )
        return None
    return number, exclusive, value_node


def _value_range(
    row: YMap, texts: dict[str, str], diagnostics: list[Diagnostic]
) -> ValueRange | bool | None:
    """The row's declared range (``None``: none written); ``False`` (reported) when invalid."""
    node = row.values.get("range")
    if not isinstance(node, YMap):
        return None
    lower = _bound(node, _LOWER, diagnostics)
    upper = _bound(node, _UPPER, diagnostics)
    if lower is None or upper is None:
        return False
    low, low_open, low_node = lower
    high, high_open, high_node = upper
    if low is not None and high is not None and high_node is not None:
        empty = low > high or (low == high and (low_open or high_open))
        if empty:
            diagnostics.append(
                _range_error(
                    f"range.{'below' if high_open else 'max'} {high:g} is not above "
                    f"range.{'above' if low_open else 'min'} {low:g}, so no value fits; swap "
                    "them, or fix the one that is wrong.",
                    high_node,
                )
            )
            return False
    if not _bounds_scale(texts.get("unit", ""), ((low, low_node), (high, high_node)), diagnostics):
        return False
    if texts.get("value_type") == "int":
        for number, where in ((low, low_node), (high, high_node)):
            if number is not None and where is not None and not number.is_integer():
                diagnostics.append(
                    _range_error(
                        f"the row's values are integers (value_type: int) but a range bound is "
                        f"{number:g}; write a whole number, or drop value_type: int.",
                        where,
                    )
                )
                return False
    return ValueRange(low, high, low_open=low_open, high_open=high_open)


def _bounds_scale(
    unit: str, bounds: tuple[tuple[float | None, YNode | None], ...], diagnostics: list[Diagnostic]
) -> bool:
    """Whether every bound stays a finite number in the exported unit (else a finding).

    A bound is written in the unit the code logs (``GiBy``) and exported in its base
    (``By``): ``1e300`` GiB is no float in bytes, and an infinite bound would reach the
    generated module (which refuses it at import) and the dashboards (``Infinity`` is
    not JSON).
    """
    base, numerator, denominator = unit_scale(unit)
    factor = numerator / denominator
    for number, where in bounds:
        if number is None or where is None or math.isfinite(number * factor):
            continue
        diagnostics.append(
            _range_error(
                f"range bound {number:g} in {unit} is beyond the largest number once "
                f"exported in {base} (x{factor:g}); write a smaller bound, or leave it out "
                "for no bound.",
                where,
            )
        )
        return False
    return True


_VALUE_FIELDS: Final = ("goal", "value_type", "sum_of", "non_finite")
"""A row's fields saying what its values may be, besides ``range``."""


def _with_values(built: MetricRow, row: YMap, value_range: ValueRange | bool | None) -> MetricRow:
    """``built`` with what its values may be (range, goal, value_type, sum_of, non_finite)."""
    values = row.values
    if value_range is None and values.keys().isdisjoint(_VALUE_FIELDS):
        return built
    return replace(
        built,
        declared_range=value_range if isinstance(value_range, ValueRange) else None,
        goal=_text(values.get("goal")) or "",
        value_type=_text(values.get("value_type")) or "number",
        sum_of=_strings(values.get("sum_of")) or (),
        non_finite=_text(values.get("non_finite")) or "reported",
    )


def _with_presence(
    built: MetricRow, row: YMap, texts: dict[str, str], file_emitted_by: tuple[str, ...]
) -> MetricRow:
    """``built`` with the row's presence fields (the file's emitted_by by default)."""
    level = texts.get("requirement_level")
    emitted_by = _strings(row.values.get("emitted_by"))
    first_step = texts.get("first_step")
    every = texts.get("every")
    if (
        level is None
        and emitted_by is None
        and first_step is None
        and every is None
        and not file_emitted_by
    ):
        return built
    return replace(
        built,
        requirement_level=level or built.requirement_level,
        condition=texts.get("condition"),
        emitted_by=file_emitted_by if emitted_by is None else emitted_by,
        first_step=None if first_step is None or not first_step.isdigit() else int(first_step),
        first_step_config=(
            None if first_step is None or first_step.isdigit() else first_step.strip()
        ),
        every=None if every is None or not every.isdigit() else int(every),
        every_config=None if every is None or every.isdigit() else every.strip(),
        phase=int(texts.get("phase", "0")),
        at_last_step=texts.get("at_last_step") == "true",
    )


class FieldPositions(Mapping[str, Position]):
    """A built row's field positions, each :class:`Position` built only when looked up.

    Positions are needed for diagnostics and a few reports, not for rendering,
    so the builder keeps the loader's (line, column) pairs.
    """

    __slots__ = ("_marks", "_path")

    def __init__(self, path: str, marks: dict[str, tuple[int, int]]) -> None:
        self._path = path
        self._marks = marks

    def __getitem__(self, key: str) -> Position:
        line, column = self._marks[key]
        return Position(self._path, line, column)

    def __iter__(self) -> Iterator[str]:
        return iter(self._marks)

    def __len__(self) -> int:
        return len(self._marks)

    def __contains__(self, key: object) -> bool:
        return key in self._marks

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict(self)!r})"

    def texts(self) -> dict[str, str]:
        """Each field's position as text, by field name in sorted order (no Position built)."""
        return position_texts(self._path, self._marks)


def _row_parts(row: YMap) -> tuple[dict[str, str], dict[str, tuple[int, int]]] | None:
    """A row's string fields and field positions; ``None`` when a load error is under it.

    One pass over the row instead of :func:`subtree_bad`, ``_text`` per field and
    a position per field. Nested fields use dotted keys, list items an index.
    """
    if row.bad:
        return None
    texts: dict[str, str] = {}
    marks: dict[str, tuple[int, int]] = {}
    for name, node in row.values.items():
        if node.bad:
            return None
        marks[name] = (node.line, node.column)
        if type(node) is YScalar:
            if type(node.value) is str:
                texts[name] = node.value
        elif type(node) is YMap:
            for sub, sub_node in node.values.items():
                if subtree_bad(sub_node):
                    return None
                marks[f"{name}.{sub}"] = (sub_node.line, sub_node.column)
                if type(sub_node) is YScalar and type(sub_node.value) is str:
                    texts[f"{name}.{sub}"] = sub_node.value
        elif type(node) is YSeq:
            for index, item in enumerate(node.items):
                if subtree_bad(item):
                    return None
                marks[f"{name}[{index}]"] = (item.line, item.column)
    return texts, marks


def _check_name(
    row: YMap, schema_clean: bool, namespace: str, diagnostics: list[Diagnostic]
) -> bool:
    """True when the row's name maps to a registry key in the file's ``namespace``;
    otherwise report why (a name outside the namespace says which to write)."""
    node = row.values.get("name")
    name = _text(node)
    if name is None or node is None or not schema_clean:
        return False
    try:
        registry_key(name, namespace)
    except ValueError as exc:
        # Outside the namespace is the shape the schema's pattern checked before files
        # could declare one: the same code as then, with the name to write.
        code = "INVALID_NAME" if name.startswith(namespace) else "INVALID_FORMAT"
        diagnostics.append(Diagnostic(code, Severity.ERROR, f"{exc}.", node.position))
        return False
    return True


def _build_row(
    row: YMap,
    section: Section,
    extras: _Extras,
    parts: tuple[dict[str, str], dict[str, tuple[int, int]]],
) -> MetricRow:
    texts, marks = parts
    values = row.values
    deprecated: Deprecation | None = None
    if type(values.get("deprecated")) is YMap:
        deprecated = Deprecation(
            since=texts.get("deprecated.since", ""),
            replaced_by=texts.get("deprecated.replaced_by"),
            note=texts.get("deprecated.note", ""),
        )
    no_lint_node = values.get("no_lint")
    no_lint = (
        tuple(t for item in no_lint_node.items if (t := _text(item)) is not None)
        if isinstance(no_lint_node, YSeq)
        else ()
    )
    teed = section == "teed"
    prefixes = extras.prefixes
    # A prefixed unit (ms) states what the code logs; the series is exported in its base (s).
    declared_unit = texts.get("unit", "")
    exported_unit = unit_scale(declared_unit)[0]
    return MetricRow(
        section=section,
        name=texts.get("name", ""),
        # A non-scalar row (a W&B table) creates no instrument: its kind may be left out.
        kind=texts.get("kind", "gauge" if _non_scalar(texts) else ""),
        unit=exported_unit,
        logged_unit=declared_unit if declared_unit != exported_unit else "",
        description=texts.get("description", ""),
        stability=texts.get("stability") or "development",
        position=row.position,
        logger_key=texts.get("logger_key") if teed else None,
        prefix=prefixes[0] if teed and prefixes else None,
        deprecated=deprecated,
        no_lint=no_lint,
        positions=FieldPositions(row.path, marks),
        attributes=extras.attributes,
        other_prefixes=prefixes[1:] if teed and prefixes else (),
        cardinality_limit=extras.cardinality_limit,
        temporality=texts.get("temporality", "delta") if teed else "delta",
        value_type=texts.get("value_type", "number") if teed else "number",
        # "step" is the default axis, spelled out.
        step_axis=_step_axis(texts.get("step_axis", "")) if teed else "",
        note=texts.get("note", ""),
    )


def _non_scalar(texts: Mapping[str, str]) -> bool:
    """Whether a row declares a value that is not a number (``value_type: table``...)."""
    return texts.get("value_type", "number") not in ("number", "int")


def _step_axis(text: str) -> str:
    """A row's ``step_axis``, ``""`` for the training step (absent, or ``step``)."""
    return "" if text == "step" else text


# --- attributes, prefixes and key families -------------------------------------------------


def _error(code: str, message: str, position: Position) -> Diagnostic:
    return Diagnostic(code, Severity.ERROR, message, position)


def _file_prefixes(
    root: YMap, header: dict[str, str], schema: SchemaResult, diagnostics: list[Diagnostic]
) -> tuple[str, ...] | None:
    """The file's default prefixes; ``None`` (build nothing) when they are unusable."""
    node = root.values.get("prefixes")
    if node is None:
        return (header.get("prefix", DEFAULT_PREFIX),)
    texts = _strings(node)
    if texts is None or not texts or not schema.is_clean(("prefixes",)):
        return None
    if "prefix" in header:
        diagnostics.append(
            _error(
                "PREFIX_AND_PREFIXES",
                "the file sets both 'prefix' and 'prefixes'; keep one ('prefixes: "
                f"[{header['prefix']!r}, ...]' holds the first prefix too).",
                node.position,
            )
        )
        return None
    return texts


_EXTRA_FIELDS: Final = frozenset({"prefixes", "attributes", "cardinality_limit"})


@dataclass(frozen=True, slots=True)
class _Extras:
    prefixes: tuple[str, ...] | None
    attributes: tuple[AttributeRef, ...]
    cardinality_limit: int | None


def _printable_key(node: YNode | None, diagnostics: list[Diagnostic]) -> bool:
    """Whether a logger key is printable text (what the schema's pattern cannot say exactly).

    The pattern refuses control and format characters of the Basic Multilingual
    Plane; this catches the rest (a trailing line break, which ``$`` lets
    through, and characters beyond U+FFFF such as the invisible tag characters).
    """
    key = _text(node)
    if node is None or key is None or key.isprintable():
        return True
    bad = next(ch for ch in key if not ch.isprintable())
    what = unicodedata.name(bad, "a control character")
    diagnostics.append(
        _error(
            "INVALID_FORMAT",
            f"logger key {key!r} holds U+{ord(bad):04X} ({what}), which is not printable; "
            "a logger key is printable text: remove the character.",
            node.position,
        )
    )
    return False


def _row_extras(
    row: YMap, section: Section, file_prefixes: tuple[str, ...], diagnostics: list[Diagnostic]
) -> _Extras | None:
    """A row's prefixes, attribute refs and budget; ``None`` (and a finding) when invalid."""
    values = row.values
    if section == "teed" and not _printable_key(values.get("logger_key"), diagnostics):
        return None
    if values.keys().isdisjoint(_EXTRA_FIELDS):
        # The common row: one prefix, no attributes, no budget.
        single = _text(values.get("prefix")) if section == "teed" else None
        plain = (single,) if single is not None else file_prefixes
        key = _text(values.get("logger_key")) or ""
        if "{" not in key and not any("{" in prefix for prefix in plain):
            return _Extras(plain if section == "teed" else None, (), None)
    prefixes: tuple[str, ...] | None = None
    if section == "teed":
        prefixes = _teed_prefixes(values, file_prefixes, diagnostics)
        if prefixes is None:
            return None
    key = _text(values.get("logger_key")) or ""
    family = any("{" in text for text in (key, *(prefixes or ())))
    # An attribute every point carries: a placeholder of the key or of every prefix (one
    # captured by some prefixes only, eval_ of ["", "{hf.split}_"], is absent on the rest).
    wanted: set[str] = set()
    if family:
        wanted = set(placeholders(key))
        if prefixes:
            wanted |= set.intersection(*(set(placeholders(prefix)) for prefix in prefixes))
        if not _placeholders_apart(row, key, prefixes or (), diagnostics):
            return None
    refs = _attribute_refs(values.get("attributes"), wanted, diagnostics)
    if refs is None:
        return None
    limit_text = _text(values.get("cardinality_limit"))
    return _Extras(prefixes, refs, int(limit_text) if limit_text else None)


def _teed_prefixes(
    values: Mapping[str, YNode], file_prefixes: tuple[str, ...], diagnostics: list[Diagnostic]
) -> tuple[str, ...] | None:
    """A teed row's prefixes: its ``prefixes``, its ``prefix`` or the file's; ``None`` (and
    a finding) when it sets both."""
    listed = _strings(values.get("prefixes"))
    single = _text(values.get("prefix"))
    if listed is not None and single is not None:
        diagnostics.append(
            _error(
                "PREFIX_AND_PREFIXES",
                "the row sets both 'prefix' and 'prefixes'; keep one ('prefixes' "
                "lists every prefix, the first included).",
                values["prefixes"].position,
            )
        )
        return None
    if listed is not None:
        return listed
    return (single,) if single is not None else file_prefixes


def _placeholders_apart(
    row: YMap, key: str, prefixes: tuple[str, ...], diagnostics: list[Diagnostic]
) -> bool:
    """Whether the key and each prefix keep literal text between placeholders and no name
    is captured by both a prefix and the key (else a finding): ``{a}{b}`` cannot say where
    one captured value ends."""
    values = row.values
    for field_name, text in (("logger_key", key), *(("prefix", p) for p in prefixes)):
        pair = adjacent_placeholders(text)
        if pair is not None:
            where = values.get(field_name) or values.get("prefixes") or row
            diagnostics.append(
                _error(
                    "PLACEHOLDER_ADJACENT",
                    f"{text!r} puts {{{pair[1]}}} right after {{{pair[0]}}} with no text "
                    "between them, so a logged key cannot say where one value ends; "
                    "separate them with literal text (e.g. '/').",
                    where.position,
                )
            )
            return False
    # A template may place a name twice (both places must hold the same text), but the
    # prefix and the key are matched apart: a name in both would get two values.
    captured = set(placeholders(key))
    for prefix in prefixes:
        both = sorted(captured.intersection(placeholders(prefix)))
        if both:
            where = values.get("prefixes") or values.get("prefix") or row
            diagnostics.append(
                _error(
                    "PLACEHOLDER_IN_PREFIX_AND_KEY",
                    f"prefix {prefix!r} and logger_key {key!r} both capture {{{both[0]}}}, "
                    "so a logged key could give it two values; keep the placeholder in one "
                    "of them and write the other as literal text or another attribute.",
                    where.position,
                )
            )
            return False
    return True


def _attribute_refs(
    listed: YNode | None, wanted: set[str], diagnostics: list[Diagnostic]
) -> tuple[AttributeRef, ...] | None:
    """A row's ``attributes`` refs; ``None`` (and a finding) when one is invalid.

    ``wanted`` are the attributes every point carries (placeholders): their
    level defaults to, and must be, ``required``.
    """
    refs: list[AttributeRef] = []
    seen: set[str] = set()
    for item in listed.items if isinstance(listed, YSeq) else []:
        if not isinstance(item, YMap):
            continue
        ref_node = item.values.get("ref")
        name = _text(ref_node)
        if name is None or ref_node is None:
            return None
        if name in seen:
            diagnostics.append(
                _error(
                    "DUPLICATE_ATTRIBUTE_REF",
                    f"attribute {name!r} is listed twice in this row; keep one entry.",
                    ref_node.position,
                )
            )
            return None
        seen.add(name)
        ref = _attribute_ref(item, name, ref_node.position, name in wanted, diagnostics)
        if ref is None:
            return None
        refs.append(ref)
    return tuple(refs)


def _attribute_ref(
    item: YMap, name: str, where: Position, placeholder: bool, diagnostics: list[Diagnostic]
) -> AttributeRef | None:
    """One ref at its requirement level (``required`` for a ``placeholder``), derived or not."""
    level_node = item.values.get("requirement_level")
    level = _text(level_node)
    if placeholder and level is not None and level != "required" and level_node:
        diagnostics.append(
            _error(
                "PLACEHOLDER_NOT_REQUIRED",
                f"attribute {name!r} is a placeholder of this row's key (or of each of "
                f"its prefixes), so every point carries it, but its requirement_level is "
                f"{level!r}; write "
                "'requirement_level: required' or leave it out.",
                level_node.position,
            )
        )
        return None
    written = level_node.position if level is not None and level_node else None
    if level is None:
        level = "required" if placeholder else "recommended"
    derive_node = item.values.get("derive")
    derive = _derivation(derive_node, item.key_positions["derive"]) if derive_node else None
    values_node = item.values.get("values")
    subset = _strings(values_node) or ()
    items = values_node.items if isinstance(values_node, YSeq) else ()
    positions = tuple(node.position for node in items)
    return AttributeRef(name, level, where, derive, written, subset, positions)


def _derivation(node: YNode, where: Position) -> Derivation | None:
    """A ref's ``derive`` mapping (schema-clean: ``from``, ``map`` of strings, ``default``);
    ``where`` is the position of its ``derive`` key."""
    if not isinstance(node, YMap):
        return None
    source_node = node.values.get("from")
    table_node = node.values.get("map")
    default_node = node.values.get("default")
    table: list[tuple[str, str]] = []
    key_positions: list[Position] = []
    value_positions: list[Position] = []
    if isinstance(table_node, YMap):
        marks = table_node.key_positions
        for key, value_node in table_node.values.items():
            value = _text(value_node)
            if value is None:
                continue
            table.append((key, value))
            key_positions.append(marks.get(key, table_node.position))
            value_positions.append(value_node.position)
    return Derivation(
        source=_text(source_node) or "",
        table=tuple(table),
        default=_text(default_node),
        position=where,
        source_position=source_node.position if source_node is not None else where,
        key_positions=tuple(key_positions),
        value_positions=tuple(value_positions),
        default_position=default_node.position if default_node is not None else None,
    )


def _attributes(
    root: YMap, display: str, schema: SchemaResult, diagnostics: list[Diagnostic]
) -> tuple[Attribute, ...]:
    """The file's valid attribute declarations; each invalid one is reported and left out."""
    node = root.values.get("attributes")
    if not isinstance(node, YSeq) or node.bad:
        return ()
    built: list[Attribute] = []
    for index, item in enumerate(node.items):
        if not isinstance(item, YMap) or subtree_bad(item):
            continue
        if not schema.is_clean(("attributes", index)):
            continue
        attribute = _attribute(item, display, diagnostics)
        if attribute is not None:
            built.append(attribute)
    return tuple(built)


_A_TYPE = {"string": "a string", "int": "an int", "double": "a double", "bool": "a bool"}
_TYPE_CHECKS = {
    "int": re.compile(r"-?[0-9]{1,18}").fullmatch,
}


def _attribute(item: YMap, display: str, diagnostics: list[Diagnostic]) -> Attribute | None:
    """One attribute declaration; ``None`` (and a finding) when its values or domain are wrong."""
    values = item.values
    name = _text(values.get("name")) or ""
    kind = _text(values.get("type")) or "string"
    enum = _enum(values.get("values"), name, kind, diagnostics)
    if enum is None or not _domain_ok(item, name, kind, enum, diagnostics):
        return None
    annotations = _annotations(item, "attribute", diagnostics)
    if annotations is None:
        return None
    budget = _text(values.get("max_cardinality"))
    spans = _text(values.get("spans_segments")) == "true"
    no_lint_node = values.get("no_lint")
    examples_node = values.get("examples")
    marks = {key: node.position for key, node in values.items()}
    return Attribute(
        name=name,
        type=kind,
        description=_text(values.get("description")) or "",
        stability=_text(values.get("stability")) or "development",
        position=item.position,
        path=display,
        values=enum,
        max_cardinality=int(budget) if budget else None,
        no_lint=_strings(no_lint_node) or () if no_lint_node is not None else (),
        positions=marks,
        spans_segments=spans,
        note=_text(values.get("note")) or "",
        examples=_strings(examples_node) or () if examples_node is not None else (),
        annotations=annotations,
        open_enum=_text(values.get("open")) == "true",
    )


def _enum(
    node: YNode | None, name: str, kind: str, diagnostics: list[Diagnostic]
) -> tuple[AttributeValue, ...] | None:
    """An attribute's ``values``, each once and of its type; ``None`` (and a finding) if not."""
    enum: list[AttributeValue] = []
    seen: set[str] = set()
    for entry in node.items if isinstance(node, YSeq) else []:
        if not isinstance(entry, YMap):
            return None
        value_node = entry.values.get("value")
        value = _text(value_node)
        if value is None or value_node is None:
            return None
        # "01" and "1" are one int.
        is_int = kind == "int" and _TYPE_CHECKS["int"](value)
        value_key = str(int(value)) if is_int else value
        if value_key in seen:
            diagnostics.append(
                _error(
                    "DUPLICATE_ATTRIBUTE_VALUE",
                    f"value {value!r} of attribute {name!r} is listed twice; keep one entry.",
                    value_node.position,
                )
            )
            return None
        seen.add(value_key)
        if not _enum_value_ok(value, name, kind, value_node.position, diagnostics):
            return None
        enum.append(
            AttributeValue(value, _text(entry.values.get("description")) or "", value_node.position)
        )
    return tuple(enum)


def _enum_value_ok(
    value: str, name: str, kind: str, where: Position, diagnostics: list[Diagnostic]
) -> bool:
    """Whether an enum value is of its attribute's type (a double or bool has no enum)."""
    check = _TYPE_CHECKS.get(kind)
    if kind not in ("double", "bool") and (check is None or check(value)):
        return True
    fix = (
        "a double or bool attribute takes no 'values'; give max_cardinality "
        "(double) or nothing (bool)"
        if kind in ("double", "bool")
        else 'write a whole number such as "0", or make the attribute a string'
    )
    diagnostics.append(
        _error(
            "ATTRIBUTE_VALUE_TYPE",
            f"value {value!r} of attribute {name!r} is not {_A_TYPE[kind]} value; {fix}.",
            where,
        )
    )
    return False


def _domain_ok(
    item: YMap,
    name: str,
    kind: str,
    enum: tuple[AttributeValue, ...],
    diagnostics: list[Diagnostic],
) -> bool:
    """Whether an attribute's domain is one of: an enum, an open set with a budget, a bool
    (and only an open string spans segments); else a finding."""
    values = item.values
    budget_node = values.get("max_cardinality")
    open_node = values.get("open")
    if (
        _text(open_node) == "true"
        and open_node is not None
        and (not enum or budget_node is None or kind == "bool")
    ):
        diagnostics.append(
            _error(
                "ATTRIBUTE_DOMAIN",
                f"attribute {name!r} says 'open: \"true\"', which needs the known 'values' "
                "(not of a bool) and a 'max_cardinality', the budget of other values; add "
                "both, or drop "
                "'open' (an open set without known values needs only max_cardinality).",
                open_node.position,
            )
        )
        return False
    if enum and budget_node is not None and _text(open_node) != "true":
        diagnostics.append(
            _error(
                "ATTRIBUTE_DOMAIN",
                f"attribute {name!r} has both 'values' and 'max_cardinality'; an enum is "
                "bounded by its values, so drop 'max_cardinality', or say 'open: \"true\"' "
                "when other values occur too (it is then their budget).",
                budget_node.position,
            )
        )
        return False
    if not enum and _text(budget_node) is None and kind != "bool":
        diagnostics.append(
            _error(
                "ATTRIBUTE_DOMAIN",
                f"attribute {name!r} has neither 'values' nor 'max_cardinality'; list its "
                'values (an enum) or bound an open set with max_cardinality: "64".',
                item.position,
            )
        )
        return False
    spans_node = values.get("spans_segments")
    if _text(spans_node) == "true" and spans_node is not None and (enum or kind != "string"):
        diagnostics.append(
            _error(
                "ATTRIBUTE_DOMAIN",
                f"attribute {name!r} says 'spans_segments: \"true\"', but only an open "
                "string attribute can span path segments (an enum's values already say "
                "what it matches); drop 'spans_segments'.",
                spans_node.position,
            )
        )
        return False
    examples_node = values.get("examples")
    if examples_node is not None and (enum or kind != "string"):
        diagnostics.append(
            _error(
                "ATTRIBUTE_DOMAIN",
                f"attribute {name!r} has 'examples', which only an open string attribute "
                "takes (an enum's values are its examples); drop 'examples'.",
                examples_node.position,
            )
        )
        return False
    return True
