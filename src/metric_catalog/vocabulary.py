"""Names shared between the code that produces metrics and the code that exports them.

Every name here has readers on both sides of that split, so the module imports
only the standard library: an owner is free to be a torch-heavy training module
and the exporter is free to be importable without the training stack.

Owners declare their rows at import (normally by importing their generated
module under :mod:`metric_catalog.generated`). The rows are collected
process-wide, in declaration order, and handed to the OpenTelemetry layer once,
on the first tee, which calls :func:`freeze_metrics`. An owner that is never
imported (PPO in a GRPO run) declares nothing.

Uniqueness is enforced over everything a series is known by, teed and recorded
rows together: the ``(prefix, logger_key)`` pair, the series name compared
case-insensitively (OpenTelemetry folds case), and the registry key (which is
also the Prometheus-sanitised name stem, so ``rl.a.b`` and ``rl.a_b`` clash).
"""

from __future__ import annotations

import dataclasses
import keyword
import numbers
import os
import sys
import threading
from collections.abc import Iterable, Mapping
from typing import Any, Final, Optional

from .series_rules import (
    ATTRIBUTE_TYPES,
    METRIC_KINDS,
    PLACEHOLDER_TYPES,
    RUNTIME_REQUIREMENT_LEVELS,
    TEMPORALITIES,
    ConfigChoice,
    adjacent_placeholders,
    is_literal,
    pattern_problem,
    placeholders,
    qualified_key,
    type_accepts,
    unit_scale,
    value_fits,
)

__all__ = [
    "ATTRIBUTE_TYPES",
    "DEFAULT_PREFIX",
    "INIT_TOTAL_CATEGORY",
    "MAX_KEY_LENGTH",
    "METRIC_KINDS",
    "METRIC_NAME_PREFIX",
    "NON_FINITE_SETTINGS",
    "OVERFLOW_ATTRIBUTE",
    "REQUIREMENT_LEVELS",
    "RUN_WINDOW_WALL_CLOCK_CATEGORIES",
    "TEMPORALITIES",
    "VALUE_TYPES",
    "AttributeValue",
    "ConfigChoice",
    "MetricAttribute",
    "RecordedMetric",
    "TeedMetric",
    "as_scalar",
    "bookkeeping_keys",
    "check_namespace",
    "choices_exclude",
    "freeze_metrics",
    "is_frozen",
    "loops_meet",
    "owner_of",
    "placeholders",
    "recorded_metrics",
    "register_bookkeeping",
    "register_recorded_metrics",
    "register_step_keys",
    "register_teed_metrics",
    "registry_key",
    "step_keys",
    "step_metric",
    "teed_metrics",
]

METRIC_NAME_PREFIX: Final = "rl."
"""The default series namespace: every name starts with it unless its row declares
another (``namespace``); :func:`registry_key` strips it."""

INIT_TOTAL_CATEGORY: Final = "init/total"
"""Timer category of the one-off wait for the first replay-buffer fill."""

RUN_WINDOW_WALL_CLOCK_CATEGORIES: Final[frozenset[str]] = frozenset({INIT_TOTAL_CATEGORY})
"""Wall-clock categories measured once per run rather than once per step."""

DEFAULT_PREFIX: Final = "train"
"""The ``log_metrics`` prefix a teed row is matched under unless it says otherwise."""

# OpenTelemetry rejects longer names and units (see the SDK's instrument.py).
_MAX_NAME_LENGTH: Final = 255
_MAX_UNIT_LENGTH: Final = 63
MAX_KEY_LENGTH: Final = 1024
"""Longest ``logger_key`` or prefix a teed row may declare: every logged key is matched
against them, so a megabyte-long family key would slow every ``log_metrics`` call."""


def registry_key(name: str, namespace: str = METRIC_NAME_PREFIX) -> str:
    """Registry key for a series name (``rl.reward.mean`` -> ``reward_mean``).

    Keys must be Python identifiers (they name generated constants and keyword
    arguments), so the series namespace goes and the dots become underscores.
    Derived rather than typed out so a row cannot name its series one thing and
    record against another. ``namespace`` is the prefix every name of the row's
    catalog file starts with (``rl.`` unless the file declares another, e.g.
    ``jvm.`` for ``jvm.memory.used`` -> ``memory_used``).

    Raises:
        ValueError: ``namespace`` is not a lowercase dotted prefix ending in
            ``.`` (see :func:`check_namespace`); ``name`` lacks it, is not
            ASCII, is too long, or does not map to a non-keyword identifier.
    """
    if not isinstance(name, str):
        msg = f"series name must be a str, got {type(name).__name__} {name!r}"
        raise ValueError(msg)
    check_namespace(namespace)
    return _registry_key(name, namespace)


def check_namespace(namespace: object) -> str:
    """Return ``namespace`` when it is a series namespace, else raise ``ValueError``.

    A namespace is one or more lowercase ASCII components of letters, digits and
    ``_`` (each starting with a letter), each followed by ``.``: ``rl.``,
    ``jvm.``, ``gen_ai.``, ``hw.gpu.``. The one rule for the runtime and the
    catalog alike.
    """
    if isinstance(namespace, str) and namespace.endswith(".") and namespace.isascii():
        parts = namespace[:-1].split(".")
        if all(
            part[:1].isalpha() and part.isidentifier() and part == part.lower() for part in parts
        ):
            return namespace
    msg = (
        f"series namespace {namespace!r} must be lowercase dot-separated components of "
        "letters, digits and '_', each starting with a letter, ending in '.', "
        "such as 'rl.' or 'gen_ai.'"
    )
    raise ValueError(msg)


# Every row derives its key at construction and again when registered; caching the
# validated derivation keeps importing thousands of generated rows cheap. A plain
# dict (emptied when full) instead of functools.lru_cache: the same hits, no
# functools import, and a hit costs one dict lookup. Only valid names are cached,
# keyed by name and namespace (one name may be valid under one namespace only).
_KEY_CACHE: dict[tuple[str, str], str] = {}
_KEY_CACHE_SIZE: Final = 1 << 16


def _registry_key(name: str, namespace: str = METRIC_NAME_PREFIX) -> str:
    """:func:`registry_key` for a str ``name`` and a checked ``namespace``."""
    key = _KEY_CACHE.get((name, namespace))
    if key is None:
        key = _derive_registry_key(name, namespace)
        if len(_KEY_CACHE) >= _KEY_CACHE_SIZE:
            _KEY_CACHE.clear()
        _KEY_CACHE[name, namespace] = key
    return key


def _derive_registry_key(name: str, namespace: str) -> str:
    if not name.startswith(namespace):
        msg = (
            f"series name {name!r} must start with {namespace!r}; "
            f"write it as {namespace + name.lstrip('.')!r}"
        )
        raise ValueError(msg)
    if not name.isascii() or len(name) > _MAX_NAME_LENGTH:
        msg = (
            f"series name {name!r} must be ASCII and at most {_MAX_NAME_LENGTH} "
            "characters, as OpenTelemetry requires"
        )
        raise ValueError(msg)
    key = name[len(namespace) :].replace(".", "_")
    components = name[len(namespace) :].split(".")
    if "" in components or not key.isidentifier() or keyword.iskeyword(key):
        msg = (
            f"series name {name!r} maps to registry key {key!r}, which is not a "
            "valid non-keyword Python identifier; use dot-separated components of "
            "letters, digits and '_' that do not start with a digit, such as "
            f"'{namespace}reward.mean'"
        )
        raise ValueError(msg)
    return key


def _check_text(owner: str, field_name: str, value: object) -> None:
    if not isinstance(value, str):
        msg = f"{owner}: {field_name} must be a str, got {type(value).__name__} {value!r}"
        raise ValueError(msg)


