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
A row whose code logs another unit than the series is exported in
(``logged_unit="ms"``, ``unit="s"``) has each value scaled exactly, correctly
rounded, by the factor :func:`~metric_catalog.series_rules.unit_scale` gives.

Both never raise into the caller. Each failure becomes one
:class:`~metric_catalog._warn.MetricCatalogWarning` per cause per process,
naming the key: a value that is not a scalar, NaN or an infinity (a gauge exports
it as it is, so the gauge and an alert on it show it, unless its row says
``non_finite="allowed"``, which silences the warning; another kind skips it, as a NaN
would stay in its sum), a negative counter or histogram value (also
dropped by the SDK), a value that overflows when scaled from the row's
``logged_unit`` to its ``unit``, an SDK error, an unknown recorded key, and in strict mode
a key logged under a teed prefix that no row declares. With no exporter
configured (``OTEL_METRICS_EXPORTER`` unset or ``none``), both are no-ops apart
from closing registration on first use.

"Never raise" holds for hostile input too: a prefix that is not a ``str`` (the
call is dropped, warned once per type), a ``metrics`` argument that is not a
mapping, keys and values whose ``__hash__``, ``__eq__``, ``__float__`` or
``__repr__`` raise (even with an exception that cannot be printed), and a dict
another thread mutates during the call (the loops read a snapshot). Warnings
show untrusted objects only through :func:`~metric_catalog._warn.safe_repr`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from metric_catalog import otel
from metric_catalog._warn import (
    MetricCatalogWarning,
    describe_error,
    safe_repr,
    safe_text,
    type_name,
    warn_once,
)
from metric_catalog.series_rules import qualified_key, scale_value, unit_scale
from metric_catalog.vocabulary import RecordedMetric, TeedMetric, as_scalar

if TYPE_CHECKING:
    from opentelemetry.util.types import Attributes

__all__ = ["MetricCatalogWarning", "record_metrics", "tee_metrics"]

_MISSING: Final = object()
_NONNEGATIVE_KINDS: Final = frozenset({"counter", "histogram"})
_isfinite = math.isfinite


def _where(prefix: str, key: str) -> str:
    return qualified_key(prefix, key)


def tee_metrics(
    metrics: Mapping[str, Any],
    prefix: str = "",
    *,
    attributes: Attributes = None,
    strict: bool | None = None,
    loop: str | None = None,
) -> None:
    """Record each declared ``(prefix, key)`` of ``metrics`` on its instrument.

    Args:
        metrics: The dict handed to ``log_metrics``; values go through
            :func:`~metric_catalog.vocabulary.as_scalar`. Keys no row declares
            are ignored (but see ``strict``). A key matching a row's key
            pattern (``setup/{rl.setup.phase}_time_s``) feeds that row's
            series with the captured value as attribute; under a prefix
            matching a prefix pattern (``validation-{rl.dataset}``) the
            captured prefix part is an attribute too. Anything that is not a
            mapping is warned once per type and ignored.
        prefix: The ``log_metrics`` prefix (``"train"``, ``"timing/train"``,
            ``""``). One that is not a ``str`` drops the call (warned once per
            type, whether export is on or off).
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
        loop: The training loop the call is made from (``"sft"``). Rows scoped
            to disjoint loops (``emitted_by``) may share a key; it feeds the
            row of this loop. ``None`` reads ``METRIC_CATALOG_LOOP``; with no
            loop known, a key rows of several loops claim is not exported
            (warned once per key, naming the rows).

    The first call builds the instruments and closes registration (see
    :func:`~metric_catalog.otel.ensure_metric_group_registered`); so does the
    first call after the registry globals were swapped or reopened. Never raises.
    """
    try:
        group = otel.current_group()
        if type(prefix) is not str:
            prefix = _checked_prefix(prefix)  # type: ignore[assignment]
            if prefix is None:
                return
        table: dict[Any, Any] | None = metrics if type(metrics) is dict else None
        if table is None:
            table = _snapshot(metrics, "tee")
            if table is None:
                return
        if loop is not None and (type(loop) is not str or loop == group.loop):
            loop = _checked_loop(loop, group)
        if strict or (strict is None and group.strict):
            _report_undeclared(group, table, prefix, loop)
        if not group.enabled:
            return
        plan = group.tee_tables.get(prefix) if loop is None else None
        if plan is None:
            plan = group.plan(prefix, loop)
            if plan is None:
                return
        if plan.ambiguous or plan.undecided:
            _warn_ambiguous(plan, table, prefix)
        _tee_literals(group, plan, table, prefix, attributes)
        if plan.patterns is not None:
            _tee_families(plan, table, prefix, attributes)
    except Exception as exc:  # noqa: BLE001 - e.g. a key whose __eq__ raises on a collision
        shown = prefix if type(prefix) is str else f"<{type_name(prefix)}>"
        warn_once(
            ("tee-error", shown, type_name(exc)),
            f"tee: teeing prefix {shown!r} failed: {describe_error(exc)} "
            "(warned once per prefix and error)",
            family="tee-error",  # prefixes are the caller's: bound what is remembered
        )


