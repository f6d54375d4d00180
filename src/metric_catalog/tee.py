"""Mirror what training code logs into OpenTelemetry, without ever raising.

:func:`tee_metrics` is what a ``Logger.log_metrics`` calls after its backends:
it records every declared ``(prefix, logger_key)`` present in the dict on that
row's instrument. :func:`record_metrics` records :class:`RecordedMetric` series
that have no logger key behind them.

Keys may also be matched by a row's key pattern (``setup/{rl.setup.phase}_time_s``)
or logged under a prefix pattern (``validation-{rl.dataset}``); the captured text
becomes that attribute of the point. Every point's attributes are checked
against its row (undeclared keys and values outside the enum or type are
dropped), kept within the series' cardinality budget (new sets past it go to
one ``otel.metric.overflow="true"`` point) and joined by the process's identity
labels (the private module ``metric_catalog._attributes`` does that work).

Both never raise into the caller. Each failure becomes one
:class:`~metric_catalog._warn.MetricCatalogWarning` per cause per process,
naming the key: a value that is not a scalar, NaN or an infinity (the SDK would
drop it and log a line per step), a negative counter or histogram value (also
dropped by the SDK), an SDK error, an unknown recorded key, and in strict mode
a key logged under a teed prefix that no row declares. With no exporter
configured (``OTEL_METRICS_EXPORTER`` unset or ``none``), both are no-ops apart
from closing registration on first use.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from metric_catalog import otel
from metric_catalog import vocabulary as _vocabulary
from metric_catalog._warn import MetricCatalogWarning, warn_once
from metric_catalog.series_rules import qualified_key
from metric_catalog.vocabulary import TeedMetric, as_scalar

if TYPE_CHECKING:
    from opentelemetry.util.types import Attributes

__all__ = ["MetricCatalogWarning", "record_metrics", "tee_metrics"]

_MISSING: Final = object()
_NONNEGATIVE_KINDS: Final = frozenset({"counter", "histogram"})
_isfinite = math.isfinite


def _where(prefix: str, key: object) -> str:
    return qualified_key(prefix, str(key))


def tee_metrics(
    metrics: Mapping[str, Any],
    prefix: str = "",
    *,
    attributes: Attributes = None,
    strict: bool | None = None,
) -> None:
    """Record each declared ``(prefix, key)`` of ``metrics`` on its instrument.

    Args:
        metrics: The dict handed to ``log_metrics``; values go through
            :func:`~metric_catalog.vocabulary.as_scalar`. Keys no row declares
            are ignored (but see ``strict``). A key matching a row's key
            pattern (``setup/{rl.setup.phase}_time_s``) feeds that row's
            series with the captured value as attribute; under a prefix
            matching a prefix pattern (``validation-{rl.dataset}``) the
            captured prefix part is an attribute too.
        prefix: The ``log_metrics`` prefix (``"train"``, ``"timing/train"``, ``""``).
        attributes: OpenTelemetry attributes for every point, e.g.
            ``{"rl.bucket": "gen"}``. Each series keeps only the attributes
            its row declares, with declared values (others are dropped,
            warned once per cause), and at most its cardinality budget of
            distinct sets (past it, one ``otel.metric.overflow="true"``
            point). Worker identity goes through
            :func:`~metric_catalog.otel.set_identity` instead.
        strict: Warn once per key logged under a prefix that has declared rows
            but which no row (or key pattern) declares. ``None`` reads
            ``METRIC_CATALOG_STRICT``.

    The first call builds the instruments and closes registration (see
    :func:`~metric_catalog.otel.ensure_metric_group_registered`); so does the
    first call after the registry globals were swapped or reopened. Never raises.
    """
    try:
        group = otel._GROUP
        if (  # MetricGroup.is_current, inlined: it runs on every call
            group is None
            or group.teed_source is not _vocabulary._REGISTERED
            or group.recorded_source is not _vocabulary._RECORDED
            or not _vocabulary._FROZEN
        ):
            group = otel.ensure_metric_group_registered()
        if strict or (strict is None and group.strict):
            _report_undeclared(group, metrics, prefix)
        if not group.enabled:
            return
        plan = group.tee_tables.get(prefix)
        if plan is None:
            plan = group.plan(prefix)
            if plan is None:
                return
        get = metrics.get
        for logger_key, record, row, points, base, captured in plan.entries:
            raw = get(logger_key, _MISSING)
            if raw is _MISSING:
                continue
            # Plain floats are the common case; skip the general coercion for them.
            value = raw if type(raw) is float else as_scalar(raw)
            if value is None:
                warn_once(
                    ("not-scalar", prefix, logger_key),
                    f"tee: {_where(prefix, logger_key)!r} ({row.name}) logged a "
                    f"{type(raw).__name__}, not a number; skipped (warned once per key)",
                    family=_prefix_family(group, prefix),
                )
                continue
            if not _isfinite(value):
                warn_once(
                    ("non-finite", prefix, logger_key),
                    f"tee: {_where(prefix, logger_key)!r} ({row.name}) is {value}; "
                    "non-finite values are not exported (warned once per key)",
                    family=_prefix_family(group, prefix),
                )
                continue
            if value < 0.0 and row.kind in _NONNEGATIVE_KINDS:
                warn_once(
                    ("negative", prefix, logger_key),
                    f"tee: {_where(prefix, logger_key)!r} ({row.name}) is {value}, but a "
                    f"{row.kind} takes only non-negative values; skipped (warned once per "
                    "key). Declare a gauge or up_down_counter for a signed series",
                    family=_prefix_family(group, prefix),
                )
                continue
            try:
                if attributes is None:
                    record(value, base)
                else:
                    record(value, points.attributes(_merge(captured, attributes)))
            except Exception as exc:  # noqa: BLE001 - the SDK must not crash training
                warn_once(
                    ("sdk-error", prefix, logger_key, type(exc).__name__),
                    f"tee: recording {_where(prefix, logger_key)!r} ({row.name}) raised "
                    f"{type(exc).__name__}: {exc}; skipped (warned once per key and error)",
                    family=_prefix_family(group, prefix),
                )
        if plan.patterns is not None:
            _tee_families(plan, metrics, prefix, attributes)
    except Exception as exc:  # noqa: BLE001 - e.g. metrics is not a mapping
        warn_once(
            ("tee-error", prefix, type(exc).__name__),
            f"tee: teeing prefix {prefix!r} failed: {type(exc).__name__}: {exc} "
            "(warned once per prefix and error)",
            family="tee-error",  # prefixes are the caller's: bound what is remembered
        )


def _prefix_family(group: otel.MetricGroup, prefix: str) -> str | None:
    """The warn-once family of a cause keyed by ``prefix`` (warning path only).

    A literal declared prefix is one of a few; one matched by a prefix pattern
    (``validation-{rl.dataset}``) is one of as many as the caller invents, so
    its causes share the bounded ``family-key`` family.
    """
    return None if prefix in group.tee_tables else "family-key"


def _merge(captured: Mapping[str, Any] | None, attributes: Mapping[str, Any]) -> Mapping[str, Any]:
    return {**attributes, **captured} if captured else attributes  # the key's capture wins


def _tee_families(
    plan: otel.PrefixPlan, metrics: Mapping[str, Any], prefix: str, attributes: Attributes
) -> None:
    """Record the keys of ``metrics`` that match a key pattern of ``plan``."""
    patterns = plan.patterns
    if patterns is None:
        return
    plain = plan.plain
    cache = patterns.cache
    for key, raw in metrics.items():
        if key in plain:
            continue
        hits = cache.get(key)
        if hits is None:
            hits = patterns.lookup(key)
        if not hits:
            continue
        for record, row, points, base, captured in hits:
            value = _checked_value(raw, prefix, key, row)
            if value is None or record is None:
                continue
            try:
                if attributes is None:
                    record(value, base)
                else:
                    record(value, points.attributes(_merge(captured, attributes)))
            except Exception as exc:  # noqa: BLE001 - the SDK must not crash training
                warn_once(
                    ("sdk-error", prefix, key, type(exc).__name__),
                    f"tee: recording {_where(prefix, key)!r} ({row.name}) raised "
                    f"{type(exc).__name__}: {exc}; skipped (warned once per key and error)",
                    family="family-key",
                )


def _checked_value(raw: Any, prefix: str, key: str, row: TeedMetric) -> float | None:
    """``raw`` as a finite float the row's kind accepts, or None after warning once."""
    value = raw if type(raw) is float else as_scalar(raw)
    if value is None:
        warn_once(
            ("not-scalar", prefix, key),
            f"tee: {_where(prefix, key)!r} ({row.name}) logged a {type(raw).__name__}, not a "
            "number; skipped (warned once per key)",
            family="family-key",
        )
        return None
    if not _isfinite(value):
        warn_once(
            ("non-finite", prefix, key),
            f"tee: {_where(prefix, key)!r} ({row.name}) is {value}; non-finite values are "
            "not exported (warned once per key)",
            family="family-key",
        )
        return None
    if value < 0.0 and row.kind in _NONNEGATIVE_KINDS:
        warn_once(
            ("negative", prefix, key),
            f"tee: {_where(prefix, key)!r} ({row.name}) is {value}, but a {row.kind} takes "
            "only non-negative values; skipped (warned once per key). Declare a gauge or "
            "up_down_counter for a signed series",
            family="family-key",
        )
        return None
    return value


