"""Declared rows as OpenTelemetry instruments: the metric group.

On the first tee, :func:`ensure_metric_group_registered` turns every row of the
registry into a :class:`MetricSpec` and one instrument on the process's
``MeterProvider`` (see :mod:`metric_catalog.exporters`), then closes
registration with :func:`~metric_catalog.vocabulary.freeze_metrics`. It also
precomputes, per ``log_metrics`` prefix, the ``(logger_key, bound method, row)``
triples the tee walks, so a tee step is a dict lookup and one SDK call per key.

The OpenTelemetry SDK is imported inside functions only: importing this module
(or :mod:`metric_catalog`) costs no SDK import (about 70 ms).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from time import time_ns
from typing import TYPE_CHECKING, Any, Final

from metric_catalog import exporters, series_rules, vocabulary
from metric_catalog._attributes import (
    KEY_CACHE_LIMIT,
    RUNTIME_PREFIX_KEY_CACHE_LIMIT,
    CompiledTemplate,
    Hit,
    KeyPatterns,
    SeriesPoints,
    compile_template,
)
from metric_catalog._warn import describe_error, type_name, warn_once
from metric_catalog.series_rules import is_literal, literal_text
from metric_catalog.vocabulary import RecordedMetric, TeedMetric

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider

__all__ = [
    "ENV_LOOP",
    "ENV_STRICT",
    "METER_NAME",
    "LayeredPatterns",
    "LoopPatterns",
    "MetricGroup",
    "MetricSpec",
    "PrefixPlan",
    "Recorder",
    "RunningTotal",
    "TeeEntry",
    "current_group",
    "ensure_metric_group_registered",
    "histogram_boundaries",
    "identity_labels",
    "metric_specs",
    "non_finite_recorder",
    "run_config",
    "set_identity",
    "set_run_config",
    "warn_ambiguous",
    "warn_undecided",
]

METER_NAME: Final = "metric_catalog"
"""Instrumentation scope every instrument is created under."""

ENV_STRICT: Final = "METRIC_CATALOG_STRICT"
"""Set to ``1`` to report keys logged under a teed prefix but never declared."""

ENV_LOOP: Final = "METRIC_CATALOG_LOOP"
"""Environment variable naming the process's training loop (``sft``); the tee routes a key
rows of several loops share to the row of this loop."""

_TRUE: Final = frozenset({"1", "true", "yes", "on"})

Recorder = Callable[..., None]
"""A bound ``set``/``add``/``record`` method: ``recorder(value, attributes)``."""

TeeEntry = tuple[str, Recorder, TeedMetric, SeriesPoints, "dict[str, Any] | None", Any]
"""``(logger_key, recorder, row, points, base attributes, captured attributes)``.

One per plain declared key of a prefix; ``base`` is what a point is recorded
with when the call passes no attributes (identity labels and any attribute
captured from a prefix pattern), ``captured`` those captured values or None."""


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """What one instrument is built from: a registry row minus its logging details."""

    key: str
    """Registry key (``reward_mean``), what :func:`~metric_catalog.tee.record_metrics` takes."""
    name: str
    """OpenTelemetry series name (``rl.reward.mean``)."""
    kind: str
    """``gauge``, ``counter``, ``histogram`` or ``up_down_counter``."""
    unit: str
    """UCUM-style unit, ``""`` when dimensionless."""
    description: str
    """Help text carried to the backend."""

    @classmethod
    def from_row(cls, row: TeedMetric | RecordedMetric) -> MetricSpec:
        """The spec of a teed or recorded row."""
        return cls(row.key, row.name, row.kind, row.unit, row.description)


def metric_specs() -> tuple[MetricSpec, ...]:
    """Specs of every row registered so far: teed rows first, then recorded ones.

    A teed row of a non-scalar value (``value_type="table"``) has none: it gets no instrument.
    """
    rows: tuple[TeedMetric | RecordedMetric, ...] = (
        *(row for row in vocabulary.teed_metrics() if row.value_type == "number"),
        *vocabulary.recorded_metrics(),
    )
    return tuple(MetricSpec.from_row(row) for row in rows)


def _decades(low_exp: int, high_exp: int, steps: tuple[float, ...]) -> tuple[float, ...]:
    return tuple(
        round(step * 10.0**exp, 12) for exp in range(low_exp, high_exp + 1) for step in steps
    )


_SECONDS: Final = (
    *_decades(-3, -1, (1.0, 2.5, 5.0)),
    *(1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0),
    *(1200.0, 1800.0, 3600.0, 7200.0, 14400.0, 28800.0, 86400.0),
)
_MILLISECONDS: Final = tuple(b * 1000.0 for b in _SECONDS if b <= 3600.0)
_RATIO: Final = (0.0, 0.01, 0.05, *(i / 10 for i in range(1, 10)), 0.95, 0.99, 1.0)
_PERCENT: Final = tuple(round(b * 100.0, 9) for b in _RATIO)
_BYTES: Final = tuple(float(1024 * 4**i) for i in range(14))  # 1 KiB .. 64 GiB
_COUNTS: Final = _decades(0, 7, (1.0, 2.5, 5.0))  # tokens, sequences, rates: 1 .. 5e7
_GENERIC: Final = _decades(-4, 6, (1.0, 2.5, 5.0))  # losses, norms: wide, 1e-4 .. 5e6


def histogram_boundaries(unit: str) -> tuple[float, ...]:
    """Explicit bucket boundaries for a histogram in ``unit``.

    The SDK's default (``0, 5, 10, ..., 10000``) suits milliseconds only. Seconds
    get 1 ms to 1 day, ``1`` ratios 0..1, ``%`` 0..100, ``By`` 1 KiB..64 GiB,
    annotated counts and rates (``{token}``, ``{token}/s``) 1..5e7, anything
    else a wide 1-2.5-5 ladder.
    """
    if unit == "s":
        return _SECONDS
    if unit == "ms":
        return _MILLISECONDS
    if unit == "1":
        return _RATIO
    if unit == "%":
        return _PERCENT
    if unit in ("By", "bytes"):
        return _BYTES
    if unit.startswith("{") or unit.endswith("/s"):
        return _COUNTS
    return _GENERIC


@dataclass(frozen=True, slots=True)
class PrefixPlan:
    """What the tee does for one concrete ``log_metrics`` prefix."""

    entries: tuple[TeeEntry, ...]
    """Plain declared keys, in declaration order (empty when export is disabled)."""
    plain: frozenset[str]
    """The plain logger keys declared under the prefix (enabled or not)."""
    patterns: KeyPatterns | LoopPatterns | LayeredPatterns | None = None
    """The key families (``{placeholder}`` patterns) teed under the prefix, if any."""
    routes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Plain logger key -> the series names it feeds (enabled or not)."""
    ambiguous: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Plain logger key -> the rows of different loops that claim it, when the process
    names no loop: such a key is not exported (see :class:`LoopPatterns`)."""
    undecided: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Plain logger key -> the rows chosen by the run's configuration that share it
    (``TeedMetric.choice``), when the configuration given to :func:`set_run_config` does
    not decide between them: such a key is not exported (:func:`warn_undecided`)."""