def _check_key_length(owner: str, field_name: str, value: str) -> None:
    if len(value) > MAX_KEY_LENGTH:
        msg = (
            f"{owner}: {field_name} {value[:40]!r}... is {len(value)} characters long, over "
            f"{MAX_KEY_LENGTH}; declare the key as logged (a key that long is not one)"
        )
        raise ValueError(msg)


def _common_fields_plain(row: TeedMetric | RecordedMetric) -> bool:
    """Whether every check of :func:`_check_common` passes, for a row without extensions.

    The fast path of importing thousands of generated rows: the same conditions
    as :func:`_check_common` (``type(...) is str`` is the stricter side of its
    ``isinstance``), evaluated without building a message. Anything else, a
    str subclass or a failing field included, returns False and the caller runs
    :func:`_check_common`, which accepts or raises exactly as before.
    """
    name = row.name
    unit = row.unit
    return (
        type(name) is str
        and row.namespace is METRIC_NAME_PREFIX  # the default; any other is checked in full
        and bool(_registry_key(name))  # raises as _check_common's first check would
        and row.kind in METRIC_KINDS
        and type(unit) is str
        and unit.isascii()
        and len(unit) <= _MAX_UNIT_LENGTH
        and type(row.description) is str
        and row.attributes == ()
        and row.cardinality_limit is None
        and row.logged_unit == ""
        and row.value_range == ""
        and row.goal == ""
    )


def _check_common(row: TeedMetric | RecordedMetric) -> None:
    what = f"{type(row).__name__}({row.name!r})"
    registry_key(row.name, row.namespace)
    if row.kind not in METRIC_KINDS:
        msg = f"{what}: kind {row.kind!r} is not one of {', '.join(METRIC_KINDS)}"
        raise ValueError(msg)
    _check_text(what, "unit", row.unit)
    if not row.unit.isascii() or len(row.unit) > _MAX_UNIT_LENGTH:
        msg = (
            f"{what}: unit {row.unit!r} must be ASCII and at most {_MAX_UNIT_LENGTH} "
            "characters (write 'us' as 'us', or better 's')"
        )
        raise ValueError(msg)
    _check_text(what, "description", row.description)
    _check_attributes(what, row.attributes)
    _check_logged_unit(what, row.unit, row.logged_unit)
    _check_values(what, row.value_range, row.goal)
    limit = row.cardinality_limit
    if limit is not None and (type(limit) is not int or limit < 2):
        msg = (
            f"{what}: cardinality_limit must be an int of at least 2 (one attribute set "
            f"plus the overflow point) or None for the default, got {limit!r}"
        )
        raise ValueError(msg)


def _check_values(what: str, value_range: object, goal: object) -> None:
    """``value_range`` is ``""`` or interval notation; ``goal`` ``""`` or a known goal."""
    from metric_catalog.value_rules import GOALS, parse_range  # noqa: PLC0415 - only when set

    if goal != "" and goal not in GOALS:
        msg = f"{what}: goal must be one of {', '.join(GOALS)} or '', got {goal!r}"
        raise ValueError(msg)
    if value_range == "":
        return
    if type(value_range) is not str:
        msg = f"{what}: value_range must be a str such as '[0, 1]', got {value_range!r}"
        raise ValueError(msg)
    try:
        parse_range(value_range)
    except ValueError as exc:
        msg = f"{what}: {exc}"
        raise ValueError(msg) from None


def _check_logged_unit(what: str, unit: str, logged_unit: object) -> None:
    """``logged_unit`` is ``""`` or a unit that scales to ``unit`` (``ms`` to ``s``)."""
    if logged_unit == "" and type(logged_unit) is str:
        return
    if type(logged_unit) is not str:
        msg = f"{what}: logged_unit must be a str, got {logged_unit!r}"
        raise ValueError(msg)
    _check_text(what, "logged_unit", logged_unit)
    base = unit_scale(logged_unit)[0]
    if base != unit:
        msg = (
            f"{what}: logged_unit {logged_unit!r} is exported in {base!r}, not in the row's "
            f"unit {unit!r}; set unit={base!r} (the exported unit) or drop logged_unit "
            "when the code logs the exported unit"
        )
        raise ValueError(msg)


# --- attributes ---------------------------------------------------------------------

AttributeValue = str | int | float | bool
"""A value an attribute may take (OpenTelemetry's scalar attribute types)."""

REQUIREMENT_LEVELS: Final = RUNTIME_REQUIREMENT_LEVELS
"""Weaver's requirement levels for an attribute on a series: the documented name of
:data:`metric_catalog.series_rules.RUNTIME_REQUIREMENT_LEVELS` (four levels; a catalog row's
attribute takes :data:`~metric_catalog.series_rules.ATTRIBUTE_REQUIREMENT_LEVELS`, three)."""

OVERFLOW_ATTRIBUTE: Final = "otel.metric.overflow"
"""Attribute of the one point that absorbs attribute sets past a series' budget."""


def _is_attribute_name(name: object) -> bool:
    """Whether ``name`` matches ``[A-Za-z][A-Za-z0-9_]*(\\.[A-Za-z0-9_]+)*`` (without re).

    ``str.isalnum`` of an ASCII string is exactly ``[A-Za-z0-9]``; a ``_`` is
    counted as a letter by replacing it first.
    """
    if not isinstance(name, str) or not name.isascii() or not name[:1].isalpha():
        return False
    return all(part.replace("_", "a").isalnum() for part in name.split("."))


