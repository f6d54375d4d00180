"""A pytest plugin: capture what a block of code exports through the tee, and judge it.

Registered by the package (``[project.entry-points.pytest11]``), so a project that
installs metric-catalog gets the :func:`metric_capture` fixture::

    def test_one_step_exports_what_the_catalog_declares(metric_capture):
        with metric_capture() as captured:
            trainer.train_step()          # logs through TeeLogger / tee_metrics
        captured.assert_matches_catalog(loop="grpo_sync")

The block's points go to an OpenTelemetry SDK ``InMemoryMetricReader`` instead of
the configured exporters; :meth:`Captured.check` judges them against the rows the
generated modules registered (:mod:`metric_catalog.vocabulary`): a series no row
declares, another kind or unit than its row's, an attribute the row does not declare,
lacks (when required) or does not allow, NaN or an infinity (unless the row says
``non_finite="allowed"``), a value outside the row's range
(:mod:`metric_catalog.value_rules`), and with ``loop=`` the loop's teed rows the block
never exported (a row logged every so many steps only when its period came due in the
``steps=`` the block ran). :meth:`Captured.assert_matches_catalog` raises
:class:`CatalogMismatchError` (an ``AssertionError``) whose message reads like
``live-check``'s report.

Importing this module costs nothing but the standard library: the SDK is imported
when a capture starts, and a test using the fixture without the ``otel`` extra is
skipped with the install command, never an error.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

import pytest

if TYPE_CHECKING:
    from metric_catalog.vocabulary import RecordedMetric, TeedMetric

__all__ = [
    "CaptureFinding",
    "CaptureReport",
    "Captured",
    "CapturedPoint",
    "CatalogMismatchError",
    "MetricCapture",
    "MetricCaptures",
    "metric_capture",
]

_KINDS: Final = (
    "undeclared_series",
    "kind_mismatch",
    "unit_mismatch",
    "undeclared_attribute",
    "missing_attribute",
    "attribute_value",
    "non_finite",
    "out_of_range",
    "not_integer",
    "missing",
)
"""The finding kinds a capture reports, in report order (live-check's names)."""

_OTEL_MISSING: Final = (
    "metric_catalog.testing needs the OpenTelemetry SDK: pip install 'metric-catalog[otel]'"
)


class CatalogMismatchError(AssertionError):
    """What a block exported does not match the catalog; the message is the report."""


@dataclass(frozen=True, slots=True)
class CapturedPoint:
    """One exported data point, flattened: its series, instrument, unit, attributes, values."""

    series: str
    kind: str
    """``gauge``, ``counter``, ``up_down_counter`` or ``histogram`` as exported."""
    unit: str
    attributes: Mapping[str, Any]
    values: tuple[float, ...]
    """The point's value (a gauge's), or its min and max (a histogram's, when recorded);
    ``()`` for a sum, whose cumulative total no range speaks of."""


@dataclass(slots=True)
class CaptureFinding:
    """Every occurrence of one kind for one series (and attribute), aggregated."""

    kind: str
    series: str
    example: str
    count: int = 1
    attribute: str = ""

    def message(self) -> str:
        """One sentence: what happened, how often, the first example, the fix."""
        return _MESSAGES[self.kind].format(
            series=self.series, count=self.count, example=self.example, attribute=self.attribute
        )


_MESSAGES: Final[dict[str, str]] = {
    "undeclared_series": "{series} was exported ({count} point(s)) but no row declares it; "
    "declare it in the catalog and regenerate, or stop recording it",
    "kind_mismatch": "{series} {example}; fix the instrument or the row's kind",
    "unit_mismatch": "{series} {example}; fix the unit or the row's unit",
    "undeclared_attribute": "{series} carries attribute {attribute!r} ({count} point(s)), "
    "which its row does not declare; list it in the row or stop passing it",
    "missing_attribute": "{series} lacks required attribute {attribute!r} on {count} "
    "point(s); pass it, or lower its requirement level",
    "attribute_value": "{series} carries {attribute}={example} ({count} point(s)), a value "
    "its attribute does not allow; log an allowed value, or add it to the attribute",
    "non_finite": "{series} was exported as NaN or an infinity ({count} point(s), first "
    "{example}); log finite values, or declare non_finite: allowed on its row if they are "
    "legitimate",
    "out_of_range": "{series} was exported {count} time(s) outside its range, first "
    "{example}; fix the row's unit or range, or the value the code logs",
    "not_integer": "{series} was exported {count} time(s) with a fraction, first {example}, "
    "but its row declares value_type: int; log whole numbers",
    "missing": "{series} applies to loop {example} but the block never exported it; log it, "
    "or fix the row's emitted_by",
}


@dataclass(frozen=True, slots=True)
class CaptureReport:
    """What a capture showed, judged: findings in report order, and a loop's coverage."""

    points: int
    series: tuple[str, ...]
    declared: int
    findings: tuple[CaptureFinding, ...]
    loop: str | None = None
    applicable: tuple[str, ...] = ()
    """The loop's teed rows (``emitted_by`` naming it, or none), when ``loop`` is given."""
    exported: tuple[str, ...] = ()
    """Those of them the block exported."""

    @property
    def ok(self) -> bool:
        """True when nothing was found."""
        return not self.findings

    def count(self, kind: str) -> int:
        """Occurrences of ``kind``."""
        return sum(f.count for f in self.findings if f.kind == kind)

    def render(self) -> str:
        """The report as text, laid out as ``live-check``'s."""
        lines = [
            f"metric-catalog capture: {self.points} point(s) of {len(self.series)} series; "
            f"{self.declared} row(s) declared"
        ]
        if self.loop is not None:
            share = len(self.exported) / len(self.applicable) if self.applicable else 1.0
            lines.append(
                f"loop {self.loop}: coverage {share:.1%} ({len(self.exported)} of "
                f"{len(self.applicable)} applicable rows exported)"
            )
        lines.extend(f"{f.series}: warning[{f.kind.upper()}]: {f.message()}" for f in self.findings)
        counts = ", ".join(f"{kind} {self.count(kind)}" for kind in _KINDS)
        lines.append(f"findings: {counts}")
        lines.append("ok" if self.ok else f"FAILED: {len(self.findings)} distinct finding(s)")
        return "\n".join(lines)


class Captured:
    """The points a :class:`MetricCapture` block exported, to judge against the catalog."""

    def __init__(self) -> None:
        self.points: list[CapturedPoint] = []

    def series(self) -> set[str]:
        """Every series name exported."""
        return {point.series for point in self.points}

    def check(
        self, *, loop: str | None = None, steps: Iterable[int] | None = None
    ) -> CaptureReport:
        """Judge the points against the registered rows (and ``loop``'s coverage).

        A row logged on a schedule (``every``, ``first_step``) applies to the loop only
        when one of ``steps`` (the steps the block ran) came due, as live-check judges
        it; without ``steps``, or with a schedule read from the run's configuration,
        it is never missing.
        """
        from metric_catalog import vocabulary  # noqa: PLC0415 - stdlib only, when judging

        rows: dict[str, TeedMetric | RecordedMetric] = {}
        for recorded in vocabulary.recorded_metrics():
            rows[recorded.name] = recorded
        for teed in vocabulary.teed_metrics():
            rows[teed.name] = teed
        judge = _Judge()
        for point in self.points:
            judge.point(point, rows.get(point.series))
        applicable: tuple[str, ...] = ()
        exported: tuple[str, ...] = ()
        if loop is not None:
            seen = self.series()
            ran = None if steps is None else tuple(steps)
            applicable = tuple(
                sorted(
                    row.name
                    for row in vocabulary.teed_metrics()
                    if (not row.emitted_by or loop in row.emitted_by) and _came_due(row, ran)
                )
            )
            exported = tuple(name for name in applicable if name in seen)
            for name in applicable:
                if name not in seen:
                    judge.note("missing", name, loop)
        return CaptureReport(
            points=len(self.points),
            series=tuple(sorted(self.series())),
            declared=len(rows),
            findings=tuple(sorted(judge.found.values(), key=_finding_order)),
            loop=loop,
            applicable=applicable,
            exported=exported,
        )

    def assert_matches_catalog(
        self, *, loop: str | None = None, steps: Iterable[int] | None = None
    ) -> CaptureReport:
        """:meth:`check`, raising :class:`CatalogMismatchError` with the report when it finds any.

        Raises:
            CatalogMismatchError: a finding; the message is the whole report.
        """
        report = self.check(loop=loop, steps=steps)
        if not report.ok:
            raise CatalogMismatchError(report.render())
        return report


def _came_due(row: TeedMetric, steps: tuple[int, ...] | None) -> bool:
    """Whether ``row`` was due at one of ``steps``: always for a row of every step; for a
    scheduled row (``every``, ``phase``, ``first_step``), a step at or after its first that
    is a step of its schedule (:func:`~metric_catalog.series_rules.is_scheduled`; a period
    that is not positive is never due). A schedule read from the run's configuration, or
    no steps known, cannot come due here."""
    from metric_catalog.series_rules import is_scheduled  # noqa: PLC0415

    if not row.every and not row.first_step:
        return True
    if steps is None:
        return False
    try:
        first = int(row.first_step) if row.first_step else None
        every = int(row.every) if row.every else None
    except ValueError:
        return False  # "config.trainer.test_freq": only live-check reads a run's configuration
    if every is not None and every <= 0:
        return False
    return any(
        (first is None or step >= first) and (every is None or is_scheduled(step, every, row.phase))
        for step in steps
    )


def _finding_order(finding: CaptureFinding) -> tuple[int, str, str]:
    return (_KINDS.index(finding.kind), finding.series, finding.attribute)


class _Judge:
    """Aggregates findings per kind, series and attribute."""

    def __init__(self) -> None:
        self.found: dict[tuple[str, str, str], CaptureFinding] = {}

    def note(self, kind: str, series: str, example: str, attribute: str = "") -> None:
        existing = self.found.get((kind, series, attribute))
        if existing is not None:
            existing.count += 1
        else:
            self.found[(kind, series, attribute)] = CaptureFinding(
                kind, series, example, attribute=attribute
            )

    def point(self, point: CapturedPoint, row: TeedMetric | RecordedMetric | None) -> None:
        if row is None:
            self.note("undeclared_series", point.series, "")
            return
        if point.kind != row.kind:
            self.note(
                "kind_mismatch",
                point.series,
                f"is exported as a {point.kind}, its row a {row.kind}",
            )
        if point.unit != row.unit:
            self.note(
                "unit_mismatch",
                point.series,
                f"is exported in unit {point.unit!r}, its row in {row.unit!r}",
            )
        self._attributes(point, row)
        self._values(point, row)

    def _attributes(self, point: CapturedPoint, row: TeedMetric | RecordedMetric) -> None:
        from metric_catalog import exporters  # noqa: PLC0415 - loaded by the capture already
        from metric_catalog.vocabulary import OVERFLOW_ATTRIBUTE  # noqa: PLC0415

        declared = {attribute.name: attribute for attribute in row.attributes}
        extra = set(exporters.promoted_identity()) | {OVERFLOW_ATTRIBUTE}
        for name, value in point.attributes.items():
            attribute = declared.get(name)
            if attribute is None:
                if name not in extra:
                    self.note("undeclared_attribute", point.series, "", name)
            elif attribute.closed_values and value not in attribute.closed_values:
                self.note("attribute_value", point.series, repr(value), name)
        for name, attribute in declared.items():
            absent = name not in point.attributes and OVERFLOW_ATTRIBUTE not in point.attributes
            if attribute.requirement == "required" and absent:
                self.note("missing_attribute", point.series, "", name)

    def _values(self, point: CapturedPoint, row: TeedMetric | RecordedMetric) -> None:
        from metric_catalog.value_rules import series_range  # noqa: PLC0415

        bounds = series_range(row.value_range, row.unit, row.kind)
        allowed = getattr(row, "non_finite", "reported") == "allowed"  # a teed row's setting
        for value in point.values:
            if not math.isfinite(value):  # a gauge's NaN, which the tee exports as it is
                if allowed:
                    continue
                self.note("non_finite", point.series, f"{value}")
                return
            if bounds is None:
                continue
            problem = bounds.judge(value)
            if problem is not None:
                self.note(problem, point.series, f"{value:g} (the row's range is {bounds.text()})")
                return


_ACTIVE: list[MetricCapture] = []
"""The capture blocks entered and not yet left, outermost first."""


class MetricCapture:
    """A context manager sending the tee's points to an in-memory reader for its block.

    Entering installs an OpenTelemetry ``MeterProvider`` with an ``InMemoryMetricReader``
    as the process's provider (:func:`metric_catalog.exporters.configure`); leaving
    collects the points into :attr:`captured`. Blocks nest: leaving an inner block hands
    its points to every enclosing one too (they were exported inside those blocks as
    well) and gives the provider back to the enclosing block, so it keeps capturing what
    comes after; leaving the outermost restores the exporters to what the environment
    says (they are rebuilt on the next tee).
    """

    def __init__(self) -> None:
        self.captured = Captured()
        self._reader: Any = None
        self._provider: Any = None

    def __enter__(self) -> Captured:
        try:
            from opentelemetry.sdk.metrics import MeterProvider  # noqa: PLC0415
            from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: PLC0415
        except ImportError:
            pytest.skip(_OTEL_MISSING)
        from metric_catalog import exporters  # noqa: PLC0415

        self._reader = InMemoryMetricReader()
        self._provider = MeterProvider(metric_readers=[self._reader], shutdown_on_exit=False)
        exporters.configure(meter_provider=self._provider)
        _ACTIVE.append(self)
        return self.captured

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        from metric_catalog import exporters  # noqa: PLC0415

        points: list[CapturedPoint] = []
        try:
            points = list(_points(self._reader.get_metrics_data()))
            self.captured.points.extend(points)
        finally:
            if self in _ACTIVE:
                _ACTIVE.remove(self)
            if _ACTIVE:
                # The enclosing block captures again; the instruments move to its provider.
                exporters.configure(meter_provider=_ACTIVE[-1]._provider)
            else:
                exporters.reset_for_tests()
            self._provider.shutdown()
        for outer in _ACTIVE:
            outer.captured.points.extend(points)


def _points(data: Any) -> Iterator[CapturedPoint]:
    """Every data point of an SDK ``MetricsData`` (``None``: nothing recorded)."""
    from opentelemetry.sdk.metrics.export import Gauge, Histogram, Sum  # noqa: PLC0415

    if data is None:
        return
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                payload = metric.data
                if isinstance(payload, Histogram):
                    kind = "histogram"
                elif isinstance(payload, Sum):
                    kind = "counter" if payload.is_monotonic else "up_down_counter"
                elif isinstance(payload, Gauge):
                    kind = "gauge"
                else:
                    kind = type(payload).__name__.lower()
                for point in payload.data_points:
                    yield CapturedPoint(
                        metric.name,
                        kind,
                        metric.unit or "",
                        dict(point.attributes or {}),
                        _values(kind, point),
                    )


def _values(kind: str, point: Any) -> tuple[float, ...]:
    if kind == "gauge":
        return (float(point.value),)
    if kind == "histogram" and int(getattr(point, "count", 0)) > 0:
        return (float(point.min), float(point.max))
    return ()


@dataclass
class MetricCaptures:
    """What the :func:`metric_capture` fixture hands out: call it for a capture block."""

    made: list[MetricCapture] = field(default_factory=list)

    def __call__(self) -> MetricCapture:
        """A new :class:`MetricCapture` (use it as ``with metric_capture() as captured:``)."""
        capture = MetricCapture()
        self.made.append(capture)
        return capture


@pytest.fixture
def metric_capture() -> MetricCaptures:
    """A factory of :class:`MetricCapture` blocks: ``with metric_capture() as captured:``.

    Skips the test when the OpenTelemetry SDK (the ``otel`` extra) is not installed.
    """
    return MetricCaptures()