class LoopPatterns:
    """The key families of a prefix for a process that names no loop.

    Rows scoped to disjoint loops (``emitted_by``) may claim the same key; each
    loop's view routes it to its own row. Without a loop a key feeds the row all
    views agree on (one row claims it), and a key two views route to different
    rows feeds none: it is warned once per key (:func:`warn_ambiguous`).
    """

    __slots__ = ("cache", "cache_limit", "prefix", "views")

    def __init__(self, prefix: str, views: tuple[PrefixPlan, ...], cache_limit: int) -> None:
        self.prefix = prefix
        self.views = views
        self.cache: dict[str, tuple[Hit, ...]] = {}
        """Logged key -> the series it feeds (read directly by the tee)."""
        self.cache_limit = cache_limit

    def lookup(self, key: str) -> tuple[Hit, ...]:
        """The series ``key`` feeds: the one row every loop routes it to, else none."""
        hits = self.cache.get(key)
        if hits is not None:
            return hits
        found: tuple[Hit, ...] = ()
        claims: dict[tuple[str, ...], None] = {}
        for view in self.views:
            patterns = view.patterns
            if key in view.plain or patterns is None:
                names = view.routes.get(key, ())
                view_hits: tuple[Hit, ...] = ()
            else:
                view_hits = patterns.lookup(key)
                names = tuple(hit[1].name for hit in view_hits)
            if names:
                claims.setdefault(names, None)
                if not found:
                    found = view_hits
        if len(claims) > 1:
            warn_ambiguous(self.prefix, key, [n for names in claims for n in names])
            found = ()
        if len(self.cache) < self.cache_limit:
            self.cache[key] = found
        return found

    def targets(self, key: str) -> tuple[Any, ...]:
        """The targets :meth:`lookup` would feed, without building attribute sets or warning."""
        found: tuple[Any, ...] = ()
        claims: set[tuple[str, ...]] = set()
        for view in self.views:
            if key in view.plain:
                names = view.routes.get(key, ())
                view_targets: tuple[Any, ...] = ()
            elif view.patterns is not None:
                view_targets = view.patterns.targets(key)
                names = tuple(target[1].name for target in view_targets)
            else:
                continue
            if names:
                claims.add(names)
                found = found or view_targets
        return found if len(claims) == 1 else ()


def warn_ambiguous(prefix: str, key: str, rows: list[str]) -> None:
    """Warn once per key that ``prefix/key`` is claimed by rows of different loops."""
    shown = ", ".join(repr(name) for name in sorted(set(rows)))
    where = series_rules.qualified_key(prefix, key)
    warn_once(
        ("ambiguous-key", prefix, key),
        f"tee: {where!r} is claimed by rows of different loops ({shown}) and this process "
        "names no loop, so it is not exported under a guess; name the loop with "
        "tee_metrics(..., loop='<loop>'), TeeLogger(..., loop=...), JsonlLogger(..., "
        f"loop=...) or the {ENV_LOOP} environment variable (warned once per key)",
        family="ambiguous-key",
    )


def warn_undecided(prefix: str, key: str, rows: list[str]) -> None:
    """Warn once per key that ``prefix/key`` feeds one of rows the run's configuration
    chooses between, and the configuration known does not decide."""
    shown = ", ".join(repr(name) for name in sorted(set(rows)))
    where = series_rules.qualified_key(prefix, key)
    warn_once(
        ("undecided-key", prefix, key),
        f"tee: {where!r} feeds one of rows the run's configuration chooses between ({shown}) "
        "and the configuration this process knows does not say which, so it is not exported "
        "under a guess; give the run's configuration with "
        "metric_catalog.otel.set_run_config(config) (warned once per key)",
        family="undecided-key",
    )


