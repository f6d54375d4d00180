"""Judge how live telemetry describes a series: name, kind, unit, labels, overflow, identity.

A point read from OTLP or a Prometheus scrape (a record with a ``transport``)
carries what the wire said about its series. Against the row it belongs to:

``kind_mismatch``
    the wire's instrument kind differs from the row's (a Prometheus
    ``gauge`` stands for an ``up_down_counter`` too: the exposition has no
    other type for it).
``unit_mismatch``
    the OTLP unit differs from the row's (Prometheus text carries no unit; its
    name suffix is judged instead).
``prometheus_name``
    the family is exposed under another name than the catalog's translation
    (``naming.prometheus_name``), e.g. a unit suffix that differs.
``overflow``
    an overflow point (``otel.metric.overflow``): the series went past its
    cardinality budget in that process and new attribute sets were folded.
``missing_identity``
    a promoted identity attribute (``METRIC_CATALOG_PROMOTE``, or
    ``--promoted``) is absent from a point.

Labels the exporters add (``otel_scope_*``, ``job``, ``instance``) and the
promoted identity are left out before the row's attributes are judged;
Prometheus labels are mapped back to attribute names and typed values.
"""

from __future__ import annotations

from typing import Final

from metric_catalog.series_rules import INVALID, parse_value

from ...catalog.model import Attribute, Catalog, MetricRow, attribute_label
from ...catalog.naming import prometheus_base
from ...runs.records import Record

__all__ = ["EXPORTER_LABELS", "OVERFLOW_ATTRIBUTE", "WireJudge"]

OVERFLOW_ATTRIBUTE: Final = "otel.metric.overflow"
"""The attribute the SDK puts on a series' overflow point."""
EXPORTER_LABELS: Final = frozenset({"job", "instance"})
"""Labels Prometheus or its exporter add to every sample (besides ``otel_scope_*``)."""


def _typed(text: object, attribute: Attribute | None) -> object:
    """A label's text as the attribute's type (kept as text when it is no value of it)."""
    if attribute is None or not isinstance(text, str):
        return text
    value = parse_value(attribute.type, text)
    return text if value is INVALID else value


class WireJudge:
    """Resolves live points to rows and judges what the wire said about them."""

    def __init__(self, catalog: Catalog, promoted: tuple[str, ...] = ()) -> None:
        self.rows: dict[str, MetricRow] = {}
        self.exposed: dict[str, MetricRow] = {}
        self.bases: list[tuple[str, MetricRow]] = []
        for _, row in catalog.rows():
            self.rows.setdefault(row.name, row)
            self.exposed.setdefault(row.prometheus_name, row)
            self.bases.append((prometheus_base(row.name), row))
        # Longest base first, so rl_value_loss wins over rl_value for rl_value_loss_seconds.
        self.bases.sort(key=lambda item: -len(item[0]))
        self.attributes = catalog.attributes()
        self.promoted = promoted

    def resolve(self, record: Record) -> MetricRow | None:
        """The row a live point belongs to (by series name, or by exposed Prometheus name)."""
        if record.transport != "prometheus":
            return self.rows.get(record.series or "")
        exposed = record.exposed_as or record.series or ""
        found = self.exposed.get(exposed)
        if found is not None:
            return found
        for base, row in self.bases:
            if exposed == base or exposed.startswith(base + "_"):
                return row  # exposed under another translation: judged as prometheus_name
        return None

    def judge(
        self, row: MetricRow, record: Record
    ) -> tuple[list[tuple[str, str, str]], dict[str, object]]:
        """``(kind, example, attribute)`` findings and the point's attributes as the row's.

        The attributes returned are keyed by attribute name (Prometheus labels
        mapped back), without exporter labels, the overflow marker and the
        promoted identity, ready for the attribute judges.
        """
        problems = _description_problems(row, record)
        prometheus = record.transport == "prometheus"
        labels = {ref.name: ref.name for ref in row.attributes}
        if prometheus:
            labels = {attribute_label(ref.name): ref.name for ref in row.attributes}
        promoted = {(attribute_label(name) if prometheus else name): name for name in self.promoted}
        overflow_key = attribute_label(OVERFLOW_ATTRIBUTE) if prometheus else OVERFLOW_ATTRIBUTE
        attributes: dict[str, object] = {}
        seen_promoted: set[str] = set()
        for key, value in record.attributes.items():
            if key == overflow_key:
                if value in (True, "true"):
                    problems.append(("overflow", _OVERFLOW, ""))
                continue
            if key in promoted:
                seen_promoted.add(promoted[key])
                continue
            if prometheus and (key in EXPORTER_LABELS or key.startswith("otel_scope_")):
                continue
            name = labels.get(key, key)
            attributes[name] = _typed(value, self.attributes.get(name)) if prometheus else value
        for name in self.promoted:
            if name not in seen_promoted:
                problems.append(
                    (
                        "missing_identity",
                        f"lacks the promoted identity attribute {name!r}; the exporting "
                        "process does not set METRIC_CATALOG_PROMOTE (or its identity) like "
                        "the others: set it before the first tee",
                        name,
                    )
                )
        return problems, attributes


_OVERFLOW: Final = (
    "carries an overflow point (otel.metric.overflow=true): the "
    "series went past its cardinality budget in that process and new "
    "attribute sets were folded into it; find the attribute whose "
    "values grow without bound, or raise max_cardinality"
)


def _description_problems(row: MetricRow, record: Record) -> list[tuple[str, str, str]]:
    """How the wire describes the series against the row: its kind, unit and exposed name."""
    problems: list[tuple[str, str, str]] = []
    prometheus = record.transport == "prometheus"
    kind = record.kind
    if kind is not None and kind != row.kind:
        # The exposition has no up-down counter type: a gauge stands for one.
        as_gauge = prometheus and kind in ("gauge", "unknown")
        if not (as_gauge and row.kind == "up_down_counter"):
            problems.append(
                (
                    "kind_mismatch",
                    f"arrives as a {kind} over {record.transport}, but the row is a "
                    f"{row.kind}; export it with the row's instrument (regenerate and "
                    "redeploy the owner), or fix the row's kind",
                    "",
                )
            )
    if not prometheus and record.unit is not None and record.unit != row.unit:
        problems.append(
            (
                "unit_mismatch",
                f"arrives with unit {record.unit!r} over OTLP, but the row's unit is "
                f"{row.unit!r}; the exporting process runs other generated modules than "
                "this catalog's: regenerate and redeploy, or fix the row's unit",
                "",
            )
        )
    if prometheus and record.exposed_as and record.exposed_as != row.prometheus_name:
        problems.append(
            (
                "prometheus_name",
                f"is exposed as {record.exposed_as!r}, but the catalog's Prometheus name is "
                f"{row.prometheus_name!r} (dashboards and alerts use it); check the "
                "exporter's name translation (unit suffix, _total) against the docs",
                "",
            )
        )
    return problems