def _checked_loop(loop: object, group: otel.MetricGroup) -> str | None:
    """``loop`` as the name to route by (``None``: the group's own), warned once if not a str."""
    if type(loop) is str:
        return None if loop == group.loop else loop
    text = safe_text(loop)
    if text is None:
        warn_once(
            ("loop-type", type_name(loop)),
            f"tee: the loop is a {type_name(loop)} ({safe_repr(loop)}), not a str; keys are "
            f"routed as if no loop were named. Pass the loop's name, e.g. loop='sft' (warned "
            "once per type)",
            family="bad-loop",
        )
        return None
    return text.strip() or None


def _warn_ambiguous(plan: otel.PrefixPlan, table: dict[Any, Any], prefix: str) -> None:
    """Warn once per logged key that rows of several loops claim (the process names none),
    or that rows the run's configuration chooses between share (it does not decide)."""
    for key, rows in plan.ambiguous.items():
        if key in table:
            otel.warn_ambiguous(prefix, key, list(rows))
    for key, rows in plan.undecided.items():
        if key in table:
            otel.warn_undecided(prefix, key, list(rows))


def _tee_literals(
    group: otel.MetricGroup,
    plan: otel.PrefixPlan,
    table: dict[Any, Any],
    prefix: str,
    attributes: Attributes,
) -> None:
    """Record each of ``plan``'s literal rows that ``table`` logs (the hot loop)."""
    get = table.get
    for logger_key, record, row, points, base, captured in plan.entries:
        try:
            raw = get(logger_key, _MISSING)
        except Exception:  # noqa: BLE001 - a key whose __eq__ raises shares the hash
            raw = _find_by_text(table, logger_key)
        if raw is _MISSING:
            continue
        # _checked_value's fast path, inlined: a finite float the row's kind takes.
        if (
            type(raw) is float
            and _isfinite(raw)
            and (raw >= 0.0 or row.kind not in _NONNEGATIVE_KINDS)
            and not row.logged_unit  # a row logged in another unit scales below
        ):
            value: float | None = raw
        else:
            value = _checked_value(raw, row, prefix, logger_key, _prefix_family(group, prefix))
            if value is None:
                continue
            if not _isfinite(value):  # a gauge's NaN: the SDK's set would drop it
                record = otel.non_finite_recorder(record)  # noqa: PLW2901
        try:
            if attributes is None:
                record(value, base)
            else:
                record(value, points.attributes(_merge(captured, attributes)))
        except Exception as exc:  # noqa: BLE001 - the SDK must not crash training
            _warn_record_error(exc, prefix, logger_key, row, _prefix_family(group, prefix))


def _checked_prefix(prefix: object) -> str | None:
    """``prefix`` as an exact ``str`` (a subclass copied), or None after warning once per type."""
    text = safe_text(prefix)
    if text is None:
        warn_once(
            ("prefix-type", type_name(prefix)),
            f"tee: the prefix is a {type_name(prefix)} ({safe_repr(prefix)}), not a str; "
            "the call's metrics are not teed. Pass the log_metrics prefix as a str such "
            "as 'train' (warned once per type)",
            family="bad-prefix",
        )
    return text


def _snapshot(values: object, who: str) -> dict[Any, Any] | None:
    """A plain dict of the mapping ``values``, or None after warning once per type.

    A ``dict`` subclass is copied through ``dict`` itself (its overrides are
    not called); another mapping through its ``items()``, keeping only ``str``
    keys (no other key can name a row).
    """
    try:
        if isinstance(values, dict):
            return dict.copy(values)
        if isinstance(values, Mapping):
            snapshot: dict[Any, Any] = {}
            for key, value in list(values.items()):
                text = safe_text(key)
                if text is not None:
                    snapshot[text] = value
            return snapshot
        problem = "is not a mapping"
    except Exception as exc:  # noqa: BLE001 - a mapping whose methods raise
        problem = f"could not be read ({describe_error(exc)})"
    warn_once(
        ("not-a-mapping", who, type_name(values)),
        f"{who}: the metrics argument, a {type_name(values)}, {problem}; nothing is "
        "recorded. Pass a dict of key -> number (warned once per type)",
        family="not-a-mapping",
    )
    return None