@dataclass(frozen=True, slots=True)
class MetricGroup:
    """Every declared row's instrument, plus the lookup tables the tee walks.

    A disabled group (no exporter configured, or setup failed) has no
    instruments and records nothing; it still knows the declared keys and
    patterns, which strict mode needs.

    ``identity`` is the hook for worker identity labels (``worker.rank``,
    ``host.name``...): a mapping merged into the attributes of every point of
    every series, after the declaration check and outside the cardinality
    budget (it names the process, it does not multiply sets). It is built when
    the group is built, from :func:`metric_catalog.exporters.promoted_identity`
    (``METRIC_CATALOG_PROMOTE``) overlaid with :func:`set_identity`'s labels.
    Merged dicts are built once per attribute set and reused, so it costs a
    dict lookup per point.
    """

    enabled: bool
    """Whether values recorded through this group reach a provider."""
    meter_provider: Any = None
    """The provider the instruments belong to."""
    instruments: Mapping[str, Any] = field(default_factory=dict)
    """Registry key -> OpenTelemetry instrument."""
    tee_tables: Mapping[str, PrefixPlan] = field(default_factory=dict)
    """Literal ``log_metrics`` prefix -> its plan (other prefixes: :meth:`plan`)."""
    recorders: Mapping[str, tuple[Recorder, RecordedMetric, SeriesPoints]] = field(
        default_factory=dict
    )
    """Registry key of a recorded row -> ``(recorder, row, points)``."""
    declared: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Literal prefix -> plain logger keys declared under it (enabled or not)."""
    teed_keys: frozenset[str] = frozenset()
    """Registry keys of teed rows, to explain a misdirected ``record_metrics``."""
    recorded_keys: frozenset[str] = frozenset()
    """Registry keys of recorded rows (enabled or not), to spot unknown keys."""
    strict: bool = False
    """Strict-mode default, from ``METRIC_CATALOG_STRICT`` when the group was built."""
    identity: Mapping[str, Any] = field(default_factory=dict)
    """Labels merged into every point (see the class docstring); empty by default."""
    prefix_patterns: tuple[tuple[CompiledTemplate, TeedMetric], ...] = ()
    """Prefix patterns (``validation-{rl.dataset}``) and the row each belongs to."""
    series: Mapping[str, tuple[Recorder | None, SeriesPoints]] = field(default_factory=dict)
    """Series name of a teed row -> ``(recorder or None when disabled, points)``."""
    rows_by_prefix: Mapping[str, tuple[TeedMetric, ...]] = field(default_factory=dict)
    """Literal prefix -> the teed rows declared under it, in declaration order."""
    teed_source: Any = None
    """The registry dict of teed rows the group was built from (``vocabulary._REGISTERED``)."""
    recorded_source: Any = None
    """The registry dict of recorded rows it was built from (``vocabulary._RECORDED``)."""
    loop: str | None = None
    """The process's training loop, from ``METRIC_CATALOG_LOOP`` when the group was built
    (``None``: not named); :attr:`tee_tables` route shared keys by it."""
    step_keys: frozenset[str] = frozenset()
    """Every loop's step keys (``eval/step``, as logged flat) and the literal bookkeeping
    keys, registered when the group was built: no metric, so never teed, even where a key
    family would take one (as ``Catalog.is_bookkeeping`` leaves them out of live-check,
    scan and infer)."""
    run_config: Any = None
    """The run's configuration given to :func:`set_run_config` when the group was built
    (``None``: none); it routes a key rows of exclusive choices share (``TeedMetric.choice``)."""
    bookkeeping: tuple[str, ...] = (series_rules.BACKEND_KEYS,)
    """Bookkeeping patterns with a ``*`` (W&B's ``_*``, a catalog's ``timing/*/start``): a
    flat key one matches is not teed."""
    _resolved: dict[str, PrefixPlan | None] = field(default_factory=dict)
    _by_loop: dict[tuple[str | None, str], PrefixPlan | None] = field(default_factory=dict)

    def is_current(self) -> bool:
        """Whether the registry in place is still the one this group was built from.

        False once the registry globals were swapped (a test fixture's
        ``monkeypatch.setattr(vocabulary, "_REGISTERED", {})``) or reopened
        (``_FROZEN`` set back to False): the next tee then rebuilds the group.
        The tee runs this check on every call (through :func:`current_group`).
        """
        teed, recorded, frozen = vocabulary._registry_state()
        return self.teed_source is teed and self.recorded_source is recorded and frozen

    def plan(self, prefix: str, loop: str | None = None) -> PrefixPlan | None:
        """The plan of ``prefix`` (``None``: nothing is teed under it); cached, bounded.

        ``loop`` names the loop a call was made from when it is not the group's
        (:attr:`loop`); its keys then route to that loop's rows.
        """
        if loop is not None and loop != self.loop:
            return self._loop_plan(prefix, loop)
        plan = self.tee_tables.get(prefix)
        if plan is not None:
            return plan
        resolved = self._resolved
        if prefix in resolved:
            return resolved[prefix]
        plan = None
        if self.prefix_patterns:
            plan = _plan_for(self, prefix, RUNTIME_PREFIX_KEY_CACHE_LIMIT, self.loop)
        if len(resolved) < _PREFIX_CACHE_LIMIT:
            resolved[prefix] = plan
        return plan

    def _loop_plan(self, prefix: str, loop: str) -> PrefixPlan | None:
        slot = (loop, prefix)
        by_loop = self._by_loop
        if slot in by_loop:
            return by_loop[slot]
        literal = prefix in self.rows_by_prefix
        if not literal and not self.prefix_patterns:
            return None
        limit = KEY_CACHE_LIMIT if literal else RUNTIME_PREFIX_KEY_CACHE_LIMIT
        plan = _plan_for(self, prefix, limit, loop)
        if len(by_loop) < _PREFIX_CACHE_LIMIT:
            by_loop[slot] = plan
        return plan


_PREFIX_CACHE_LIMIT: Final = 1024
_LOCK = threading.Lock()
_GROUP: MetricGroup | None = None  # None: not built yet for the current provider
# Instruments created on _INSTRUMENT_PROVIDER, by folded series name (the SDK folds case):
# a group rebuilt for another registry (a swapped one) reuses them instead of asking the
# SDK again, which would silently create a second instrument of the same name when the
# unit or description differ (both would then be exported under one name).
_INSTRUMENTS: dict[str, tuple[MetricSpec, Any, Recorder]] = {}
_INSTRUMENT_PROVIDER: Any = None
_IDENTITY: dict[str, Any] = {}
_RUN_CONFIG: Mapping[str, Any] | None = None
_IDENTITY_TYPES: Final = (str, int, float, bool)


def set_identity(labels: Mapping[str, Any]) -> None:
    """Merge ``labels`` into every point from now on (the worker identity hook).

    For labels naming the process (``{"worker.rank": 3}``): they are added
    after the declaration check and do not count against any series'
    cardinality budget. Replaces labels set before; the metric group is rebuilt
    on the next tee. Values must be str, int, float or bool.

    Raises:
        ValueError: A key is not a non-empty str or a value not of those types.
    """
    global _IDENTITY  # noqa: PLW0603 - the process-wide identity
    for key, value in labels.items():
        if not isinstance(key, str) or not key or not isinstance(value, _IDENTITY_TYPES):
            msg = (
                f"identity label {key!r}={value!r}: keys must be non-empty str and values "
                "str, int, float or bool"
            )
            raise ValueError(msg)
    with _LOCK:
        _IDENTITY = dict(labels)
    _invalidate_group(keep_instruments=True)


def set_run_config(config: Mapping[str, Any] | None) -> None:
    """Tell the tee the run's configuration (``None``: forget it); the group is rebuilt on
    the next tee.

    A logged key that rows of exclusive choices share (``critic/clipfrac``, a share
    with value clipping on, a squared error without: ``TeedMetric.choice``) then feeds
    the row the configuration chooses; without one that decides, it feeds neither
    (warned once per key). Only the choices' paths are read, when the tee builds its
    tables: a configuration changed in place later is not seen until this is called
    again. ``config`` is a mapping (a dict, an OmegaConf/Hydra config).

    Raises:
        TypeError: ``config`` is neither a mapping nor ``None``.
    """
    global _RUN_CONFIG  # noqa: PLW0603 - the process-wide run configuration
    if config is not None and not hasattr(config, "keys"):
        msg = f"set_run_config takes a mapping (the run's configuration) or None, got {config!r}"
        raise TypeError(msg)
    with _LOCK:
        _RUN_CONFIG = config
    _invalidate_group(keep_instruments=True)


def run_config() -> Mapping[str, Any] | None:
    """The run's configuration given to :func:`set_run_config` (``None``: none)."""
    return _RUN_CONFIG


def identity_labels() -> Mapping[str, Any]:
    """The identity labels set with :func:`set_identity` (empty by default)."""
    return dict(_IDENTITY)


def _declared() -> dict[str, frozenset[str]]:
    by_prefix: dict[str, set[str]] = {}
    for row in vocabulary.teed_metrics():
        if not is_literal(row.logger_key):
            continue
        for prefix in row.prefixes:
            if is_literal(prefix):
                by_prefix.setdefault(literal_text(prefix), set()).add(literal_text(row.logger_key))
    return {prefix: frozenset(keys) for prefix, keys in by_prefix.items()}


def current_group() -> MetricGroup:
    """The process's metric group for the registry in place, built on first use.

    What the tee calls on every ``log_metrics``: the cached group while it is
    current (:meth:`MetricGroup.is_current`), else
    :func:`ensure_metric_group_registered`. Never raises.
    """
    group = _GROUP
    if group is not None:
        teed, recorded, frozen = vocabulary._registry_state()  # is_current, inlined: hot
        if group.teed_source is teed and group.recorded_source is recorded and frozen:
            return group
    return ensure_metric_group_registered()


def ensure_metric_group_registered(meter_provider: MeterProvider | None = None) -> MetricGroup:
    """Build the process's metric group once, on first use, and close registration.

    Uses ``meter_provider``, or else the process's provider from
    :func:`metric_catalog.exporters.get_meter_provider`. Creates one instrument
    per declared row (gauge -> ``set``, counter and up_down_counter -> ``add``,
    histogram -> ``record`` with :func:`histogram_boundaries`), then calls
    :func:`~metric_catalog.vocabulary.freeze_metrics`. Registration closes even
    when export is disabled, so a late row fails the same way in every run.

    Thread-safe; later calls return the cached group until the provider is
    replaced (:func:`metric_catalog.exporters.configure`), the identity labels
    change (:func:`set_identity`), the process forks, or the registry in place
    is no longer the one the group was built from (its globals swapped or
    reopened, see :meth:`MetricGroup.is_current`): the group is then rebuilt
    from the registry in place, which is frozen in turn. Instruments already
    created on the provider are reused by series name. A setup failure is
    warned once and yields a disabled group. Never raises.
    """
    global _GROUP  # noqa: PLW0603 - the process-wide group
    group = _GROUP
    if (
        group is not None
        and group.is_current()
        and (meter_provider is None or group.meter_provider is meter_provider)
    ):
        return group
    with _LOCK:
        group = _GROUP
        if (
            group is not None
            and group.is_current()
            and (meter_provider is None or group.meter_provider is meter_provider)
        ):
            return group
        # The registry the rows are read from, taken before reading them: a swap
        # meanwhile leaves the group stale, so the next tee rebuilds it.
        teed, recorded, _frozen = vocabulary._registry_state()
        sources = (teed, recorded)
        # Freeze first: rows registered from here on raise instead of being lost.
        vocabulary.freeze_metrics()
        generation = exporters.provider_generation()
        try:
            provider = (
                meter_provider if meter_provider is not None else exporters.get_meter_provider()
            )
            group = _build_group(provider, sources)
        except Exception as exc:  # noqa: BLE001 - a broken group disables the tee, never the run
            warn_once(
                ("group-build", type_name(exc)),
                f"metric export disabled: building the metric group failed: {describe_error(exc)}",
            )
            group = MetricGroup(False, teed_source=sources[0], recorded_source=sources[1])
        if generation == exporters.provider_generation():
            _GROUP = group  # else configure() raced us: rebuild next time
        return group


def _instrument(meter: Any, spec: MetricSpec) -> tuple[Any, Recorder] | None:
    """The instrument of ``spec`` on ``meter``'s provider: created once, then reused.

    A series created earlier on this provider by another registry's row is
    reused when the kind matches (a changed unit or description is warned once:
    the first declaration's stays until the provider is replaced); a different
    kind cannot share the instrument, so that row is not exported (warned once)
    rather than exported twice under one name. Caller holds _LOCK.
    """
    folded = spec.name.strip().lower()
    known = _INSTRUMENTS.get(folded)
    if known is None:
        instrument, recorder = _create(meter, spec)
        _INSTRUMENTS[folded] = (spec, instrument, recorder)
        return instrument, recorder
    first, instrument, recorder = known
    if first.kind != spec.kind:
        warn_once(
            ("instrument-kind", folded, first.kind, spec.kind),
            f"{spec.name} is declared as a {spec.kind}, but this process already created it "
            f"as a {first.kind} on the current meter provider; it is not exported (two "
            "instruments of one name would both be exported) until the provider is "
            "replaced or the process restarts. Give the new row another name",
        )
        return None
    if (first.unit, first.description) != (spec.unit, spec.description):
        warn_once(
            ("instrument-changed", folded, spec.unit, spec.description),
            f"{spec.name} is declared again with unit {spec.unit!r} and description "
            f"{spec.description!r}, but this process already created it with unit "
            f"{first.unit!r} and description {first.description!r} on the current meter "
            "provider; that instrument is reused (one series per name), so the first "
            "declaration's unit and description stay until the provider is replaced",
        )
    return instrument, recorder


def _build_group(provider: Any, sources: tuple[Any, Any] = (None, None)) -> MetricGroup:
    global _INSTRUMENT_PROVIDER  # noqa: PLW0603 - the provider _INSTRUMENTS belong to
    teed = vocabulary.teed_metrics()
    recorded = vocabulary.recorded_metrics()
    labels = {**exporters.promoted_identity(), **_IDENTITY}
    known: dict[str, Any] = {
        "declared": _declared(),
        "teed_keys": frozenset(row.key for row in teed),
        "recorded_keys": frozenset(row.key for row in recorded),
        "strict": os.environ.get(ENV_STRICT, "").strip().lower() in _TRUE,
        "loop": os.environ.get(ENV_LOOP, "").strip() or None,
        "run_config": _RUN_CONFIG,
        "identity": labels,
        "step_keys": frozenset(
            key for pairs in vocabulary.step_keys().values() for _prefix, key in pairs
        )
        | frozenset(key for key in vocabulary.bookkeeping_keys() if "*" not in key),
        "bookkeeping": (
            series_rules.BACKEND_KEYS,
            *(key for key in vocabulary.bookkeeping_keys() if "*" in key),
        ),
    }
    recorders: dict[str, Recorder] = {}
    instruments: dict[str, Any] = {}
    enabled = provider is not None
    if enabled:
        if _INSTRUMENT_PROVIDER is not provider:
            _INSTRUMENTS.clear()
            _INSTRUMENT_PROVIDER = provider
        try:
            meter = provider.get_meter(METER_NAME)
            for spec in metric_specs():
                made = _instrument(meter, spec)
                if made is not None:
                    instruments[spec.key], recorders[spec.key] = made
        except Exception as exc:  # noqa: BLE001 - a broken SDK disables the tee, never the run
            warn_once(
                ("group-setup", type(exc).__name__),
                f"metric export disabled: creating the OpenTelemetry instruments failed: "
                f"{type(exc).__name__}: {exc}",
            )
            enabled, instruments, recorders = False, {}, {}
    series: dict[str, tuple[Recorder | None, SeriesPoints]] = {}
    for row in teed:
        points = SeriesPoints(row, labels)
        record = recorders.get(row.key)
        if record is not None and row.temporality == "cumulative":
            record = RunningTotal(record, row.name, points.limit)
        series[row.name] = (record, points)
    prefix_patterns = tuple(
        (compile_template(prefix, {a.name: a for a in row.attributes}), row)
        for row in teed
        for prefix in row.prefixes
        if not is_literal(prefix)
    )
    rows_by_prefix: dict[str, list[TeedMetric]] = {}
    for row in teed:
        for prefix in row.prefixes:
            if is_literal(prefix):
                rows_by_prefix.setdefault(literal_text(prefix), []).append(row)
    group = MetricGroup(
        enabled,
        rows_by_prefix={prefix: tuple(rows) for prefix, rows in rows_by_prefix.items()},
        meter_provider=provider if enabled else None,
        instruments=instruments,
        recorders={
            row.key: (recorders[row.key], row, SeriesPoints(row, labels))
            for row in recorded
            if row.key in recorders
        },
        prefix_patterns=prefix_patterns,
        series=series,
        teed_source=sources[0],
        recorded_source=sources[1],
        **known,
    )
    tables = {prefix: _plan_for(group, prefix, loop=group.loop) for prefix in rows_by_prefix}
    object.__setattr__(group, "tee_tables", {p: plan for p, plan in tables.items() if plan})
    return group


def _plan_for(
    group: MetricGroup,
    prefix: str,
    key_cache_limit: int = KEY_CACHE_LIMIT,
    loop: str | None = None,
) -> PrefixPlan | None:
    """:func:`_routed_plan`, with the step keys logged under ``prefix`` set aside: plain keys
    with no route, so no family takes one and strict mode does not call one undeclared."""
    plan = _routed_plan(group, prefix, key_cache_limit, loop)
    if plan is not None:
        undecided = _chosen(group, _all_pairs(group, prefix))[1]
        if undecided:
            plain = plan.plain | frozenset(undecided)
            plan = replace(plan, plain=plain, undecided=undecided)
    if plan is None or not group.step_keys:
        return plan
    under = (_key_under(prefix, logged) for logged in group.step_keys)
    aside = frozenset(key for key in under if key is not None)
    return replace(plan, plain=plan.plain | aside) if aside - plan.plain else plan


def _key_under(prefix: str, logged: str) -> str | None:
    """The key that, logged under ``prefix``, is the flat key ``logged`` (``None``: none)."""
    if not prefix:
        return logged
    head = prefix if series_rules.is_glued(prefix) else prefix + series_rules.PREFIX_SEPARATOR
    if logged.startswith(head) and len(logged) > len(head):
        return logged[len(head) :]
    return None


def _routed_plan(
    group: MetricGroup,
    prefix: str,
    key_cache_limit: int = KEY_CACHE_LIMIT,
    loop: str | None = None,
) -> PrefixPlan | None:
    """Build the plan of one concrete prefix for a process of ``loop``.

    ``key_cache_limit`` bounds the key-match cache of its patterns: a run-time
    prefix gets a smaller one, so the up to 1024 cached run-time plans hold
    at most a quarter million remembered keys between them. With a loop, only
    the rows that loop may log (no ``emitted_by``, or one naming it) take keys;
    without one, a key rows of several loops claim feeds none (see
    :class:`LoopPatterns`).
    """
    pairs = _pairs(group, prefix)
    if not pairs:
        return None
    if loop is not None:
        scoped = [pair for pair in pairs if _emits(pair[0], loop)]
        if len(scoped) == len(pairs):
            return _single_plan(group, pairs, key_cache_limit)
        # The loop's own rows first; a key none of them takes goes where it would with
        # no loop named (a row of another loop that alone claims it: live-check then
        # reports it unexpected_loop), never to a guess.
        fallback = _routed_plan(group, prefix, key_cache_limit, None)
        if not scoped:
            return fallback
        primary = _single_plan(group, scoped, key_cache_limit)
        return _layered_plan(primary, fallback) if fallback is not None else primary
    scopes = sorted({name for row, _captured, _rank in pairs for name in row.emitted_by})
    if not scopes:
        return _single_plan(group, pairs, key_cache_limit)
    views = tuple(
        _single_plan(group, [pair for pair in pairs if _emits(pair[0], scope)], key_cache_limit)
        for scope in (*scopes, None)
    )
    return _merged_plan(prefix, views, key_cache_limit)


_Pair = tuple[TeedMetric, "dict[str, Any] | None", "series_rules.Specificity"]


def _emits(row: TeedMetric, loop: str | None) -> bool:
    """Whether a process of ``loop`` may log ``row`` (``None``: a loop no row names)."""
    return not row.emitted_by or loop in row.emitted_by


def _pairs(group: MetricGroup, prefix: str) -> list[_Pair]:
    """The rows teed under ``prefix`` (literal prefix first), with prefix captures and rank,
    less the rows the run's configuration does not choose for a key they share."""
    return _chosen(group, _all_pairs(group, prefix))[0]


def _chosen(
    group: MetricGroup, pairs: list[_Pair]
) -> tuple[list[_Pair], dict[str, tuple[str, ...]]]:
    """``pairs`` less the rows of a shared literal key the configuration does not choose,
    and the shared keys it leaves undecided (rows -> none of them takes the key).

    A row with a choice alone on its key keeps it whatever the configuration says, as a
    row of another loop alone on its key does (no guess is needed to route it)."""
    sharing: dict[str, list[TeedMetric]] = {}
    for row, _captured, _rank in pairs:
        if row.choice is not None and is_literal(row.logger_key):
            sharing.setdefault(literal_text(row.logger_key), []).append(row)
    dropped: set[int] = set()
    undecided: dict[str, tuple[str, ...]] = {}
    for key, rows in sharing.items():
        if len(rows) < 2:
            continue
        verdicts = [row.choice.holds(group.run_config) for row in rows if row.choice]
        if None in verdicts:
            undecided[key] = tuple(sorted({row.name for row in rows}))
            dropped.update(id(row) for row in rows)
        else:
            dropped.update(id(row) for row, holds in zip(rows, verdicts, strict=True) if not holds)
    if not dropped:
        return pairs, undecided
    return [pair for pair in pairs if id(pair[0]) not in dropped], undecided


def _all_pairs(group: MetricGroup, prefix: str) -> list[_Pair]:
    """The rows teed under ``prefix`` (literal prefix first), with prefix captures and rank."""
    literal_rank = series_rules.specificity((prefix,), {})
    pairs: list[_Pair] = [(row, None, literal_rank) for row in group.rows_by_prefix.get(prefix, ())]
    for compiled, row in group.prefix_patterns:
        captured = compiled.match(prefix)
        if captured is not None:
            pairs.append((row, captured, compiled.rank))
    return pairs


def _single_plan(group: MetricGroup, pairs: list[_Pair], key_cache_limit: int) -> PrefixPlan:
    """The plan of rows that all apply to one process: the most specific row takes a key."""
    # A plain key logged under this prefix goes to its most specific row (a literal
    # prefix beats a prefix pattern; see series_rules); a key family never takes it.
    plain_rank: dict[str, series_rules.Specificity] = {}
    for row, _captured, rank in pairs:
        if series_rules.is_literal(row.logger_key):
            key = series_rules.literal_text(row.logger_key)
            plain_rank[key] = max(rank, plain_rank.get(key, rank))
    entries: list[TeeEntry] = []
    routes: dict[str, tuple[str, ...]] = {}
    patterns: KeyPatterns | None = None
    for row, captured, rank in pairs:
        record, points = group.series[row.name]
        if not series_rules.is_literal(row.logger_key):
            patterns = patterns or KeyPatterns(key_cache_limit)
            declared = {a.name: a for a in row.attributes}
            compiled = compile_template(row.logger_key, declared)
            patterns.add(compiled, (record, row, points), captured, rank)
            continue
        key = series_rules.literal_text(row.logger_key)
        if rank < plain_rank[key]:
            continue  # shadowed here by a row under a more specific prefix
        routes[key] = (*routes.get(key, ()), row.name)
        if group.enabled and record is not None:
            base = points.attributes(captured) if captured else points.base
            entries.append((key, record, row, points, base, captured))
    return PrefixPlan(tuple(entries), frozenset(plain_rank), patterns, routes)


def _merged_plan(prefix: str, views: tuple[PrefixPlan, ...], key_cache_limit: int) -> PrefixPlan:
    """One plan over each loop's view: a key every view routes alike, or only one claims."""
    plain = frozenset().union(*(view.plain for view in views))
    routes: dict[str, tuple[str, ...]] = {}
    ambiguous: dict[str, tuple[str, ...]] = {}
    for key in sorted(plain):
        claims: dict[tuple[str, ...], None] = {}
        for view in views:
            names = view.routes.get(key, ())
            if not names and key not in view.plain and view.patterns is not None:
                names = tuple(target[1].name for target in view.patterns.targets(key))
            if names:
                claims.setdefault(names, None)
        if len(claims) > 1:
            ambiguous[key] = tuple(sorted({name for names in claims for name in names}))
        elif claims:
            routes[key] = next(iter(claims))
    entries: list[TeeEntry] = []
    seen: set[tuple[str, str]] = set()
    for view in views:
        for entry in view.entries:
            slot = (entry[0], entry[2].name)
            if slot not in seen and entry[2].name in routes.get(entry[0], ()):
                seen.add(slot)
                entries.append(entry)
    has_patterns = any(view.patterns is not None for view in views)
    patterns = LoopPatterns(prefix, views, key_cache_limit) if has_patterns else None
    return PrefixPlan(tuple(entries), plain, patterns, routes, ambiguous)


def _layered_plan(primary: PrefixPlan, fallback: PrefixPlan) -> PrefixPlan:
    """``primary``'s routes, then ``fallback``'s for the keys ``primary`` takes nowhere."""

    def primary_takes(key: str) -> bool:
        if key in primary.plain:
            return True
        return primary.patterns is not None and bool(primary.patterns.targets(key))

    kept = [entry for entry in fallback.entries if not primary_takes(entry[0])]
    routes = {k: v for k, v in fallback.routes.items() if not primary_takes(k)}
    ambiguous = {k: v for k, v in fallback.ambiguous.items() if not primary_takes(k)}
    routes.update(primary.routes)
    plain = primary.plain | frozenset(routes) | frozenset(ambiguous)
    patterns: KeyPatterns | LoopPatterns | LayeredPatterns | None = primary.patterns
    if fallback.patterns is not None:
        patterns = LayeredPatterns(primary, fallback.patterns)
    return PrefixPlan((*primary.entries, *kept), plain, patterns, routes, ambiguous)


class LayeredPatterns:
    """The key families of a loop's rows, then those of the rows of other loops."""

    __slots__ = ("cache", "fallback", "primary")

    def __init__(
        self, primary: PrefixPlan, fallback: KeyPatterns | LoopPatterns | LayeredPatterns
    ) -> None:
        self.primary = primary
        self.fallback = fallback
        self.cache: dict[str, tuple[Hit, ...]] = {}
        """Always empty: each layer caches its own matches."""

    def lookup(self, key: str) -> tuple[Hit, ...]:
        """The loop's own family for ``key``, else the one rows of other loops agree on."""
        patterns = self.primary.patterns
        if patterns is not None and key not in self.primary.plain:
            hits = patterns.lookup(key)
            if hits:
                return hits
        return self.fallback.lookup(key)

    def targets(self, key: str) -> tuple[Any, ...]:
        """The targets :meth:`lookup` would feed, without building attribute sets."""
        patterns = self.primary.patterns
        if patterns is not None and key not in self.primary.plain:
            found = patterns.targets(key)
            if found:
                return found
        return self.fallback.targets(key)


class RunningTotal:
    """A counter's recorder for a running total (``temporality="cumulative"``).

    Called like the counter's ``add`` with the logged total; it adds what the
    total grew by since the previous value of the same attribute set in this
    process. The first value is added whole. A decrease means the producer
    restarted its count: the new value is added whole and the restart is
    warned once per series. Thread-safe. It remembers one previous value per
    attribute set, at most ``limit`` of them (the series' budget of sets, so
    never more than the series can have); a set past that is dropped, warned
    once.
    """

    __slots__ = ("_add", "_last", "_limit", "_lock", "name")

    def __init__(self, add: Recorder, name: str, limit: int) -> None:
        """Wrap the counter's ``add`` of series ``name``; keep at most ``limit`` totals."""
        self._add = add
        self.name = name
        """The series' name (for warnings)."""
        self._limit = limit
        self._last: dict[frozenset[tuple[str, Any]] | None, float] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """How many attribute sets' previous totals are remembered."""
        return len(self._last)

    def __call__(self, total: float, attributes: Mapping[str, Any] | None = None) -> None:
        """Add the growth of ``total`` (checked finite and non-negative) under ``attributes``."""
        key = frozenset(attributes.items()) if attributes else None
        with self._lock:
            previous = self._last.get(key)
            if previous is None and len(self._last) >= self._limit:
                full = True
            else:
                full = False
                self._last[key] = total
        if full:
            warn_once(
                ("running-total-full", self.name),
                f"{self.name}: running totals of more than {self._limit} attribute sets; "
                "points of further sets are dropped (warned once per series)",
            )
            return
        if previous is None:
            increment = total  # the first value of a running total counts whole
        elif total >= previous:
            increment = total - previous
        else:
            increment = total
            warn_once(
                ("running-total-restart", self.name),
                f"{self.name} is a running total (temporality: cumulative) but went down "
                f"from {previous:g} to {total:g}: counted as a restart, the new value is "
                "added whole (warned once per series)",
            )
        self._add(increment, attributes)


def non_finite_recorder(record: Recorder) -> Recorder:
    """A recorder exporting NaN or an infinity on the gauge whose ``set`` is ``record``.

    The SDK's ``Gauge.set`` drops a non-finite value and logs a warning each call,
    so the gauge would keep its previous value and an alert on NaN could never
    fire. The recorder hands the measurement to the gauge's consumer as ``set``
    does with a finite one (OTLP carries NaN and infinities as doubles, a Prometheus
    scrape shows ``NaN``, ``+Inf``, ``-Inf``). The tee calls it only for such a
    value (the slow path). It raises :class:`TypeError` when ``record`` is not an SDK
    gauge's ``set`` (another meter provider); the tee warns once and skips the value.
    """
    from opentelemetry.context import get_current  # noqa: PLC0415
    from opentelemetry.sdk.metrics._internal.instrument import Gauge  # noqa: PLC0415
    from opentelemetry.sdk.metrics._internal.measurement import Measurement  # noqa: PLC0415

    gauge = getattr(record, "__self__", None)
    if not isinstance(gauge, Gauge):
        msg = f"{type_name(gauge)} is not an OpenTelemetry SDK gauge; it takes no NaN"
        raise TypeError(msg)
    sdk_gauge = gauge  # narrowed for the closure
    # What Gauge.set asks before recording (SDKs before 1.3x have no such switch).
    enabled: Callable[[], bool] = getattr(gauge, "_is_enabled", lambda: True)

    def record_non_finite(value: float, attributes: Any = None) -> None:
        if enabled():
            sdk_gauge._measurement_consumer.consume_measurement(
                Measurement(value, time_ns(), sdk_gauge, get_current(), attributes)
            )

    return record_non_finite


def _create(meter: Any, spec: MetricSpec) -> tuple[Any, Recorder]:
    common = {"unit": spec.unit, "description": spec.description}
    if spec.kind == "gauge":
        gauge = meter.create_gauge(spec.name, **common)
        return gauge, gauge.set
    if spec.kind == "counter":
        counter = meter.create_counter(spec.name, **common)
        return counter, counter.add
    if spec.kind == "up_down_counter":
        updown = meter.create_up_down_counter(spec.name, **common)
        return updown, updown.add
    if spec.kind == "histogram":
        histogram = meter.create_histogram(
            spec.name,
            explicit_bucket_boundaries_advisory=list(histogram_boundaries(spec.unit)),
            **common,
        )
        return histogram, histogram.record
    msg = f"{spec.name}: unsupported kind {spec.kind!r}"  # the registry validates kinds
    raise ValueError(msg)


def _invalidate_group(*, after_fork: bool = False, keep_instruments: bool = False) -> None:
    """Drop the cached group; the next tee rebuilds it (provider replaced, or forked).

    The instruments created so far are forgotten too (they belong to the
    provider being replaced), unless ``keep_instruments`` (same provider).
    """
    global _GROUP, _LOCK, _INSTRUMENT_PROVIDER  # noqa: PLW0603
    _GROUP = None
    if after_fork:
        _LOCK = threading.Lock()  # the parent's may have been held by a thread that is gone
    if not keep_instruments:
        _INSTRUMENT_PROVIDER = None
        _INSTRUMENTS.clear()