@dataclasses.dataclass(frozen=True, slots=True)
class MetricAttribute:
    """An attribute a series may carry, and the values it may take.

    ``values`` is the enum (``()`` for an open set); an open attribute may give a
    ``max_cardinality``, its budget of distinct values per series. The tee and
    ``record_metrics`` drop an attribute whose key a row does not declare or
    whose value is not of ``type`` (or not in the enum), warning once per cause.

    A *derived* attribute names another attribute of its row in ``derived_from``
    and maps that attribute's values to its own with ``derive_map`` (and
    ``derive_default`` for the rest; without one an unmapped value leaves it
    unset). The tee fills it on every point carrying the source, whether the
    source was captured from a key or passed, after checking the point and
    before its cardinality budget; a value the derivation yields wins over a
    passed one. The row's registration checks that the source is one of its
    attributes, that the table's keys are values the source takes and its
    values ones this attribute takes, and that derivations do not loop.
    """

    name: str
    """Dotted attribute name, e.g. ``rl.setup.phase``."""
    type: str = "string"
    """``string``, ``int``, ``double`` or ``bool``."""
    values: tuple[AttributeValue, ...] = ()
    """The allowed values; ``()`` means an open set."""
    max_cardinality: int | None = None
    """Budget of distinct values of an open attribute (``None``: the series' budget)."""
    requirement: str = "recommended"
    """``required``, ``recommended``, ``opt_in`` or ``conditionally_required``."""
    derived_from: str | None = None
    """The row's attribute this one is derived from (``None``: not derived)."""
    derive_map: tuple[tuple[AttributeValue, AttributeValue], ...] = ()
    """``(source value, value of this attribute)`` pairs of the derivation table."""
    derive_default: AttributeValue | None = None
    """The value for a source value the table lacks (``None``: leave the attribute unset)."""
    spans_segments: bool = False
    """Whether a placeholder of this (open string) attribute may capture several path
    segments (``openai/gsm8k``); otherwise it captures exactly one (no ``/``)."""
    open_enum: bool = False
    """Whether the enum is open: ``values`` are the known ones, and any other value of the
    type is taken too, up to ``max_cardinality`` distinct others per series."""

    def __replace__(self, /, **changes: Any) -> MetricAttribute:
        """A copy with ``changes`` (``copy.replace`` on 3.13+), checked as a new row is."""
        return dataclasses.replace(self, **changes)

    def __post_init__(self) -> None:
        what = f"MetricAttribute({self.name!r})"
        if not _is_attribute_name(self.name):
            msg = (
                f"{what}: the name must be dot-separated components of letters, digits "
                "and '_' starting with a letter, such as 'rl.setup.phase'"
            )
            raise ValueError(msg)
        if self.type not in ATTRIBUTE_TYPES:
            msg = f"{what}: type {self.type!r} is not one of {', '.join(ATTRIBUTE_TYPES)}"
            raise ValueError(msg)
        if not isinstance(self.values, tuple):
            msg = f"{what}: values must be a tuple, got {type(self.values).__name__}"
            raise ValueError(msg)
        for value in self.values:
            if not type_accepts(self.type, value):
                msg = f"{what}: value {value!r} is not of the attribute's type {self.type!r}"
                raise ValueError(msg)
        if len(set(self.values)) != len(self.values):
            msg = f"{what}: values {self.values!r} repeat a value; list each once"
            raise ValueError(msg)
        budget = self.max_cardinality
        if budget is not None and (type(budget) is not int or budget < 1):
            msg = f"{what}: max_cardinality must be a positive int or None, got {budget!r}"
            raise ValueError(msg)
        if self.requirement not in RUNTIME_REQUIREMENT_LEVELS:
            msg = (
                f"{what}: requirement {self.requirement!r} is not one of "
                f"{', '.join(RUNTIME_REQUIREMENT_LEVELS)}"
            )
            raise ValueError(msg)
        if self.open_enum is not False and (
            self.open_enum is not True
            or not self.values
            or self.max_cardinality is None
            or self.type == "bool"
        ):
            msg = (
                f"{what}: open_enum must be a bool, and True only on an enum (values) with a "
                f"max_cardinality, its budget of other values, got {self.open_enum!r}"
            )
            raise ValueError(msg)
        if self.spans_segments is not False and (
            self.spans_segments is not True or self.type != "string" or self.values
        ):
            msg = (
                f"{what}: spans_segments must be a bool, and True only on an open string "
                f"attribute (an enum's values say what it matches), got {self.spans_segments!r}"
            )
            raise ValueError(msg)
        if (
            self.derived_from is not None
            or self.derive_map != ()
            or self.derive_default is not None
        ):
            self._check_derivation(what)

    def _check_derivation(self, what: str) -> None:
        source = self.derived_from
        if source is None:
            msg = (
                f"{what}: derive_map or derive_default is set without derived_from; name the "
                "attribute of the row it is derived from, or drop them"
            )
            raise ValueError(msg)
        if not isinstance(source, str) or not _is_attribute_name(source):
            msg = f"{what}: derived_from must be an attribute name, got {source!r}"
            raise ValueError(msg)
        if source == self.name:
            msg = f"{what}: derived_from names the attribute itself; name another attribute"
            raise ValueError(msg)
        table = self.derive_map
        if not isinstance(table, tuple) or not all(
            isinstance(pair, tuple) and len(pair) == 2 for pair in table
        ):
            msg = (
                f"{what}: derive_map must be a tuple of (source value, value) pairs, got {table!r}"
            )
            raise ValueError(msg)
        keys = [key for key, _value in table]
        for key in keys:
            if not isinstance(key, (str, int, float, bool)):
                msg = f"{what}: derive_map source value {key!r} is not a scalar"
                raise ValueError(msg)
        if len(set(keys)) != len(keys):
            msg = f"{what}: derive_map lists a source value twice ({keys!r}); list each once"
            raise ValueError(msg)
        targets = [value for _key, value in table]
        if self.derive_default is not None:
            targets.append(self.derive_default)
        for value in targets:
            if not self.accepts(value):
                allowed = (
                    f"one of {', '.join(map(repr, self.values))}"
                    if self.closed_values
                    else f"of type {self.type}"
                )
                msg = (
                    f"{what}: the derivation from {source!r} yields {value!r}, but the "
                    f"attribute allows values {allowed}; fix the table or the attribute"
                )
                raise ValueError(msg)
        if not table and self.derive_default is None:
            msg = (
                f"{what}: derived from {source!r} with an empty derive_map and no "
                "derive_default, so it is never set; give the table"
            )
            raise ValueError(msg)

    def derive(self, source_value: AttributeValue) -> AttributeValue | None:
        """This attribute's value for the source's ``source_value`` (``None``: unset)."""
        for key, value in self.derive_map:
            if key == source_value and type(key) is type(source_value):
                return value
        return self.derive_default

    def accepts(self, value: object) -> bool:
        """Whether ``value`` is of this attribute's type and, for a closed enum, one of its
        values."""
        return value_fits(self.type, self.closed_values, value)

    @property
    def closed_values(self) -> tuple[AttributeValue, ...]:
        """The values the attribute is limited to: its enum, ``()`` when open (an open
        enum included)."""
        return () if self.open_enum else self.values


def _check_attributes(what: str, attributes: object) -> None:
    if attributes == ():
        return
    if not isinstance(attributes, tuple) or not all(
        isinstance(a, MetricAttribute) for a in attributes
    ):
        msg = f"{what}: attributes must be a tuple of MetricAttribute, got {attributes!r}"
        raise ValueError(msg)
    names = [a.name for a in attributes]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        msg = f"{what}: attribute {repeated[0]!r} is declared twice; declare each once"
        raise ValueError(msg)
    if OVERFLOW_ATTRIBUTE in names:
        msg = f"{what}: {OVERFLOW_ATTRIBUTE!r} is reserved for the overflow point"
        raise ValueError(msg)
    if any(a.derived_from is not None for a in attributes):
        _check_derivations(what, {a.name: a for a in attributes})


def _check_derivations(what: str, declared: dict[str, MetricAttribute]) -> None:
    """Each derivation's source is an attribute of the row, its table keys are values
    the source allows, and no chain of derivations loops."""
    for attribute in declared.values():
        source_name = attribute.derived_from
        if source_name is None:
            continue
        source = declared.get(source_name)
        if source is None:
            known = ", ".join(sorted(set(declared) - {attribute.name})) or "none"
            msg = (
                f"{what}: attribute {attribute.name!r} is derived from {source_name!r}, which "
                f"the row does not declare (declared: {known}); add it to the row's "
                "attributes or fix derived_from"
            )
            raise ValueError(msg)
        for key, _value in attribute.derive_map:
            if not source.accepts(key):
                allowed = (
                    f"one of {', '.join(map(repr, source.values))}"
                    if source.closed_values
                    else f"of type {source.type}"
                )
                msg = (
                    f"{what}: attribute {attribute.name!r} maps {key!r}, but its source "
                    f"{source_name!r} takes values {allowed}; drop the entry or fix it"
                )
                raise ValueError(msg)
        chain = [attribute.name]
        step: MetricAttribute | None = source
        while step is not None:
            if step.name in chain:
                loop = " -> ".join([*chain, step.name])
                msg = f"{what}: derivations loop ({loop}); derive from a captured attribute"
                raise ValueError(msg)
            chain.append(step.name)
            step = declared.get(step.derived_from) if step.derived_from is not None else None


def _check_template(
    what: str, field_name: str, template: str, declared: dict[str, MetricAttribute]
) -> list[str]:
    """Validate the placeholders of one template; return the attribute names it captures."""
    problem = pattern_problem(template)
    if problem is not None:
        msg = (
            f"{what}: {field_name} {template!r} has an unmatched brace ({problem}); a "
            "placeholder is written {attribute.name}, and a literal brace is doubled ({{ or }})"
        )
        raise ValueError(msg)
    names = placeholders(template)
    if adjacent_placeholders(template) is not None:
        msg = (
            f"{what}: {field_name} {template!r} has two placeholders with nothing between "
            "them, so the split of a logged key between them is ambiguous; put literal "
            "text between them"
        )
        raise ValueError(msg)
    for name in names:
        attribute = declared.get(name)
        if attribute is None:
            known = ", ".join(sorted(declared)) or "none"
            msg = (
                f"{what}: {field_name} {template!r} has placeholder {{{name}}}, but the row "
                f"declares no attribute {name!r} (declared: {known}); add "
                f"MetricAttribute({name!r}, ...) to its attributes or fix the placeholder"
            )
            raise ValueError(msg)
        if attribute.type not in PLACEHOLDER_TYPES:
            msg = (
                f"{what}: {field_name} {template!r} captures attribute {name!r} of type "
                f"{attribute.type!r}; a placeholder can capture only a string or int attribute"
            )
            raise ValueError(msg)
    return list(names)