def _report_undeclared(group: otel.MetricGroup, metrics: Mapping[str, Any], prefix: str) -> None:
    plan = group.plan(prefix)
    if plan is None:
        return  # an untee'd prefix (e.g. "validation" with no rows) is not an omission
    plain = plan.plain
    patterns = plan.patterns
    cache = patterns.cache if patterns is not None else {}
    for key in metrics:
        if key in plain:
            continue
        if patterns is not None:
            hits = cache.get(key)
            if hits is None:
                hits = patterns.lookup(key)
            if hits:
                continue
        warn_once(
            ("undeclared", prefix, key),
            f"tee (strict): {_where(prefix, key)!r} is logged under a teed prefix but no "
            "row declares it (nor matches it with a key pattern), so it is not exported; "
            "declare a TeedMetric for it in its owner's catalog, or log it under another "
            "prefix (warned once per key)",
            family="undeclared-key",
        )


def record_metrics(values: Mapping[str, Any], attributes: Attributes = None) -> None:
    """Record :class:`~metric_catalog.vocabulary.RecordedMetric` series by registry key.

    ``values`` maps registry keys (``vllm_batch_duration`` for
    ``rl.vllm.batch.duration``) to values, coerced and checked like
    :func:`tee_metrics` does. An unknown key is warned once and skipped; a
    ``None`` value is skipped silently (nothing to record). Never raises.
    """
    try:
        group = otel._GROUP
        if group is None or not group.is_current():
            group = otel.ensure_metric_group_registered()
        recorders = group.recorders
        for key, raw in values.items():
            if key not in group.recorded_keys:
                hint = (
                    "it is a teed row; log it through log_metrics instead"
                    if key in group.teed_keys
                    else "declare a RecordedMetric for it in its owner's catalog"
                )
                warn_once(
                    ("unknown-recorded", key),
                    f"record_metrics: no recorded row has registry key {key!r}; {hint} "
                    "(warned once per key)",
                    family="unknown-recorded-key",
                )
                continue
            if raw is None or not group.enabled:
                continue
            entry = recorders.get(key)
            if entry is None:
                continue  # no instrument (refused at build time, warned then)
            record, row, points = entry
            value = as_scalar(raw)
            if value is None or not _isfinite(value):
                warn_once(
                    ("recorded-bad-value", key),
                    f"record_metrics: {key!r} ({row.name}) got {raw!r}, not a finite "
                    "number; skipped (warned once per key)",
                )
                continue
            if value < 0.0 and row.kind in _NONNEGATIVE_KINDS:
                warn_once(
                    ("recorded-negative", key),
                    f"record_metrics: {key!r} ({row.name}) got {value}, but a {row.kind} "
                    "takes only non-negative values; skipped (warned once per key)",
                )
                continue
            try:
                record(value, points.attributes(attributes))
            except Exception as exc:  # noqa: BLE001 - the SDK must not crash training
                warn_once(
                    ("recorded-sdk-error", key, type(exc).__name__),
                    f"record_metrics: recording {key!r} ({row.name}) raised "
                    f"{type(exc).__name__}: {exc}; skipped",
                )
    except Exception as exc:  # noqa: BLE001 - e.g. values is not a mapping
        warn_once(
            ("record-error", type(exc).__name__),
            f"record_metrics failed: {type(exc).__name__}: {exc} (warned once per error)",
        )
