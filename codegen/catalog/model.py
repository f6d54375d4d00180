"""The loaded catalog: plain, immutable data with the source position of every field.

The loader builds these from ``catalog/*.yaml``; validation, lints, renderers,
diff and dashboards all read them. Nothing here touches the file system.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Final, Literal

from metric_catalog import series_rules
from metric_catalog.series_rules import (
    BACKEND_KEYS,
    Capture,
    bookkeeping_matches,
    is_literal,
    qualified_key,
    unit_scale,
)
from metric_catalog.value_rules import ValueRange, implied_range
from metric_catalog.vocabulary import DEFAULT_PREFIX, METRIC_NAME_PREFIX, registry_key

from .annotations import EMPTY as NO_ANNOTATIONS
from .annotations import Annotations
from .diagnostics import Position
from .naming import constant_name, prometheus_name

__all__ = [
    "BUILTIN_BOOKKEEPING",
    "DEFAULT_REQUIREMENT_LEVEL",
    "VALUE_TYPES",
    "Attribute",
    "AttributeRef",
    "AttributeValue",
    "Bookkeeping",
    "Catalog",
    "CatalogFile",
    "Deprecation",
    "Derivation",
    "Loop",
    "MetricRow",
    "Section",
    "StepKey",
    "attribute_label",
    "fill_template",
]

Section = Literal["teed", "recorded"]

# The vocabularies are the series rules' (metric_catalog.series_rules: METRIC_KINDS,
# ATTRIBUTE_REQUIREMENT_LEVELS for a row's attribute, PRESENCE_LEVELS for a row in a run).

# --- attributes -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AttributeValue:
    """One allowed value of an enumerated attribute, as written (a string)."""

    value: str
    description: str
    position: Position


@dataclass(frozen=True, slots=True)
class Attribute:
    """An attribute rows may carry: a dotted name, a type and its domain.

    The domain is an enum (``values``) or an open set with a budget
    (``max_cardinality``); a ``bool`` attribute needs neither.
    """

    name: str
    type: str
    description: str
    stability: str
    position: Position
    path: str
    """Catalog file that declares it."""
    values: tuple[AttributeValue, ...] = ()
    max_cardinality: int | None = None
    no_lint: tuple[str, ...] = ()
    positions: Mapping[str, Position] = field(default_factory=dict, compare=False)
    spans_segments: bool = False
    """A placeholder of it may capture several path segments (``openai/gsm8k``)."""
    note: str = ""
    """More about it than its description (Weaver's ``note``); ``""``: none."""
    examples: tuple[str, ...] = ()
    """Example values of an open string attribute, as written (Weaver wants them)."""
    annotations: Annotations = NO_ANNOTATIONS
    """The team's own data about it (``annotations:``), carried and never read."""
    open_enum: bool = False
    """``open: "true"``: ``values`` are the known ones, and other values are taken too, up
    to ``max_cardinality`` distinct others per series."""

    @property
    def closed_values(self) -> tuple[AttributeValue, ...]:
        """The values it is limited to: its enum, ``()`` when open (an open enum included)."""
        return () if self.open_enum else self.values

    @property
    def capture(self) -> Capture:
        """What a placeholder of this attribute captures (the series rules)."""
        return series_rules.capture(
            self.type, (v.value for v in self.closed_values), spans=self.spans_segments
        )

    @property
    def bound(self) -> int | None:
        """How many values it can take (:func:`~metric_catalog.series_rules.attribute_bound`)."""
        return series_rules.attribute_bound(
            len(self.values), self.max_cardinality, open_enum=self.open_enum
        )

    @property
    def label(self) -> str:
        """Prometheus label name (``rl.setup.phase`` -> ``rl_setup_phase``)."""
        return attribute_label(self.name)

    @property
    def constant_name(self) -> str:
        """Generated Python constant holding the name (``RL_SETUP_PHASE``)."""
        return self.label.upper()

    @property
    def type_name(self) -> str:
        """Generated ``Literal`` alias of the values (``RlSetupPhase``)."""
        return "".join(part.capitalize() for part in self.label.split("_") if part)

    @property
    def domain(self) -> tuple[str, ...] | None:
        """The finite set of values as logged (``None`` for an open attribute or enum)."""
        if self.open_enum:
            return None
        if self.values:
            return tuple(v.value for v in self.values)
        if self.type == "bool":
            return ("true", "false")
        return None

    def typed_values(self) -> tuple[str | int | float | bool, ...]:
        """The enum's values converted to the attribute's type."""
        if self.type == "int":
            return tuple(int(v.value) for v in self.values)
        if self.type == "double":
            return tuple(float(v.value) for v in self.values)
        return tuple(v.value for v in self.values)

    def where(self, field_name: str) -> Position:
        """Position of a field's value, or of the attribute when the field is absent."""
        return self.positions.get(field_name, self.position)


def fill_template(template: str, texts: Mapping[str, str]) -> str:
    """``template`` (a key or prefix pattern) with each placeholder replaced by its text in
    ``texts`` (the key a family logs for those values); a placeholder not given stays."""
    if "{" not in template:
        return template
    return "".join(
        part if isinstance(part, str) else texts.get(part.name, "{" + part.name + "}")
        for part in series_rules.parse_pattern(template)
    )


def attribute_label(name: str) -> str:
    """The Prometheus label an attribute name becomes (invalid characters to ``_``)."""
    return "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in name)


@dataclass(frozen=True, slots=True)
class Derivation:
    """How the tee fills a derived attribute from another attribute of the row.

    ``table`` maps source values to this attribute's values, both as written
    (strings); a source value missing from it takes ``default``, or leaves the
    attribute unset when there is none. Positions do not take part in equality,
    so two catalogs compare by what they declare.
    """

    source: str
    """The attribute (of the same row) it is derived from: ``derive.from``."""
    table: tuple[tuple[str, str], ...]
    """``(source value, value)`` pairs in the order written: ``derive.map``."""
    default: str | None = None
    """The value for a source value the table lacks: ``derive.default``."""
    position: Position | None = field(default=None, compare=False)
    """Where the ``derive`` key is written."""
    source_position: Position | None = field(default=None, compare=False)
    key_positions: tuple[Position, ...] = field(default=(), compare=False)
    """Where each table key is written, in table order."""
    value_positions: tuple[Position, ...] = field(default=(), compare=False)
    """Where each table value is written, in table order."""
    default_position: Position | None = field(default=None, compare=False)

    def lookup(self, value: str) -> str | None:
        """The derived value for the source value ``value`` (``None``: unset)."""
        for key, derived in self.table:
            if key == value:
                return derived
        return self.default


@dataclass(frozen=True, slots=True)
class AttributeRef:
    """A row's use of an attribute, with its requirement level (and derivation, if any)."""

    name: str
    requirement_level: str
    position: Position
    """Where the ``ref`` is written."""
    derive: Derivation | None = None
    """How the tee fills the attribute from another one of the row (``None``: not derived)."""
    requirement_position: Position | None = field(default=None, compare=False)
    """Where ``requirement_level`` is written (``None`` when it is left to its default)."""
    values: tuple[str, ...] = ()
    """The values of the attribute's enum this row takes, as written (``[mean, max, min]`` of
    a shared ``rl.stat``); empty: every value. See :meth:`narrow`."""
    values_positions: tuple[Position, ...] = field(default=(), compare=False)
    """Where each of :attr:`values` is written."""

    def narrow(self, attribute: Attribute) -> Attribute:
        """``attribute`` as this row sees it: its enum cut to :attr:`values` (when given).

        The one place a row's subset applies: the generated row, live-check, emit,
        resolve, coverage and diff all read the row's attributes through it."""
        if not self.values:
            return attribute
        kept = tuple(value for value in attribute.values if value.value in self.values)
        return replace(attribute, values=kept)


DEFAULT_REQUIREMENT_LEVEL: Final = "recommended"
"""A row's presence requirement level when it declares none (Weaver's default)."""


@dataclass(frozen=True, slots=True)
class StepKey:
    """A logged key whose value is the step of the keys under ``prefix`` (``""``: all)."""

    key: str
    prefix: str = ""
    position: Position | None = field(default=None, compare=False)

    def covers(self, logged: str) -> bool:
        """Whether the logged key (``prefix/key`` as the backends show it) is on this axis."""
        return not self.prefix or logged.startswith(self.prefix + "/")


@dataclass(frozen=True, slots=True)
class Loop:
    """A training loop (``grpo_sync``, ``sft``...) rows may name in ``emitted_by``.

    ``signature`` holds qualified logged keys (``train/critic/loss``) whose
    presence in a log identifies a run of this loop.
    """

    name: str
    description: str
    signature: tuple[str, ...]
    position: Position
    step_keys: tuple[StepKey, ...] = ()
    """Logged keys holding the loop's step (``train/global_step``), most specific first."""

    def step_key(self, logged: str) -> StepKey | None:
        """The step key whose axis the logged key (``prefix/key``) is on, if any."""
        found = [s for s in self.step_keys if s.covers(logged)]
        return max(found, key=lambda s: len(s.prefix), default=None)


@dataclass(frozen=True, slots=True)
class Bookkeeping:
    """A logged key (or ``*`` pattern) that is no metric, with the reason (``bookkeeping:``)."""

    key: str
    reason: str
    position: Position
    path: str = ""
    """Catalog file that declares it (``""``: built in)."""

    def matches(self, logged: str) -> bool:
        """Whether the logged key (``prefix/key`` as the backends show it) is this one."""
        return bookkeeping_matches(self.key, logged)


BUILTIN_BOOKKEEPING: Final[tuple[Bookkeeping, ...]] = (
    Bookkeeping(
        BACKEND_KEYS,
        "W&B's own keys (_step, _runtime, _timestamp, _wandb...): written by the backend, "
        "not by the training code.",
        Position("<built-in>", 1, 1),
    ),
)
"""Keys known as bookkeeping without a declaration. MLflow's system metrics (``system/...``)
are told apart by the reader of an MLflow store, which knows the backend wrote them."""

VALUE_TYPES: Final[tuple[str, ...]] = (
    "number",
    "int",
    "table",
    "text",
    "image",
    "histogram",
    "media",
    "object",
)
"""What a teed row's key holds: ``number`` or ``int`` (exported; ``int`` values are whole), or
a non-scalar value (exported nowhere)."""


@dataclass(frozen=True, slots=True)
class Deprecation:
    """A row on its way out: since when, what replaces it, and why."""

    since: str
    replaced_by: str | None = None
    note: str = ""


@dataclass(frozen=True, slots=True)
class MetricRow:
    """One catalog row, teed (has a logger key) or recorded (has none).

    ``positions`` maps each field name present in the YAML to where its value
    starts; ``position`` is where the row's mapping starts. Nested fields use
    dotted keys (``deprecated.since``, ``deprecated.replaced_by``) and list
    items their index (``no_lint[0]``).
    """

    section: Section
    name: str
    kind: str
    unit: str
    description: str
    stability: str
    position: Position
    logger_key: str | None = None
    prefix: str | None = None
    """Effective prefix for teed rows (row, else file default, else ``train``)."""
    deprecated: Deprecation | None = None
    no_lint: tuple[str, ...] = ()
    positions: Mapping[str, Position] = field(default_factory=dict, compare=False)
    # --- attributes and key families ---
    attributes: tuple[AttributeRef, ...] = ()
    other_prefixes: tuple[str, ...] = ()
    """Further prefixes a teed row is teed under (``prefixes: [train, ""]``)."""
    cardinality_limit: int | None = None

    @property
    def prefixes(self) -> tuple[str, ...]:
        """Every prefix of a teed row, ``prefix`` first; empty for recorded rows."""
        return () if self.prefix is None else (self.prefix, *self.other_prefixes)

    @property
    def logged_keys(self) -> tuple[str, ...]:
        """Every ``prefix/logger_key`` a teed row is logged as (patterns as written)."""
        if self.logger_key is None:
            return ()
        return tuple(qualified_key(prefix, self.logger_key) for prefix in self.prefixes)

    @property
    def is_family(self) -> bool:
        """True when the logger key or a prefix holds a ``{placeholder}``."""
        # Called for every row by the cross-file checks: no tuple built on the way.
        if self.logger_key is not None and not is_literal(self.logger_key):
            return True
        if self.prefix is not None and not is_literal(self.prefix):
            return True
        return not all(is_literal(prefix) for prefix in self.other_prefixes)

    def attribute_names(self) -> tuple[str, ...]:
        """Names of the row's attributes in declaration order."""
        return tuple(ref.name for ref in self.attributes)

    # Presence in a run (teed rows; see live-check).
    requirement_level: str = DEFAULT_REQUIREMENT_LEVEL
    """``required``, ``conditionally_required``, ``recommended`` or ``opt_in``."""
    condition: str | None = None
    """When a ``conditionally_required`` row is logged (set exactly for that level)."""
    emitted_by: tuple[str, ...] = ()
    """Loops that log the row (row, else file default); empty: any loop may."""
    first_step: int | None = None
    """First step the row can be logged at; a run that stopped earlier is not missing it."""
    first_step_config: str | None = None
    """``first_step`` as a configuration value (``config.trainer.test_freq``), read from the
    configuration a run logged; ``first_step`` is then ``None``."""
    every: int | None = None
    """The row is logged at the steps that are multiples of this period (validation every
    10 steps); a run whose steps reached none of them (at or after ``first_step``) is not
    missing it."""
    every_config: str | None = None
    """``every`` as a configuration value (``config.trainer.test_freq``); ``every`` is then
    ``None``."""
    phase: int = 0
    """With ``every``: the row is logged at the steps equal to ``phase`` modulo the period
    (``-1``: a 0-based loop's ``(step + 1) % n == 0``; ``1``: a value logged one step late);
    see :mod:`codegen.catalog.schedule`."""
    at_last_step: bool = False
    """With ``every``: the row is also logged at the run's last step (a checkpoint saved
    every ``save_steps`` and at the end)."""
    temporality: str = "delta"
    """A counter's logged value: ``delta`` (this step's amount) or ``cumulative`` (a running
    total whose growth the tee adds)."""
    step_axis: str = ""
    """What the step a teed key is logged at counts when it is not the training step
    (``samples`` for Megatron-LM's ``... vs samples`` keys); ``""``: the training step."""
    logged_unit: str = ""
    """Unit the code logs values in when the row's ``unit:`` is a prefixed one (``ms``);
    ``unit`` is then the base unit the series is exported in (``s``). ``""``: logged as
    exported."""
    value_type: str = "number"
    """What the key holds: ``number`` (exported), ``int`` (a number that is always whole),
    or a non-scalar value (``table``, ``text``, ``image``, ``histogram``, ``media``,
    ``object``) exported nowhere."""

    @property
    def is_scalar(self) -> bool:
        """Whether the row's values are numbers the tee exports (``number`` or ``int``)."""
        return self.value_type in ("number", "int")

    # What a value may be (metric_catalog.value_rules).
    declared_range: ValueRange | None = None
    """The row's ``range:`` in the unit the code logs (``None``: none written, the unit's
    default applies; ``ValueRange()`` for ``range: {}``, unbounded)."""
    goal: str = ""
    """``maximize`` or ``minimize`` (bigger or smaller is better); ``""``: not declared."""
    sum_of: tuple[str, ...] = ()
    """Series whose values sum to this row's value at the same step (``sum_of:``)."""
    note: str = ""
    """More about the row than its description (Weaver's ``note``); ``""``: none."""
    non_finite: str = "reported"
    """``allowed`` when NaN and the infinities are legitimate values (a skipped update logs
    ``grad_norm = inf``): live-check does not report them, the tee exports them on a gauge
    without a warning and no ``NonFinite`` alert is generated; ``reported`` (default)."""
    annotations: Annotations = NO_ANNOTATIONS
    """The team's own data about the row (``annotations:``), carried and never read."""
    namespace: str = METRIC_NAME_PREFIX
    """The series namespace ``name`` starts with: its file's ``namespace:`` (``rl.``
    unless declared), stripped by :attr:`registry_key`."""

    @property
    def value_range(self) -> ValueRange | None:
        """The range values are judged against, in the unit the code logs: the declared
        one, else the unit's default; with ``value_type: int``, integers. ``None``: any
        number is fine."""
        if not self.is_scalar:
            return None  # a table or an image has no range
        found = self.declared_range
        if found is None:
            found = implied_range(self.declared_unit, self.kind)
        if self.value_type != "int":
            return found if found is not None and found.bounded else None
        if found is None:
            return ValueRange(integer=True)
        return ValueRange(
            found.low, found.high, low_open=found.low_open, high_open=found.high_open, integer=True
        )

    @property
    def exported_range(self) -> ValueRange | None:
        """:attr:`value_range` in the unit the series is exported in (``ms`` -> ``s``)."""
        found = self.value_range
        if found is None or not self.logged_unit:
            return found
        _base, numerator, denominator = unit_scale(self.logged_unit)
        return found.scaled(numerator / denominator)

    @property
    def declared_unit(self) -> str:
        """The unit as the catalog writes it: what the code logs (``ms``)."""
        return self.logged_unit or self.unit

    @property
    def registry_key(self) -> str:
        """Registry key (``rl.reward.mean`` -> ``reward_mean``; ``jvm.memory.used`` in
        namespace ``jvm.`` -> ``memory_used``)."""
        return registry_key(self.name, self.namespace)

    @property
    def constant_name(self) -> str:
        """Generated Python constant (``REWARD_MEAN``)."""
        return constant_name(self.name, self.namespace)

    @property
    def prometheus_name(self) -> str:
        """Metric family name in a Prometheus scrape."""
        return prometheus_name(self.name, self.kind, self.unit)

    @property
    def qualified_logger_key(self) -> str:
        """``prefix/logger_key`` as the logging backends show it, ``""`` for recorded rows."""
        if self.logger_key is None:
            return ""
        return qualified_key(self.prefix or "", self.logger_key)

    def where(self, field_name: str) -> Position:
        """Position of a field's value, or of the row when the field is absent."""
        return self.positions.get(field_name, self.position)


@dataclass(frozen=True, slots=True)
class CatalogFile:
    """One ``catalog/<owner>.yaml``: who owns the rows, and the rows in declaration order."""

    path: str
    """POSIX path as reported in diagnostics, e.g. ``catalog/grpo.yaml``."""
    owner: str
    module: str
    description: str
    teed: tuple[MetricRow, ...]
    recorded: tuple[MetricRow, ...]
    prefix: str = DEFAULT_PREFIX
    positions: Mapping[str, Position] = field(default_factory=dict, compare=False)
    attributes: tuple[Attribute, ...] = ()
    """Attributes this file declares (usable by every row of the catalog)."""
    other_prefixes: tuple[str, ...] = ()
    """Further default prefixes (file-level ``prefixes``)."""
    # Presence: the loops this file declares and its default ``emitted_by``.
    loops: tuple[Loop, ...] = ()
    emitted_by: tuple[str, ...] = ()
    bookkeeping: tuple[Bookkeeping, ...] = ()
    """Logged keys (or patterns) this file declares as no metric (``bookkeeping:``)."""
    namespace: str = METRIC_NAME_PREFIX
    """The series namespace every row name starts with (``namespace:``; ``rl.`` unless
    declared)."""

    @property
    def rows(self) -> tuple[MetricRow, ...]:
        """Teed rows then recorded rows, each in declaration order."""
        return self.teed + self.recorded

    def where(self, field_name: str) -> Position:
        """Position of a top-level field's value, or the file start."""
        return self.positions.get(field_name, Position(self.path, 1, 1))


@dataclass(frozen=True, slots=True)
class Catalog:
    """The whole catalog: files sorted by path, so output never depends on input order."""

    files: tuple[CatalogFile, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "files", tuple(sorted(self.files, key=lambda f: f.path)))

    def rows(self) -> Iterator[tuple[CatalogFile, MetricRow]]:
        """Every row with its file, files by path, rows in declaration order."""
        for catalog_file in self.files:
            for row in catalog_file.rows:
                yield catalog_file, row

    def by_name(self) -> dict[str, tuple[CatalogFile, MetricRow]]:
        """Rows keyed by series name."""
        return {row.name: (f, row) for f, row in self.rows()}

    def attributes(self) -> dict[str, Attribute]:
        """Every declared attribute by name (the first declaration wins), files by path."""
        found: dict[str, Attribute] = {}
        for catalog_file in self.files:
            for attribute in catalog_file.attributes:
                found.setdefault(attribute.name, attribute)
        return found

    @staticmethod
    def row_attributes(row: MetricRow, known: Mapping[str, Attribute]) -> dict[str, Attribute]:
        """The declared attributes of ``row`` by name, as the row sees them (an enum cut to
        the ref's ``values``); an attribute no file declares is left out."""
        return {
            ref.name: ref.narrow(known[ref.name]) for ref in row.attributes if ref.name in known
        }

    def bookkeeping(self) -> tuple[Bookkeeping, ...]:
        """Every declared bookkeeping key, files by path, then the built-in ones."""
        declared = tuple(entry for f in self.files for entry in f.bookkeeping)
        return (*declared, *BUILTIN_BOOKKEEPING)

    def is_bookkeeping(self, key: str) -> bool:
        """Whether the logged key (``prefix/key`` as the backends show it) is no metric.

        True for a key the catalog lists under ``bookkeeping:`` (or a pattern there
        matches), for a loop's step key (``step_keys``) and for the backends' own keys
        (W&B's ``_step``, ``_runtime``...). What ``live-check``, ``infer`` and ``scan``
        leave out.
        """
        return key in self.step_key_names() or self.bookkeeping_entry(key) is not None

    def step_key_names(self) -> frozenset[str]:
        """Every logged key some loop declares as its step (``train/global_step``)."""
        return frozenset(s.key for loop in self.loops() for s in loop.step_keys)

    def bookkeeping_entry(self, key: str) -> Bookkeeping | None:
        """The bookkeeping declaration ``key`` falls under, or ``None``."""
        for entry in self.bookkeeping():
            if entry.matches(key):
                return entry
        return None

    def loops(self) -> tuple[Loop, ...]:
        """Every declared loop, files by path, first declaration of a name only."""
        seen: dict[str, Loop] = {}
        for catalog_file in self.files:
            for loop in catalog_file.loops:
                seen.setdefault(loop.name, loop)
        return tuple(seen.values())