# --- rows ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class RecordedMetric:
    """A series recorded directly, with no ``Logger`` key behind it.

    Declared by its owner for the same reason teed rows are: the module that
    calls ``record_metrics`` for a series is the one that names it. The first
    four fields are the reference API's, in its positional order; the rest are
    optional extensions.
    """

    name: str
    """OpenTelemetry series name emitted; :func:`registry_key` derives the key."""
    kind: str = "gauge"
    """One of ``gauge``, ``counter``, ``histogram``, ``up_down_counter``."""
    unit: str = ""
    """UCUM-style unit string, or empty when dimensionless."""
    description: str = ""
    """Help text carried to the backend."""
    attributes: tuple[MetricAttribute, ...] = ()
    """The attributes the series may carry; any other attribute key is dropped."""
    cardinality_limit: int | None = None
    """Budget of distinct attribute sets, overflow point included (``None``: the default)."""
    logged_unit: str = ""
    """Unit the code logs values in when it differs from ``unit`` (``ms`` for ``unit="s"``);
    values are scaled exactly to ``unit`` before recording. ``""``: logged in ``unit``."""
    value_range: str = ""
    """The range the exported values lie in, in ``unit``, as interval notation (``[0, 1]``,
    ``integers in [0, +inf)``); ``""``: the unit's default (``metric_catalog.value_rules``).
    The tee never judges values; checkers and ``metric_catalog.testing`` do."""
    goal: str = ""
    """``maximize`` or ``minimize`` when bigger or smaller values are better, else ``""``."""
    namespace: str = METRIC_NAME_PREFIX
    """The series namespace ``name`` starts with and :attr:`key` strips (``rl.``, or what
    the row's catalog file declares, e.g. ``jvm.``); see :func:`check_namespace`."""

    def __replace__(self, /, **changes: Any) -> RecordedMetric:
        """A copy with ``changes`` (``copy.replace`` on 3.13+), checked as a new row is."""
        return dataclasses.replace(self, **changes)

    def __post_init__(self) -> None:
        if not _common_fields_plain(self):
            _check_common(self)

    @property
    def key(self) -> str:
        """Registry key recorded against."""
        return _registry_key(self.name, self.namespace)  # checked when the row was built