def _find_by_text(metrics: dict[Any, Any], logger_key: str) -> Any:
    """The value of the key spelled ``logger_key`` (a ``str`` subclass by its characters)."""
    for key, value in list(metrics.items()):
        if safe_text(key) == logger_key:
            return value
    return _MISSING


def _prefix_family(group: otel.MetricGroup, prefix: str) -> str | None:
    """The warn-once family of a cause keyed by ``prefix`` (warning path only).

    A literal declared prefix is one of a few; one matched by a prefix pattern
    (``validation-{rl.dataset}``) is one of as many as the caller invents, so
    its causes share the bounded ``family-key`` family.
    """
    return None if prefix in group.tee_tables else "family-key"


def _merge(captured: Mapping[str, Any] | None, attributes: Mapping[str, Any]) -> Mapping[str, Any]:
    return {**attributes, **captured} if captured else attributes  # the key's capture wins


def _warn_record_error(
    exc: Exception, prefix: str, key: str, row: TeedMetric, family: str | None
) -> None:
    warn_once(
        ("sdk-error", prefix, key, type_name(exc)),
        f"tee: recording {_where(prefix, key)!r} ({row.name}) raised "
        f"{describe_error(exc)}; skipped (warned once per key and error)",
        family=family,
    )


def _tee_families(
    plan: otel.PrefixPlan, metrics: dict[Any, Any], prefix: str, attributes: Attributes
) -> None:
    """Record the keys of ``metrics`` that match a key pattern of ``plan``."""
    patterns = plan.patterns
    if patterns is None:
        return
    plain = plan.plain
    cache = patterns.cache
    # A snapshot: another thread may add keys while this loop runs.
    for key, raw in list(metrics.items()):
        if type(key) is not str:
            key = safe_text(key)  # noqa: PLW2901 - a str subclass: its characters only
            if key is None:
                continue  # no row is named by anything but a str
        if key in plain:
            continue
        hits = cache.get(key)
        if hits is None:
            hits = patterns.lookup(key)
        if not hits:
            continue
        for record, row, points, base, captured in hits:
            if record is None:
                continue  # no instrument: a non-scalar row (a W&B table), or one refused
            value = _checked_value(raw, row, prefix, key)
            if value is None:
                continue
            if not _isfinite(value):  # a gauge's NaN: the SDK's set would drop it
                record = otel.non_finite_recorder(record)  # noqa: PLW2901
            try:
                if attributes is None:
                    record(value, base)
                else:
                    record(value, points.attributes(_merge(captured, attributes)))
            except Exception as exc:  # noqa: BLE001 - the SDK must not crash training
                _warn_record_error(exc, prefix, key, row, "family-key")


def _checked_value(
    raw: Any,
    row: TeedMetric | RecordedMetric,
    prefix: str | None,
    key: str,
    family: str | None = "family-key",
) -> float | None:
    """``raw`` as a finite float the row's kind takes, or None after warning once.

    The one place the tee and ``record_metrics`` judge a value: ``prefix`` is
    the ``log_metrics`` prefix of a teed key, ``None`` for a registry key of
    ``record_metrics``. Nothing is formatted unless a warning is due.
    """
    if raw is None:
        return None  # "no value this step": skipped silently, as upstream records only non-None
    value = raw if type(raw) is float else as_scalar(raw)
    if (
        value is not None
        and _isfinite(value)
        and (value >= 0.0 or row.kind not in _NONNEGATIVE_KINDS)
    ):
        if row.logged_unit:
            return _scaled(value, row, prefix, key, family)
        return value
    cause, label = _cause(prefix, key)
    if value is None:
        warn_once(
            ("not-scalar", *cause),
            f"{label} ({row.name}) logged a {type_name(raw)} ({safe_repr(raw)}), not a "
            "number; skipped (warned once per key)",
            family=family,
        )
    elif not _isfinite(value):
        return _non_finite(value, row, cause, label, family)
    else:
        warn_once(
            ("negative", *cause),
            f"{label} ({row.name}) is {value}, but a {row.kind} takes only non-negative "
            "values; skipped (warned once per key). Declare a gauge or up_down_counter "
            "for a signed series",
            family=family,
        )
    return None


def _non_finite(
    value: float,
    row: TeedMetric | RecordedMetric,
    cause: tuple[str, ...],
    label: str,
    family: str | None,
) -> float | None:
    """NaN or an infinity: a gauge exports it as its last value (what a ``NonFinite`` alert
    reads), another kind skips it (a NaN would stay in a counter's or histogram's sum for
    good). Warned once per key unless the row says ``non_finite="allowed"``."""
    gauge = row.kind == "gauge"
    if not (isinstance(row, TeedMetric) and row.non_finite == "allowed"):
        done = (
            "exported as it is, so the gauge shows it and an alert on it fires; declare "
            "non_finite: allowed if it is a legitimate value"
            if gauge
            else f"a {row.kind} takes only finite values, skipped"
        )
        warn_once(
            ("non-finite", *cause),
            f"{label} ({row.name}) is {value}, a non-finite value: {done} (warned once per key)",
            family=family,
        )
    return value if gauge else None


