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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from metric_catalog import exporters, vocabulary
from metric_catalog._warn import warn_once
from metric_catalog.vocabulary import RecordedMetric, TeedMetric

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider

__all__ = [
    "ENV_STRICT",
    "METER_NAME",
    "MetricGroup",
    "MetricSpec",
    "Recorder",
    "TeeEntry",
    "ensure_metric_group_registered",
    "histogram_boundaries",
    "metric_specs",
]

METER_NAME: Final = "metric_catalog"
"""Instrumentation scope every instrument is created under."""

ENV_STRICT: Final = "METRIC_CATALOG_STRICT"
"""Set to ``1`` to report keys logged under a teed prefix but never declared."""

_TRUE: Final = frozenset({"1", "true", "yes", "on"})

Recorder = Callable[..., None]
"""A bound ``set``/``add``/``record`` method: ``recorder(value, attributes)``."""

TeeEntry = tuple[str, Recorder, TeedMetric]
"""``(logger_key, recorder, row)``, one per declared key of a prefix."""


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
    """Specs of every row registered so far: teed rows first, then recorded ones."""
    rows: tuple[TeedMetric | RecordedMetric, ...] = (
        *vocabulary.teed_metrics(),
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
class MetricGroup:
    """Every declared row's instrument, plus the lookup tables the tee walks.

    A disabled group (no exporter configured, or setup failed) has no
    instruments and empty tables, so the tee does nothing; it still knows the
    declared keys, which strict mode needs.
    """

    enabled: bool
    """Whether values recorded through this group reach a provider."""
    meter_provider: Any = None
    """The provider the instruments belong to."""
    instruments: Mapping[str, Any] = field(default_factory=dict)
    """Registry key -> OpenTelemetry instrument."""
    tee_tables: Mapping[str, tuple[TeeEntry, ...]] = field(default_factory=dict)
    """``log_metrics`` prefix -> the declared keys logged under it, in declaration order."""
    recorders: Mapping[str, tuple[Recorder, RecordedMetric]] = field(default_factory=dict)
    """Registry key of a recorded row -> ``(recorder, row)``."""
    declared: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Prefix -> logger keys declared under it (enabled or not)."""
    teed_keys: frozenset[str] = frozenset()
    """Registry keys of teed rows, to explain a misdirected ``record_metrics``."""
    recorded_keys: frozenset[str] = frozenset()
    """Registry keys of recorded rows (enabled or not), to spot unknown keys."""
    strict: bool = False
    """Strict-mode default, from ``METRIC_CATALOG_STRICT`` when the group was built."""
    identity: Mapping[str, Any] = field(default_factory=dict)
    """Worker identity added to every point's attributes (``METRIC_CATALOG_PROMOTE``).

    Merged after any attribute check and outside the cardinality budget: it is
    the same on every point of the process, so it adds no attribute set.
    """


_LOCK = threading.Lock()
_GROUP: MetricGroup | None = None  # None: not built yet for the current provider


def _declared() -> dict[str, frozenset[str]]:
    by_prefix: dict[str, set[str]] = {}
    for row in vocabulary.teed_metrics():
        by_prefix.setdefault(row.prefix, set()).add(row.logger_key)
    return {prefix: frozenset(keys) for prefix, keys in by_prefix.items()}


def ensure_metric_group_registered(meter_provider: MeterProvider | None = None) -> MetricGroup:
    """Build the process's metric group once, on first use, and close registration.

    Uses ``meter_provider``, or else the process's provider from
    :func:`metric_catalog.exporters.get_meter_provider`. Creates one instrument
    per declared row (gauge -> ``set``, counter and up_down_counter -> ``add``,
    histogram -> ``record`` with :func:`histogram_boundaries`), then calls
    :func:`~metric_catalog.vocabulary.freeze_metrics`. Registration closes even
    when export is disabled, so a late row fails the same way in every run.

    Thread-safe; later calls return the cached group until the provider is
    replaced (:func:`metric_catalog.exporters.configure`) or the process forks.
    A setup failure is warned once and yields a disabled group. Never raises.
    """
    global _GROUP  # noqa: PLW0603 - the process-wide group
    group = _GROUP
    if group is not None and (meter_provider is None or group.meter_provider is meter_provider):
        return group
    with _LOCK:
        group = _GROUP
        if group is not None and (meter_provider is None or group.meter_provider is meter_provider):
            return group
        # Freeze first: rows registered from here on raise instead of being lost.
        vocabulary.freeze_metrics()
        generation = exporters._GENERATION
        provider = meter_provider if meter_provider is not None else exporters.get_meter_provider()
        group = _build_group(provider)
        if generation == exporters._GENERATION:  # else configure() raced us: rebuild next time
            _GROUP = group
        return group


def _build_group(provider: Any) -> MetricGroup:
    teed = vocabulary.teed_metrics()
    known: dict[str, Any] = {
        "declared": _declared(),
        "teed_keys": frozenset(row.key for row in teed),
        "recorded_keys": frozenset(row.key for row in vocabulary.recorded_metrics()),
        "strict": os.environ.get(ENV_STRICT, "").strip().lower() in _TRUE,
    }
    if provider is None:
        return MetricGroup(False, **known)
    try:
        meter = provider.get_meter(METER_NAME)
        instruments: dict[str, Any] = {}
        recorders: dict[str, Recorder] = {}
        for spec in metric_specs():
            instruments[spec.key], recorders[spec.key] = _create(meter, spec)
    except Exception as exc:  # noqa: BLE001 - a broken SDK disables the tee, never the run
        warn_once(
            ("group-setup", type(exc).__name__),
            f"metric export disabled: creating the OpenTelemetry instruments failed: "
            f"{type(exc).__name__}: {exc}",
        )
        return MetricGroup(False, **known)
    tables: dict[str, list[TeeEntry]] = {}
    for row in teed:
        tables.setdefault(row.prefix, []).append((row.logger_key, recorders[row.key], row))
    return MetricGroup(
        True,
        meter_provider=provider,
        identity=exporters.promoted_identity(),
        instruments=instruments,
        tee_tables={prefix: tuple(entries) for prefix, entries in tables.items()},
        recorders={row.key: (recorders[row.key], row) for row in vocabulary.recorded_metrics()},
        **known,
    )


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


def _invalidate_group(*, after_fork: bool = False) -> None:
    """Drop the cached group; the next tee rebuilds it (provider replaced, or forked)."""
    global _GROUP, _LOCK  # noqa: PLW0603
    _GROUP = None
    if after_fork:
        _LOCK = threading.Lock()  # the parent's may have been held by a thread that is gone