@dataclasses.dataclass(frozen=True, slots=True)
class TeedMetric:
    """One ``Logger`` key mirrored into OpenTelemetry, and how it is declared.

    The positional order of the first five fields is the reference API's, so
    ``TeedMetric("reward", "rl.reward.mean")`` keeps working; the rest are
    extensions. ``logger_key``, ``prefix`` and ``other_prefixes`` may hold
    placeholders ``{attribute.name}`` naming one of the row's attributes
    (``setup/{rl.setup.phase}_time_s``, prefix ``validation-{rl.dataset}``):
    every logged key that matches feeds this one series, with the captured
    text as that attribute's value.
    """

    logger_key: str
    """Key as it appears in the dict handed to ``Logger.log_metrics`` (or a key pattern)."""
    name: str
    """OpenTelemetry series name emitted; :func:`registry_key` derives the key."""
    kind: str = "gauge"
    """One of ``gauge``, ``counter``, ``histogram``, ``up_down_counter``."""
    unit: str = ""
    """UCUM-style unit string, or empty when dimensionless."""
    description: str = ""
    """Help text carried to the backend."""
    prefix: str = DEFAULT_PREFIX
    """The ``log_metrics`` prefix the key is logged under (``""`` for none)."""
    attributes: tuple[MetricAttribute, ...] = ()
    """The attributes the series may carry; any other attribute key is dropped."""
    other_prefixes: tuple[str, ...] = ()
    """Further ``log_metrics`` prefixes the key is teed under (e.g. ``""`` besides ``train``)."""
    cardinality_limit: int | None = None
    """Budget of distinct attribute sets, overflow point included (``None``: the default)."""
    replaced_by: str | None = None
    """On a deprecated row, the name of the row replacing it; the pair may share a logger key."""
    temporality: str = "delta"
    """What a counter's logged value is: ``delta``, this step's amount (the default), or
    ``cumulative``, a running total (``training/global_step``, consumed tokens) whose growth
    since the previous value the tee adds. Only a counter may be cumulative."""
    logged_unit: str = ""
    """Unit the code logs values in when it differs from ``unit`` (``ms`` for ``unit="s"``);
    values are scaled exactly to ``unit`` before recording. ``""``: logged in ``unit``."""
    emitted_by: tuple[str, ...] = ()
    """The training loops that log the key (``("sft",)``); empty: every loop. Rows whose
    loops are disjoint may share a logger key: the tee routes it by the process's loop
    (``tee_metrics(loop=...)``, else ``METRIC_CATALOG_LOOP``)."""
    value_type: str = "number"
    """What the key holds: ``number`` (the default, exported), or a non-scalar value the
    code logs under the key (``table``, ``text``, ``image``, ``histogram``, ``media``,
    ``object``: a W&B table...), which gets no instrument and is skipped quietly."""
    value_range: str = ""
    """The range the exported values lie in, in ``unit``, as interval notation (``[0, 1]``,
    ``integers in [0, +inf)``); ``""``: the unit's default (``metric_catalog.value_rules``).
    The tee never judges values; checkers and ``metric_catalog.testing`` do."""
    goal: str = ""
    """``maximize`` or ``minimize`` when bigger or smaller values are better, else ``""``."""
    every: str = ""
    """The period of a row logged every so many steps, as the catalog writes it (``"5"``,
    ``"config.trainer.test_freq"``); ``""``: logged at every step. The tee ignores it;
    :mod:`metric_catalog.testing` does not call a row missing whose period never came due."""
    first_step: str = ""
    """The first step the row can be logged at, as the catalog writes it; ``""``: the first."""
    phase: int = 0
    """With ``every``: the steps of the period the row is logged at, those equal to ``phase``
    modulo it (``-1``: a 0-based loop's ``n-1, 2n-1, ...``; 0: the multiples)."""
    non_finite: str = "reported"
    """``allowed`` when NaN and the infinities are legitimate values of the key (a skipped
    update logs ``grad_norm = inf``): the tee exports them on a gauge without a warning.
    ``reported`` (default): the tee warns once per key (a gauge still exports the value,
    so an alert on it fires; other kinds skip it, a NaN would stay in their sums)."""
    choice: ConfigChoice | None = None
    """The run configuration's value that chooses the row (its catalog ``condition``, such
    as ``not config.critic.clip_value``); ``None``: none. Rows whose choices exclude each
    other may share a logger key: the tee routes it by the configuration given to
    :func:`metric_catalog.otel.set_run_config`, and exports it to neither row (warned once)
    while that configuration does not decide."""
    namespace: str = METRIC_NAME_PREFIX
    """The series namespace ``name`` starts with and :attr:`key` strips (``rl.``, or what
    the row's catalog file declares, e.g. ``jvm.``); see :func:`check_namespace`."""

    @property
    def logged_key(self) -> str:
        """The whole key a flat-dict logger writes for this row under its ``prefix``.

        ``"train/loss"`` for ``logger_key="loss"``, ``prefix="train"``; the bare key under
        ``""``; a prefix ending in ``_`` is glued (``eval_loss``). Code that logs one flat
        dict per step writes ``{T.TRAIN_LOSS.logged_key: loss}``, so a renamed row is a
        type error, not a silently empty series.
        """
        return qualified_key(self.prefix, self.logger_key)

    @property
    def logged_keys(self) -> tuple[str, ...]:
        """:attr:`logged_key` under every prefix the row is teed under, ``prefix`` first."""
        return tuple(
            qualified_key(prefix, self.logger_key) for prefix in (self.prefix, *self.other_prefixes)
        )

    def __replace__(self, /, **changes: Any) -> TeedMetric:
        """A copy with ``changes`` (``copy.replace`` on 3.13+), checked as a new row is."""
        return dataclasses.replace(self, **changes)

    def __post_init__(self) -> None:
        logger_key = self.logger_key
        prefix = self.prefix
        if (
            _common_fields_plain(self)
            and type(logger_key) is str
            and type(prefix) is str
            and logger_key
            and len(logger_key) <= MAX_KEY_LENGTH
            and len(prefix) <= MAX_KEY_LENGTH
            and self.other_prefixes == ()
            and self.replaced_by is None
            and self.temporality == "delta"
            and self.emitted_by == ()
            and self.value_type == "number"
            and self.every == ""
            and self.first_step == ""
            and self.phase == 0
            and self.non_finite == "reported"
            and self.choice is None
            and "{" not in logger_key
            and "}" not in logger_key
            and "{" not in prefix
            and "}" not in prefix
        ):
            return  # the common row, every check below passes (import of 10k rows)
        _check_common(self)
        what = f"TeedMetric({self.name!r})"
        if self.temporality != "delta":
            _check_temporality(what, self.kind, self.temporality)
        if self.emitted_by != ():
            _check_loops(what, self.emitted_by)
        if self.value_type != "number" and self.value_type not in VALUE_TYPES:
            msg = (
                f"{what}: value_type {self.value_type!r} is not one of {', '.join(VALUE_TYPES)}; "
                "'number' (the default) for a value the tee exports"
            )
            raise ValueError(msg)
        if type(self.phase) is not int:
            msg = f"{what}: phase must be an int (-1 for steps n-1, 2n-1, ...), got {self.phase!r}"
            raise ValueError(msg)
        if self.non_finite != "reported" and self.non_finite not in NON_FINITE_SETTINGS:
            msg = (
                f"{what}: non_finite {self.non_finite!r} is not one of "
                f"{', '.join(NON_FINITE_SETTINGS)}; 'allowed' when NaN or an infinity is a "
                "legitimate value of the key"
            )
            raise ValueError(msg)
        if self.choice is not None and type(self.choice) is not ConfigChoice:
            msg = (
                f"{what}: choice must be a ConfigChoice (such as ConfigChoice(('critic', "
                f"'clip_value'), 'true')) or None, got {self.choice!r}"
            )
            raise ValueError(msg)
        _check_text(what, "logger_key", self.logger_key)
        _check_text(what, "prefix", self.prefix)
        if not self.logger_key:
            msg = f"{what}: logger_key must not be empty; give the key logged to log_metrics"
            raise ValueError(msg)
        for field_name, text in (("logger_key", self.logger_key), ("prefix", self.prefix)):
            _check_key_length(what, field_name, text)
        for field_name, schedule in (("every", self.every), ("first_step", self.first_step)):
            if type(schedule) is not str:
                msg = f"{what}: {field_name} must be a str such as '5' or '', got {schedule!r}"
                raise ValueError(msg)
        if (
            self.other_prefixes == ()
            and self.replaced_by is None
            and "{" not in self.logger_key
            and "}" not in self.logger_key
            and "{" not in self.prefix
            and "}" not in self.prefix
        ):
            return  # the common row: no extension field to check (import of 10k rows)
        self._check_extensions(what)

    def _check_extensions(self, what: str) -> None:
        if not isinstance(self.other_prefixes, tuple):
            msg = f"{what}: other_prefixes must be a tuple of str, got {self.other_prefixes!r}"
            raise ValueError(msg)
        for other in self.other_prefixes:
            _check_text(what, "each of other_prefixes", other)
            _check_key_length(what, "each of other_prefixes", other)
        if len(set(self.prefixes)) != len(self.prefixes):
            msg = f"{what}: prefixes {self.prefixes!r} repeat a prefix; list each once"
            raise ValueError(msg)
        if self.replaced_by is not None:
            # The replacement may live in another namespace (a rename into OpenTelemetry's
            # semantic conventions): its own first component is the namespace checked.
            replacement = self.replaced_by
            head = self.namespace
            if isinstance(replacement, str) and "." in replacement:
                head = replacement.split(".", 1)[0] + "."
            registry_key(replacement, head)
            if self.replaced_by == self.name:
                msg = f"{what}: replaced_by names the row itself; name the row replacing it"
                raise ValueError(msg)
        declared = {a.name: a for a in self.attributes}
        captured = _check_template(what, "logger_key", self.logger_key, declared)
        for prefix in self.prefixes:
            in_prefix = _check_template(what, "prefix", prefix, declared)
            # One template may place a name twice (its places must match the same text:
            # series_rules.compile_pattern); the prefix and the key are matched apart, so
            # a name in both would get two values.
            both = sorted(set(in_prefix) & set(captured))
            if both:
                msg = (
                    f"{what}: attribute {both[0]!r} is captured twice (prefix {prefix!r} "
                    f"and logger_key {self.logger_key!r}); capture each attribute once"
                )
                raise ValueError(msg)
        for prefix in self.prefixes:
            captured += placeholders(prefix)
        for name in captured:
            if declared[name].derived_from is not None:
                msg = (
                    f"{what}: attribute {name!r} is both captured by a placeholder and "
                    f"derived from {declared[name].derived_from!r}; a point gets it one way: "
                    "drop the placeholder or the derivation"
                )
                raise ValueError(msg)

    @property
    def key(self) -> str:
        """Registry key recorded against."""
        return _registry_key(self.name, self.namespace)  # checked when the row was built

    @property
    def prefixes(self) -> tuple[str, ...]:
        """Every prefix the row is teed under: ``prefix``, then ``other_prefixes``."""
        return (self.prefix, *self.other_prefixes)

    @property
    def is_pattern(self) -> bool:
        """Whether the logger key or a prefix holds a ``{placeholder}``."""
        return not is_literal(self.logger_key) or not all(is_literal(p) for p in self.prefixes)


def _check_temporality(what: str, kind: str, temporality: object) -> None:
    if temporality not in TEMPORALITIES:
        msg = (
            f"{what}: temporality {temporality!r} is not one of {', '.join(TEMPORALITIES)}; "
            "'delta' (the default) when each value is this step's amount, 'cumulative' when "
            "it is a running total"
        )
        raise ValueError(msg)
    if temporality == "cumulative" and kind != "counter":
        msg = (
            f"{what}: temporality 'cumulative' (a running total the tee turns into "
            f"increments) fits only a counter, not a {kind}; declare kind='counter', or "
            "drop temporality (a gauge shows the running total as it is)"
        )
        raise ValueError(msg)


VALUE_TYPES: Final[tuple[str, ...]] = (
    "number",
    "table",
    "text",
    "image",
    "histogram",
    "media",
    "object",
)
"""What a teed key may hold: ``number`` (exported) or a non-scalar value (exported nowhere)."""

NON_FINITE_SETTINGS: Final[tuple[str, ...]] = ("reported", "allowed")
"""What a teed row says of NaN and the infinities (``non_finite``): ``reported`` (the
default: the tee warns, checkers report them) or ``allowed`` (legitimate values)."""