def _cause(prefix: str | None, key: str) -> tuple[tuple[str, ...], str]:
    """The warn-once cause and the message label of a key (teed under ``prefix``, or recorded)."""
    if prefix is None:
        return ("record_metrics", key), f"record_metrics: {key!r}"
    return ("tee", prefix, key), f"tee: {_where(prefix, key)!r}"


def _scaled(
    value: float,
    row: TeedMetric | RecordedMetric,
    prefix: str | None,
    key: str,
    family: str | None,
) -> float | None:
    """``value`` as logged (in ``row.logged_unit``) in the exported ``row.unit``, exactly."""
    _, numerator, denominator = unit_scale(row.logged_unit)
    scaled = scale_value(value, numerator, denominator)
    if _isfinite(scaled):
        return scaled
    cause, label = _cause(prefix, key)
    warn_once(
        ("scaled-overflow", *cause),
        f"{label} ({row.name}) is {value} {row.logged_unit}, beyond the float range in "
        f"{row.unit}; skipped (warned once per key)",
        family=family,
    )
    return None


def _report_undeclared(
    group: otel.MetricGroup, metrics: dict[Any, Any], prefix: str, loop: str | None = None
) -> None:
    plan = group.plan(prefix, loop)
    if plan is None:
        return  # an untee'd prefix (e.g. "validation" with no rows) is not an omission
    plain = plan.plain
    patterns = plan.patterns
    cache = patterns.cache if patterns is not None else {}
    for key in list(metrics):  # a snapshot: another thread may add keys meanwhile
        text = key if type(key) is str else safe_text(key)
        if text is None:
            warn_once(
                ("undeclared-type", prefix, type_name(key)),
                f"tee (strict): a {type_name(key)} key ({safe_repr(key)}) is logged under "
                f"{prefix!r}; keys are str, so no row can declare it (warned once per type)",
                family="undeclared-key",
            )
            continue
        if text in plain:
            continue
        if patterns is not None:
            hits = cache.get(text)
            if hits is None:
                hits = patterns.lookup(text)
            if hits:
                continue
        warn_once(
            ("undeclared", prefix, text),
            f"tee (strict): {_where(prefix, text)!r} is logged under a teed prefix but no "
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
        group = otel.current_group()
        snapshot = _snapshot(values, "record_metrics")
        if snapshot is None:
            return
        recorders = group.recorders
        for raw_key, raw in snapshot.items():
            key = raw_key if type(raw_key) is str else safe_text(raw_key)
            if key is None or key not in group.recorded_keys:
                _warn_unknown_recorded(group, raw_key, key)
                continue
            if raw is None or not group.enabled:
                continue
            entry = recorders.get(key)
            if entry is None:
                continue  # no instrument (refused at build time, warned then)
            record, row, points = entry
            value = _checked_value(raw, row, None, key, None)
            if value is None:
                continue
            if not _isfinite(value):  # a gauge's NaN: the SDK's set would drop it
                record = otel.non_finite_recorder(record)
            try:
                record(value, points.attributes(attributes))
            except Exception as exc:  # noqa: BLE001 - the SDK must not crash training
                warn_once(
                    ("recorded-sdk-error", key, type_name(exc)),
                    f"record_metrics: recording {key!r} ({row.name}) raised "
                    f"{describe_error(exc)}; skipped",
                )
    except Exception as exc:  # noqa: BLE001 - e.g. an attribute whose __hash__ raises
        warn_once(
            ("record-error", type_name(exc)),
            f"record_metrics failed: {describe_error(exc)} (warned once per error)",
        )


def _warn_unknown_recorded(group: otel.MetricGroup, raw_key: object, key: str | None) -> None:
    if key is None:
        warn_once(
            ("unknown-recorded-type", type_name(raw_key)),
            f"record_metrics: a {type_name(raw_key)} key ({safe_repr(raw_key)}) names no "
            "recorded row; keys are registry keys (str) such as 'vllm_batch_duration' "
            "(warned once per type)",
            family="unknown-recorded-key",
        )
        return
    hint = (
        "it is a teed row; log it through log_metrics instead"
        if key in group.teed_keys
        else "declare a RecordedMetric for it in its owner's catalog"
    )
    warn_once(
        ("unknown-recorded", key),
        f"record_metrics: no recorded row has registry key {key!r}; {hint} (warned once per key)",
        family="unknown-recorded-key",
    )
