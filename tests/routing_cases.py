"""Catalogs written once and built for both routers: the tee's and live-check's.

A :class:`Spec` names attributes and rows in a neutral form; :func:`runtime_rows` makes
the :class:`~metric_catalog.vocabulary.TeedMetric` rows a generated module registers, and
:func:`key_matcher` the :class:`~codegen.catalog.matching.KeyMatcher` live-check, scan
and infer route with. :func:`tee_route` tees one flat key through the real tee and says
which series took it, with what attributes; :func:`check_route` says the same of
live-check's matcher. The routing table and the agreement property read both.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from codegen.catalog.diagnostics import Position
from codegen.catalog.matching import KeyMatcher
from codegen.catalog.model import Attribute, AttributeRef, AttributeValue, MetricRow
from metric_catalog import exporters, identity, vocabulary
from metric_catalog.adapters import split_key, tee_flat
from metric_catalog.vocabulary import MetricAttribute, TeedMetric

__all__ = [
    "AttrSpec",
    "Route",
    "RowSpec",
    "Spec",
    "check_route",
    "key_matcher",
    "registered",
    "registers",
    "runtime_rows",
    "tee_route",
]

_HERE = Position("routing.yaml", 1, 1)


@dataclass(frozen=True)
class AttrSpec:
    """An attribute: its type and enumeration (empty: open)."""

    type: str = "string"
    values: tuple[str, ...] = ()
    spans: bool = False


@dataclass(frozen=True)
class RowSpec:
    """A teed row: series name, prefix and key patterns, the loops that log it."""

    name: str
    prefix: str
    key: str
    loops: tuple[str, ...] = ()


@dataclass(frozen=True)
class Spec:
    """A catalog: attributes by name, rows, and step keys ``(loop, prefix, key)``."""

    attributes: dict[str, AttrSpec] = field(default_factory=dict)
    rows: tuple[RowSpec, ...] = ()
    step_keys: tuple[tuple[str, str, str], ...] = ()

    def used(self, row: RowSpec) -> tuple[str, ...]:
        """The attributes a row's placeholders name, in order."""
        text = row.prefix + "\x00" + row.key
        return tuple(name for name in self.attributes if "{" + name + "}" in text)


Route = tuple[str, str, str | None, tuple[tuple[str, str], ...]]
"""``(prefix, key, series or None, captured values as text, sorted)`` of one flat key."""


def runtime_rows(spec: Spec) -> list[TeedMetric]:
    """The rows as a generated module registers them."""
    rows = []
    for row in spec.rows:
        attributes = tuple(
            MetricAttribute(
                name,
                spec.attributes[name].type,
                tuple(int(v) for v in spec.attributes[name].values)
                if spec.attributes[name].type == "int"
                else spec.attributes[name].values,
                spans_segments=spec.attributes[name].spans,
            )
            for name in spec.used(row)
        )
        rows.append(
            TeedMetric(
                row.key, row.name, prefix=row.prefix, attributes=attributes, emitted_by=row.loops
            )
        )
    return rows


def key_matcher(spec: Spec) -> KeyMatcher:
    """The matcher live-check builds over the same rows."""
    known = {
        name: Attribute(
            name,
            attr.type,
            "An attribute.",
            "development",
            _HERE,
            "routing.yaml",
            values=tuple(AttributeValue(v, "A value.", _HERE) for v in attr.values),
            spans_segments=attr.spans,
        )
        for name, attr in spec.attributes.items()
    }
    rows = [
        MetricRow(
            "teed",
            row.name,
            "gauge",
            "",
            "A row.",
            "development",
            _HERE,
            logger_key=row.key,
            prefix=row.prefix,
            attributes=tuple(AttributeRef(n, "recommended", _HERE) for n in spec.used(row)),
            emitted_by=row.loops,
        )
        for row in spec.rows
    ]
    return KeyMatcher(rows, 10_000, known)


def check_route(spec: Spec, logged: str, loop: str | None = None) -> Route:
    """Where live-check routes the flat key ``logged`` (a run of ``loop``)."""
    matcher = key_matcher(spec)
    if any(logged == key for _loop, _prefix, key in spec.step_keys):
        return ("", logged, None, ())
    prefix, key = matcher.split(logged, loop)
    found = matcher.route_in(prefix, key, loop)
    if len(found.matches) != 1:
        return (prefix, key, None, ())
    (match,) = found.matches
    return (prefix, key, match.row.name, _texts(match.captures))


@contextmanager
def registered(spec: Spec, loop: str | None = None) -> Iterator[InMemoryMetricReader]:
    """The spec's rows (and step keys) registered, the tee recording into a memory reader."""
    vocabulary._reset_for_tests()
    identity._reset_for_tests()
    exporters.reset_for_tests()
    vocabulary.register_teed_metrics(runtime_rows(spec))
    steps: dict[str, tuple[tuple[str, str], ...]] = {}
    for step_loop, prefix, key in spec.step_keys:
        steps[step_loop] = (*steps.get(step_loop, ()), (prefix, key))
    vocabulary.register_step_keys(steps)
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader], shutdown_on_exit=False)
    exporters.configure(meter_provider=provider)
    try:
        yield reader
    finally:
        exporters.reset_for_tests()
        provider.shutdown()
        vocabulary._reset_for_tests()
        vocabulary._STEP_KEYS.clear()


def registers(spec: Spec) -> bool:
    """Whether the tee's registry accepts the rows (as validation accepts the catalog)."""
    vocabulary._reset_for_tests()
    try:
        vocabulary.register_teed_metrics(runtime_rows(spec))
    except ValueError:
        return False
    finally:
        vocabulary._reset_for_tests()
    return True


def tee_route(spec: Spec, logged: str, loop: str | None = None) -> Route:
    """Where the tee sends the flat key ``logged`` (``tee_flat(..., loop=loop)``)."""
    with registered(spec) as reader:
        prefix, key = split_key(logged, loop)
        tee_flat({logged: 1.0}, loop=loop)
        data = reader.get_metrics_data()
        points = [
            (metric.name, dict(point.attributes or {}))
            for resource in (data.resource_metrics if data else ())
            for scope in resource.scope_metrics
            for metric in scope.metrics
            for point in metric.data.data_points
        ]
    if len(points) != 1:
        return (prefix, key, None, ())
    name, attributes = points[0]
    return (prefix, key, name, _texts(attributes))


def _texts(values: object) -> tuple[tuple[str, str], ...]:
    items = values.items() if isinstance(values, dict) else ()
    return tuple(sorted((str(k), str(v)) for k, v in items))