def _check_loops(what: str, loops: object) -> None:
    """``emitted_by`` is a tuple of distinct, non-empty loop names."""
    if not isinstance(loops, tuple) or not all(
        type(loop) is str and loop.strip() == loop and loop for loop in loops
    ):
        msg = (
            f"{what}: emitted_by must be a tuple of loop names such as ('sft', 'dpo'), got "
            f"{loops!r}"
        )
        raise ValueError(msg)
    if len(set(loops)) != len(loops):
        msg = f"{what}: emitted_by {loops!r} repeats a loop; list each once"
        raise ValueError(msg)


def choices_exclude(row: TeedMetric, other: TeedMetric) -> bool:
    """Whether no run configuration chooses both rows (:meth:`ConfigChoice.excludes`)."""
    mine, theirs = row.choice, other.choice
    return mine is not None and theirs is not None and mine.excludes(theirs)


def loops_meet(row: TeedMetric, other: TeedMetric) -> bool:
    """Whether one loop may log both rows (a row without ``emitted_by`` is every loop's)."""
    if not row.emitted_by or not other.emitted_by:
        return True
    return not set(row.emitted_by).isdisjoint(other.emitted_by)


def _refuse_assignment(self: object, name: str, value: object) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _refuse_deletion(self: object, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


# Python 3.11's frozen slotted dataclasses raise TypeError (super() on the pre-slots
# class) instead of FrozenInstanceError when a name that is not a field is assigned.
for _row_class in (MetricAttribute, RecordedMetric, TeedMetric):
    type.__setattr__(_row_class, "__setattr__", _refuse_assignment)
    type.__setattr__(_row_class, "__delattr__", _refuse_deletion)
del _row_class


# --- registry -----------------------------------------------------------------------

# The registry's state is the three globals upstream keeps, under upstream's names,
# so a test fixture that swaps them (monkeypatch.setattr(vocabulary, "_REGISTERED",
# {})) gets an empty, isolated registry. _REGISTERED is keyed by series name (a
# deprecated row and its replacement may share a logger key). Every other table
# (folded names, registry keys, tee claims, owners, snapshots) is derived from
# these dicts and re-derived whenever their identity or size changes.
_LOCK = threading.Lock()
_REGISTERED: dict[str, TeedMetric] = {}
_RECORDED: dict[str, RecordedMetric] = {}
_FROZEN = False

_Row = TeedMetric | RecordedMetric
_TeeSlot = tuple[str, str]


class _Derived:
    """Side tables derived from one pair of (``_REGISTERED``, ``_RECORDED``) dicts."""

    __slots__ = (
        "keys",
        "names",
        "owners",
        "recorded",
        "recorded_len",
        "recorded_snapshot",
        "tee_slots",
        "teed",
        "teed_len",
        "teed_snapshot",
    )

    def __init__(self, teed: dict[str, TeedMetric], recorded: dict[str, RecordedMetric]) -> None:
        self.teed = teed
        self.recorded = recorded
        self.names: dict[str, _Row] = {}  # folded series name -> row
        self.keys: dict[str, _Row] = {}  # folded registry key -> row
        self.tee_slots: dict[_TeeSlot, tuple[TeedMetric, ...]] = {}
        self.owners: dict[str, str] = {}  # series name -> owner module
        self.teed_snapshot: tuple[TeedMetric, ...] | None = None
        self.recorded_snapshot: tuple[RecordedMetric, ...] | None = None
        rows: list[_Row] = [*teed.values(), *recorded.values()]
        for row in rows:
            self.add(row)
        self.teed_len = len(teed)
        self.recorded_len = len(recorded)

    def add(self, row: _Row) -> None:
        self.names[row.name.casefold()] = row
        self.keys[row.key.casefold()] = row
        if isinstance(row, TeedMetric):
            for slot in _tee_slots(row):
                self.tee_slots[slot] = (*self.tee_slots.get(slot, ()), row)

    def current(self) -> bool:
        return (
            self.teed is _REGISTERED
            and self.recorded is _RECORDED
            and self.teed_len == len(_REGISTERED)
            and self.recorded_len == len(_RECORDED)
        )


_DERIVED = _Derived(_REGISTERED, _RECORDED)
# Derived tables of registries swapped out (a test fixture's), to find again when
# they are swapped back; a few only, so swapping in a fresh dict per test leaks nothing.
_PREVIOUS: list[_Derived] = []
_PREVIOUS_KEPT: Final = 4


def _derived() -> _Derived:
    """The side tables of the current globals, re-derived if they were swapped or edited."""
    global _DERIVED  # noqa: PLW0603 - process-wide registry
    derived = _DERIVED
    if derived.current():
        return derived
    found = None
    for old in _PREVIOUS:
        if old.teed is _REGISTERED and old.recorded is _RECORDED:
            found = old
            break
    if found is not None:
        _PREVIOUS.remove(found)
    if found is None or not found.current():
        fresh = _Derived(_REGISTERED, _RECORDED)
        if found is not None:  # same dicts edited in place: keep what is known of owners
            fresh.owners = {n: o for n, o in found.owners.items() if n in fresh.names}
        found = fresh
    if derived.teed is not _REGISTERED or derived.recorded is not _RECORDED:
        _PREVIOUS.insert(0, derived)
        del _PREVIOUS[_PREVIOUS_KEPT:]
    _DERIVED = found
    return found


def _tee_slots(row: TeedMetric) -> list[_TeeSlot]:
    return [(prefix, row.logger_key) for prefix in row.prefixes]


def _where(slot: _TeeSlot) -> str:
    prefix, logger_key = slot
    return qualified_key(prefix, logger_key)


def _describe(row: _Row, owner: str | None) -> str:
    source = f"from {owner}" if owner else "from an unnamed owner"
    if isinstance(row, TeedMetric):
        where = _where((row.prefix, row.logger_key))
        return f"teed row {row.name!r} (logger key {where!r}, {source})"
    return f"recorded row {row.name!r} ({source})"


def _field_names(row: _Row) -> tuple[str, ...]:
    """The row's fields in declaration order (what ``dataclasses.fields`` would name)."""
    names: tuple[str, ...] = type(row).__match_args__
    return names


def _differences(row: _Row, other: _Row) -> str:
    """For two versions of one series (same name), the fields in which they differ."""
    if row.name.casefold() != other.name.casefold():
        return ""
    if type(row) is not type(other):
        return f"; one is a {type(other).__name__}, the other a {type(row).__name__}"
    changed = [
        f"{f} {getattr(other, f)!r} vs {getattr(row, f)!r}"
        for f in _field_names(row)
        if getattr(row, f) != getattr(other, f)
    ]
    return f"; the rows differ in {', '.join(changed)}" if changed else ""


def _caller_module(depth: int) -> str | None:
    try:
        name = sys._getframe(depth).f_globals.get("__name__")
    except ValueError:  # pragma: no cover - the stack is never that shallow
        return None
    return name if isinstance(name, str) else None


def _check_not_frozen(name: str, owner: str | None = None) -> None:
    if _FROZEN:
        source = f" from {owner}" if owner else ""
        msg = (
            f"cannot register {name!r}{source}: it was declared after the metric group was "
            "registered. The first tee (tee_metrics or record_metrics) hands every row "
            "to OpenTelemetry and closes registration, once per process and whether "
            "export is on or off, so a later row would never get an instrument. "
            f"Declare the row at import of its owner module: import "
            f"{owner or 'the module declaring it'} at startup, before training logs "
            "its first metrics, not lazily from inside the training loop."
        )
        raise RuntimeError(msg)


def _register(rows: Iterable[_Row], expected: type, owner: str | None) -> None:
    batch = list(rows)
    for row in batch:
        if not isinstance(row, expected):
            msg = f"expected {expected.__name__} rows, got {type(row).__name__} {row!r}"
            raise ValueError(msg)
    if not batch:
        return  # as upstream, which checks row by row: nothing to check, even when frozen
    if owner is not None and not isinstance(owner, str):
        msg = f"owner must be a module name (str) or None, got {owner!r}"
        raise ValueError(msg)
    with _LOCK:
        _check_not_frozen(batch[0].name, owner)
        derived = _derived()
        if not _register_fresh_batch(derived, batch, owner):
            _register_row_by_row(derived, batch, owner)
        derived.teed_len = len(derived.teed)
        derived.recorded_len = len(derived.recorded)


def _home(derived: _Derived, row: _Row) -> dict[str, Any]:
    """The registry dict rows of ``row``'s type are kept in."""
    return derived.teed if isinstance(row, TeedMetric) else derived.recorded


def _register_fresh_batch(derived: _Derived, batch: list[_Row], owner: str | None) -> bool:
    """Register ``batch`` at once when none of its claims is taken or repeated.

    The common case (an owner module imported once) then costs a few
    ``dict.update`` calls. Anything else (a clash, a duplicate inside the
    batch, an identical re-registration, a deprecated row sharing its
    replacement's logger key) changes nothing and returns False, so the
    row-by-row path decides and words the error. Caller holds _LOCK.
    """
    series = [row.name for row in batch]
    names = [name.casefold() for name in series]
    cached = _KEY_CACHE.get  # every row derived its key when it was built
    keys = [
        (cached((row.name, row.namespace)) or _registry_key(row.name, row.namespace)).casefold()
        for row in batch
    ]
    slots: list[_TeeSlot] = []
    owners: list[TeedMetric] = []
    home = _home(derived, batch[0])  # one type per batch, checked by _register
    if isinstance(batch[0], TeedMetric):
        teed: list[TeedMetric] = batch  # type: ignore[assignment] # one type per batch
        slots = [(row.prefix, row.logger_key) for row in teed]
        owners = teed
        extra = [row for row in teed if row.other_prefixes]
        if extra:
            owners = list(teed)
            for row in extra:
                slots += [(prefix, row.logger_key) for prefix in row.other_prefixes]
                owners += [row] * len(row.other_prefixes)
    for table, claimed in (
        (derived.names, names),
        (derived.keys, keys),
        (derived.tee_slots, slots),
    ):
        if len(set(claimed)) != len(claimed) or not table.keys().isdisjoint(claimed):
            return False
    # strict=False: every list above has one entry per claim by construction.
    home.update(zip(series, batch, strict=False))
    derived.names.update(zip(names, batch, strict=False))
    derived.keys.update(zip(keys, batch, strict=False))
    derived.tee_slots.update(zip(slots, [(row,) for row in owners], strict=False))
    if owner is not None:
        derived.owners.update(dict.fromkeys(series, owner))
    derived.teed_snapshot = None
    derived.recorded_snapshot = None
    return True


def _replacement_pair(row: TeedMetric, other: TeedMetric) -> bool:
    return row.replaced_by == other.name or other.replaced_by == row.name


def _register_row_by_row(derived: _Derived, batch: list[_Row], owner: str | None) -> None:
    """Validate the whole batch before touching anything, then commit it. Caller holds _LOCK."""
    names: dict[str, _Row] = {}
    keys: dict[str, _Row] = {}
    slots: dict[_TeeSlot, tuple[TeedMetric, ...]] = {}
    fresh: dict[_Row, None] = {}  # insertion-ordered set

    def owner_of(other: _Row) -> str | None:
        return owner if other in fresh else derived.owners.get(other.name)

    def clash(row: _Row, other: _Row, label: str, value: str, phrase: str) -> ValueError:
        scoped = (
            " (or, when the key means something else in each loop, scope the two rows to "
            "disjoint loops with emitted_by; when it means something else by the run's "
            "configuration, give both rows choices that exclude each other, such as "
            "ConfigChoice(path, 'true') and ConfigChoice(path, 'false'))"
            if label == "logger key"
            else ""
        )
        return ValueError(
            f"{_describe(row, owner)} claims {label} {value!r}, {phrase} by "
            f"{_describe(other, owner_of(other))}{_differences(row, other)}; rename one of "
            f"them or move the row to a single owner{scoped}"
        )

    for row in batch:
        home: dict[str, Any] = derived.teed if isinstance(row, TeedMetric) else derived.recorded
        if home.get(row.name) == row or row in fresh:
            continue  # identical re-registration (module re-import): a no-op
        for table, staged, k, label, value in (
            (derived.names, names, row.name.casefold(), "series name", row.name),
            (derived.keys, keys, row.key.casefold(), "registry key", row.key),
        ):
            other = staged.get(k) or table.get(k)
            if other is not None and other != row:
                raise clash(row, other, label, value, "already declared")
            staged[k] = row
        if isinstance(row, TeedMetric):
            for slot in _tee_slots(row):
                taken = slots.get(slot, derived.tee_slots.get(slot, ()))
                meeting = [
                    other
                    for other in taken
                    if loops_meet(row, other) and not choices_exclude(row, other)
                ]
                for other in meeting:
                    if len(meeting) > 1 or not _replacement_pair(row, other):
                        raise clash(row, other, "logger key", _where(slot), "already teed")
                slots[slot] = (*taken, row)
        fresh[row] = None
    if not fresh:
        return
    for row in fresh:
        if isinstance(row, TeedMetric):
            derived.teed[row.name] = row
        else:
            derived.recorded[row.name] = row
        if owner is not None:
            derived.owners[row.name] = owner
    derived.names.update(names)
    derived.keys.update(keys)
    derived.tee_slots.update(slots)
    derived.teed_snapshot = None
    derived.recorded_snapshot = None


def register_teed_metrics(rows: Iterable[TeedMetric], *, owner: str | None = None) -> None:
    """Declare rows for teeing, from the module that logs their keys.

    Generated modules pass ``owner=__name__``, so errors name the owner module
    of both rows; without it the calling module is named. Registering a row
    identical to one already declared is a no-op, and so is an empty batch
    (even after :func:`freeze_metrics`). A call is all-or-nothing: when any
    row is rejected, none of the call's rows is kept.

    Raises:
        ValueError: Two rows claim the same ``(prefix, logger_key)`` ("already
            teed"; only a deprecated row and the row its ``replaced_by`` names
            may share one), the same series name case-insensitively or the same
            registry key ("already declared"). The message names both rows,
            their owners and, for two versions of one row, the fields that
            differ. Both would be silent otherwise: the first makes one row
            unreachable, the second makes two rows record against one instrument.
        RuntimeError: Registration is already closed; see :func:`freeze_metrics`.
    """
    _register(rows, TeedMetric, owner if owner is not None else _caller_module(2))


def _snapshot() -> tuple[tuple[TeedMetric, ...], tuple[RecordedMetric, ...]]:
    derived = _DERIVED
    teed, recorded = derived.teed_snapshot, derived.recorded_snapshot
    if teed is None or recorded is None or not derived.current():
        with _LOCK:
            derived = _derived()
            teed = derived.teed_snapshot = tuple(derived.teed.values())
            recorded = derived.recorded_snapshot = tuple(derived.recorded.values())
    return teed, recorded


def teed_metrics() -> tuple[TeedMetric, ...]:
    """Every teed row declared so far, in declaration order."""
    return _snapshot()[0]


def register_recorded_metrics(rows: Iterable[RecordedMetric], *, owner: str | None = None) -> None:
    """Declare rows from the module that records them.

    Same rules as :func:`register_teed_metrics`: ``owner`` names the declaring
    module in errors, identical re-registration and an empty batch are no-ops,
    a call is all-or-nothing, and names and registry keys are unique across
    teed and recorded rows.

    Raises:
        ValueError: The name or registry key is already claimed by another row
            ("already declared").
        RuntimeError: Registration is already closed; see :func:`freeze_metrics`.
    """
    _register(rows, RecordedMetric, owner if owner is not None else _caller_module(2))


def recorded_metrics() -> tuple[RecordedMetric, ...]:
    """Every directly-recorded row declared so far, in declaration order."""
    return _snapshot()[1]


def owner_of(name: str) -> str | None:
    """The module that declared the series ``name`` (``owner=``), or None when unknown."""
    with _LOCK:
        return _derived().owners.get(name)


def freeze_metrics() -> None:
    """Close registration, once the rows have been handed to the exporter.

    Called by the OpenTelemetry layer when it creates the instruments, on the
    first tee, whether export is on or off (upstream freezes only while
    exporting; we freeze always, so a late owner import fails in the first
    local run, not only in production). A row declared after that would never
    get an instrument, so registering one raises ``RuntimeError`` naming its
    owner module instead of being dropped silently.
    """
    global _FROZEN  # noqa: PLW0603 - process-wide registry
    with _LOCK:
        _FROZEN = True


def _registry_state() -> tuple[dict[str, TeedMetric], dict[str, RecordedMetric], bool]:
    """The registry in place, ``(_REGISTERED, _RECORDED, _FROZEN)``, read at call time.

    The one door through which :mod:`metric_catalog.otel` (and so the tee)
    reads the registry's globals: upstream's tests swap them by name, and a
    swap is then seen at the next call.
    """
    return _REGISTERED, _RECORDED, _FROZEN


def is_frozen() -> bool:
    """Whether :func:`freeze_metrics` has closed registration in this process."""
    return _FROZEN


def _reset_for_tests() -> None:
    """Forget every row and reopen registration. For test isolation only."""
    global _FROZEN, _DERIVED  # noqa: PLW0603
    with _LOCK:
        _REGISTERED.clear()
        _RECORDED.clear()
        _FROZEN = False
        _PREVIOUS.clear()
        _BOOKKEEPING.clear()
        _DERIVED = _Derived(_REGISTERED, _RECORDED)


# --- step keys ----------------------------------------------------------------------

_STEP_KEYS: dict[str, tuple[tuple[str, str], ...]] = {}
_ENV_LOOP: Final = "METRIC_CATALOG_LOOP"


def register_step_keys(step_keys: Mapping[str, tuple[tuple[str, str], ...]]) -> None:
    """Declare each loop's step keys: ``{loop: ((prefix, step key), ...)}``.

    The generated module of the catalog file declaring the loops calls it with its
    ``STEP_KEYS`` (``{"sft": (("train", "train/global_step"),)}``); a prefix ``""``
    makes the key the step of every key of the loop. Registering a loop again
    replaces its keys.

    Raises:
        ValueError: A loop name or a pair is not made of strings.
    """
    checked: dict[str, tuple[tuple[str, str], ...]] = {}
    for loop, pairs in step_keys.items():
        if type(loop) is not str or not loop or not isinstance(pairs, tuple):
            msg = f"register_step_keys: {loop!r} -> {pairs!r} is not a loop name and a tuple"
            raise ValueError(msg)
        for pair in pairs:
            if not (
                isinstance(pair, tuple)
                and len(pair) == 2
                and all(type(part) is str for part in pair)
                and pair[1]
            ):
                msg = (
                    f"register_step_keys: {pair!r} of loop {loop!r} is not a pair "
                    "(prefix, step key) of strings, e.g. ('train', 'train/global_step')"
                )
                raise ValueError(msg)
        checked[loop] = pairs
    with _LOCK:
        _STEP_KEYS.update(checked)


def step_metric(key: str, loop: str | None = None) -> str | None:
    """The logged key that is the step of ``key`` (``prefix/key``) in ``loop``, if declared.

    What W&B's ``define_metric(key, step_metric=...)`` takes: OpenRLHF logs
    without ``step=`` and plots ``train/*`` against ``train/global_step``. The most
    specific prefix covering ``key`` wins. ``loop`` defaults to
    ``METRIC_CATALOG_LOOP``; with no loop known, the step key every loop agrees
    on, else ``None``.
    """
    if loop is None:
        loop = os.environ.get(_ENV_LOOP, "").strip() or None
    loops = [loop] if loop is not None else list(_STEP_KEYS)
    found = {_step_of(_STEP_KEYS.get(name, ()), key) for name in loops} - {None}
    return found.pop() if len(found) == 1 else None


def _step_of(pairs: tuple[tuple[str, str], ...], key: str) -> str | None:
    best: tuple[str, str] | None = None
    for prefix, step_key in pairs:
        if prefix and not key.startswith(prefix + "/") and key != prefix:
            continue
        if best is None or len(prefix) > len(best[0]):
            best = (prefix, step_key)
    return None if best is None else best[1]


def step_keys() -> dict[str, tuple[tuple[str, str], ...]]:
    """Every registered loop's step keys (a copy)."""
    return dict(_STEP_KEYS)


# --- bookkeeping keys ---------------------------------------------------------------

_BOOKKEEPING: dict[str, None] = {}


def register_bookkeeping(keys: tuple[str, ...]) -> None:
    """Declare logged keys that are no metric (a catalog file's ``bookkeeping:``).

    Each is a key as the backends show it (``prefix/key``) or a pattern where each ``*``
    stands for any text (``timing/*/start``); the tee leaves them out, as live-check,
    scan and infer do. The generated module of a file with ``bookkeeping:`` calls it
    with its ``BOOKKEEPING``. Registering a key again is a no-op.

    Raises:
        ValueError: ``keys`` is not a tuple of non-empty strings.
    """
    if not isinstance(keys, tuple) or not all(type(k) is str and k for k in keys):
        msg = (
            f"register_bookkeeping: {keys!r} is not a tuple of keys (non-empty strings), "
            "e.g. ('time', 'timing/*/start')"
        )
        raise ValueError(msg)
    with _LOCK:
        _BOOKKEEPING.update(dict.fromkeys(keys))


def bookkeeping_keys() -> tuple[str, ...]:
    """Every registered bookkeeping key or pattern, in registration order."""
    return tuple(_BOOKKEEPING)


def as_scalar(value: Any) -> Optional[float]:  # noqa: UP045 - the reference signature
    """Coerce a logged value to float, or ``None`` when it is not a usable scalar.

    Shared by everything that reads a raw ``Logger`` dict, so they agree on what
    counts as a number. Accepts ``int``, ``float``, numpy integer and floating
    scalars, and 0-d numpy arrays or torch tensors (duck-typed through
    ``.item()``, without importing either library). Returns ``None`` for bools
    (numpy's too), ``None``, strings, bytes, complex numbers, sequences,
    multi-element arrays, and anything whose conversion raises. NaN and
    infinities come back as floats: a NaN loss is a signal, and the exporter
    layer decides what to do with it.
    """
    kind = type(value)
    if kind is float:
        return value  # type: ignore[no-any-return]
    if kind is int:
        return _int_to_float(value)
    try:
        return _coerce(value)
    except Exception:  # noqa: BLE001 - a hostile __float__/__class__/item: not a scalar
        return None


def _coerce(value: Any) -> Optional[float]:  # noqa: UP045 - as as_scalar
    """:func:`as_scalar` past its fast paths; may raise whatever ``value``'s methods raise."""
    if value is None or isinstance(value, (bool, str, bytes, bytearray, complex)):
        return None
    if isinstance(value, (int, float)):  # subclasses, e.g. np.float64
        return _int_to_float(value) if isinstance(value, int) else float(value)
    item = getattr(value, "item", None)
    if item is not None and callable(item):
        if tuple(getattr(value, "shape", ())) != ():
            return None  # multi-element (or 1-element, 1-d) arrays are not scalars
        inner = item()
        if inner is value or isinstance(inner, (bool, complex)):
            return None
        if isinstance(inner, (int, float)):
            return _int_to_float(inner) if isinstance(inner, int) else float(inner)
        return None
    if isinstance(value, numbers.Real):  # Fraction and other registered reals
        return float(value)
    return None


def _int_to_float(value: int) -> float | None:
    try:
        return float(value)
    except OverflowError:
        return None
