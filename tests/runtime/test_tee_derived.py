"""Derived attributes at run time: registration checks and the tee filling them.

A derived attribute (``MetricAttribute(derived_from=..., derive_map=...)``) is
not captured from a key nor passed by the caller: the tee computes it from
another attribute of the point with a fixed table, as upstream NeMo-RL derives
``rl.efficiency.measurement``, ``rl.efficiency.window`` and ``rl.bucket`` from
the efficiency category.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from metric_catalog import exporters, vocabulary
from metric_catalog._attributes import SeriesPoints, derivations
from metric_catalog.tee import record_metrics, tee_metrics
from metric_catalog.vocabulary import MetricAttribute, RecordedMetric, TeedMetric
from tests.otel_fixtures import caught_warnings, clean_otel, collect, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

COLOR = MetricAttribute("color", values=("red", "green", "blue"), requirement="required")
WARM = MetricAttribute(
    "warm",
    values=("yes", "no"),
    derived_from="color",
    derive_map=(("red", "yes"), ("green", "no")),
)
SHADE = MetricAttribute(
    "shade", derived_from="warm", derive_map=(("yes", "hot"),), derive_default="cold"
)
SIZE = MetricAttribute("size", "int")
BIG = MetricAttribute("big", "bool", derived_from="size", derive_map=((1, False), (10, True)))

ROWS = (
    TeedMetric("paint/{color}", "rl.paint", attributes=(COLOR, WARM, SHADE), other_prefixes=("",)),
    TeedMetric("box/{size}", "rl.box", attributes=(SIZE, BIG)),
)
RECORDED = (
    RecordedMetric("rl.crate", attributes=(MetricAttribute("color", values=COLOR.values), WARM)),
)


@pytest.fixture
def reader(clean_otel: None) -> Iterator[InMemoryMetricReader]:
    """The rows above registered, a provider with an in-memory reader installed."""
    vocabulary.register_teed_metrics(ROWS)
    vocabulary.register_recorded_metrics(RECORDED)
    with installed_reader() as memory:
        yield memory


def attribute_sets(reader: InMemoryMetricReader, name: str) -> list[dict[str, Any]]:
    """The attribute dicts of every point of ``name``, sorted by their items."""
    series = collect(reader).get(name)
    found = [dict(p.attributes or {}) for p in series.points] if series else []
    return sorted(found, key=lambda a: sorted(a.items()))


# --- registration -------------------------------------------------------------------


def test_a_derived_attribute_keeps_positional_construction() -> None:
    """The five reference fields keep their positions; derivation fields come after."""
    attribute = MetricAttribute("warm", "string", ("yes",), None, "required")
    assert (attribute.derived_from, attribute.derive_map, attribute.derive_default) == (
        None,
        (),
        None,
    )
    assert attribute.requirement == "required"
    assert hash(WARM) == hash(
        MetricAttribute(
            "warm",
            values=("yes", "no"),
            derived_from="color",
            derive_map=(("red", "yes"), ("green", "no")),
        )
    )


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"derive_map": (("a", "b"),)}, "without derived_from"),
        ({"derive_default": "b"}, "without derived_from"),
        ({"derived_from": "x y"}, "must be an attribute name"),
        ({"derived_from": "target", "derive_map": (("a", "b"),)}, "names the attribute itself"),
        ({"derived_from": "src", "derive_map": [("a", "b")]}, "tuple of (source value, value)"),
        ({"derived_from": "src", "derive_map": (("a",),)}, "tuple of (source value, value)"),
        ({"derived_from": "src", "derive_map": (("a", "b"), ("a", "c"))}, "a source value twice"),
        ({"derived_from": "src", "derive_map": (("a", "z"),)}, "yields 'z'"),
        ({"derived_from": "src", "derive_map": (("a", "b"),), "derive_default": 3}, "yields 3"),
        ({"derived_from": "src"}, "never set"),
        ({"derived_from": "src", "derive_map": (([], "b"),)}, "is not a scalar"),
    ],
)  # fmt: skip
def test_a_bad_derivation_is_rejected_with_a_clear_error(
    kwargs: dict[str, Any], needle: str
) -> None:
    """Each way to get a derivation wrong names the attribute and the fix."""
    with pytest.raises(ValueError, match=re.escape("MetricAttribute('target')")) as caught:
        MetricAttribute("target", values=("b", "c"), **kwargs)
    assert needle in str(caught.value)


@pytest.mark.parametrize(
    ("attributes", "needle"),
    [
        ((WARM,), "which the row does not declare"),
        ((COLOR, MetricAttribute("w", derived_from="color", derive_map=(("pink", "x"),))), "pink"),
        (
            (
                MetricAttribute("a", derived_from="b", derive_map=(("x", "y"),)),
                MetricAttribute("b", derived_from="a", derive_map=(("y", "x"),)),
            ),
            "derivations loop (a -> b -> a)",
        ),
        ((SIZE, MetricAttribute("big", derived_from="size", derive_map=(("1", "x"),))), "maps '1'"),
    ],
)  # fmt: skip
def test_a_row_rejects_a_derivation_its_attributes_cannot_serve(
    attributes: tuple[MetricAttribute, ...], needle: str
) -> None:
    """Source outside the row, a key the source never takes, or a loop: ValueError at the row."""
    with pytest.raises(ValueError, match=re.escape("RecordedMetric('rl.crate')")) as caught:
        RecordedMetric("rl.crate", attributes=attributes)
    assert needle in str(caught.value)


def test_a_placeholder_cannot_capture_a_derived_attribute() -> None:
    """A point gets an attribute one way: captured or derived, not both."""
    with pytest.raises(ValueError, match="both captured by a placeholder and derived"):
        TeedMetric("paint/{warm}", "rl.paint", attributes=(COLOR, WARM))


def test_a_valid_derivation_registers(clean_otel: None) -> None:
    """The sample rows are accepted and keep their derivation fields."""
    vocabulary.register_teed_metrics(ROWS)
    (paint, _box) = vocabulary.teed_metrics()
    assert paint.attributes[1].derived_from == "color"


def test_derivations_are_ordered_after_their_sources() -> None:
    """A derivation reading another derived attribute comes after it, whatever the order."""
    ordered = derivations((SHADE, WARM, COLOR))
    assert [target for target, *_rest in ordered] == ["warm", "shade"]


# --- the tee ------------------------------------------------------------------------


def test_the_tee_fills_derived_attributes_from_the_captured_one(
    reader: InMemoryMetricReader,
) -> None:
    """Captured color red: warm yes, and shade (derived from warm) hot."""
    with caught_warnings() as warned:
        tee_metrics({"paint/red": 1.0}, "train")
        tee_metrics({"paint/green": 2.0}, "")
    assert warned.messages == []
    assert attribute_sets(reader, "rl.paint") == [
        {"color": "green", "warm": "no", "shade": "cold"},
        {"color": "red", "warm": "yes", "shade": "hot"},
    ]


def test_an_unmapped_value_leaves_the_attribute_unset_or_takes_the_default(
    reader: InMemoryMetricReader,
) -> None:
    """blue has no entry for warm (unset); shade then has no source and stays unset too."""
    with caught_warnings() as warned:
        tee_metrics({"paint/blue": 3.0}, "train")
    assert warned.messages == []
    assert attribute_sets(reader, "rl.paint") == [{"color": "blue"}]


def test_an_int_source_maps_to_a_bool_attribute(reader: InMemoryMetricReader) -> None:
    """Captured ints look up by value and type; an unmapped int leaves the attribute unset."""
    tee_metrics({"box/10": 1.0, "box/1": 2.0, "box/7": 3.0}, "train")
    assert attribute_sets(reader, "rl.box") == [
        {"size": 1, "big": False},
        {"size": 10, "big": True},
        {"size": 7},
    ]


def test_a_derivation_applies_to_attributes_the_caller_passes(
    reader: InMemoryMetricReader,
) -> None:
    """record_metrics derives too, and the derivation wins over a passed value."""
    record_metrics({"crate": 1.0}, {"color": "red", "warm": "no"})
    assert attribute_sets(reader, "rl.crate") == [{"color": "red", "warm": "yes"}]


def test_a_passed_derived_value_stays_when_the_source_is_absent(
    reader: InMemoryMetricReader,
) -> None:
    """With no source on the point there is nothing to derive from; the passed value is checked."""
    record_metrics({"crate": 1.0}, {"warm": "no"})
    assert attribute_sets(reader, "rl.crate") == [{"warm": "no"}]


def test_a_required_derived_attribute_filled_by_the_tee_is_not_warned(clean_otel: None) -> None:
    """Presence is checked after derivation, so a required derived attribute counts as present."""
    required_warm = MetricAttribute(
        "warm",
        values=("yes", "no"),
        requirement="required",
        derived_from="color",
        derive_map=(("red", "yes"), ("green", "no"), ("blue", "no")),
    )
    points = SeriesPoints(
        TeedMetric("paint/{color}", "rl.paint", attributes=(COLOR, required_warm)), {}
    )
    with caught_warnings() as warned:
        assert points.attributes({"color": "blue"}) == {"color": "blue", "warm": "no"}
    assert warned.messages == []


@given(st.lists(st.sampled_from(["red", "green", "blue"]), max_size=20))
def test_every_point_carries_exactly_the_table_values(colors: list[str]) -> None:
    """Whatever the sequence of captured values, each point's derived values follow the table."""
    points = SeriesPoints(ROWS[0], {"rank": 0})
    warm = dict(WARM.derive_map)
    for color in colors:
        got = points.attributes({"color": color})
        assert got is not None
        assert got.get("warm") == warm.get(color)
        assert got.get("shade") == (SHADE.derive(warm[color]) if color in warm else None)
        assert got["rank"] == 0


# --- end to end: the repository's catalog and upstream's efficiency dict --------------

# Upstream's print_efficiency_summary output for one async GRPO step (algorithms/utils.py):
# per-category seconds, the wall-clock categories' shares, the aggregates and the ratio.
UPSTREAM_EFFICIENCY: dict[str, float] = {
    "efficiency/init/total_s": 412.0,
    "efficiency/init/total_pct": 12.5,
    "efficiency/idle/buffer_starvation_s": 3.5,
    "efficiency/idle/buffer_starvation_pct": 0.1,
    "efficiency/idle/refit_bubble_s": 1.25,
    "efficiency/idle/refit_bubble_pct": 0.04,
    "efficiency/idle/validation_s": 0.0,
    "efficiency/idle/validation_pct": 0.0,
    "efficiency/idle/buffer_full_backoff_s": 9.0,
    "efficiency/idle/generation_limit_pause_s": 2.0,
    "efficiency/idle/refit_event_wait_s": 4.5,
    "efficiency/wasted/failed_trajectory_s": 0.75,
    "efficiency/thread_seconds_total_s": 16.25,
    "efficiency/total_waste_s": 4.75,
    "efficiency/productive_time_s": 55.25,
    "efficiency/efficiency_pct": 92.1,
    "efficiency/total_wall_time_s": 3296.0,
    "efficiency/efficiency_pct_is_per_step": 1.0,
}

# Upstream's tables: efficiency_measurements / efficiency_window (telemetry/metrics.py) and
# EFFICIENCY_CATEGORY_BUCKET (telemetry/instrumentation.py), restated for the check.
UPSTREAM_ATTRIBUTES: dict[str, tuple[str, str, str]] = {
    "init/total": ("wall_clock", "run", "overhead"),
    "idle/buffer_starvation": ("wall_clock", "step", "idle"),
    "idle/refit_bubble": ("wall_clock", "step", "idle"),
    "idle/validation": ("wall_clock", "step", "idle"),
    "idle/buffer_full_backoff": ("thread_seconds", "run", "idle"),
    "idle/generation_limit_pause": ("collector_wall_clock", "run", "idle"),
    "idle/refit_event_wait": ("collector_wall_clock", "run", "idle"),
    "wasted/failed_trajectory": ("thread_seconds", "run", "wasted"),
}


@pytest.fixture
def catalog_reader(clean_otel: None) -> Iterator[InMemoryMetricReader]:
    """The repository's generated telemetry rows registered, an in-memory reader installed."""
    from metric_catalog.generated import telemetry

    vocabulary.register_teed_metrics(telemetry.TEED, owner=telemetry.__name__)
    memory = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[memory], shutdown_on_exit=False)
    exporters.configure(meter_provider=provider)
    yield memory
    exporters.reset_for_tests()
    provider.shutdown()


@pytest.mark.parametrize("prefix", ["", "train"])
def test_upstream_efficiency_points_carry_all_four_attributes(
    catalog_reader: InMemoryMetricReader, prefix: str
) -> None:
    """Each category's point carries category, measurement, window and bucket as upstream
    sets them; the aggregate keys make no point and no warning."""
    with caught_warnings() as warned:
        tee_metrics(UPSTREAM_EFFICIENCY, prefix)
        tee_metrics(UPSTREAM_EFFICIENCY, prefix)  # a second step: same sets, no new warning
    assert warned.messages == []
    series = collect(catalog_reader)["rl.efficiency.seconds"]
    got = {
        dict(p.attributes or {})["rl.efficiency.category"]: (dict(p.attributes or {}), p.value)
        for p in series.points
    }
    assert set(got) == set(UPSTREAM_ATTRIBUTES)
    for category, (measurement, window, bucket) in UPSTREAM_ATTRIBUTES.items():
        attributes, value = got[category]
        assert attributes == {
            "rl.efficiency.category": category,
            "rl.efficiency.measurement": measurement,
            "rl.efficiency.window": window,
            "rl.bucket": bucket,
        }
        assert value == UPSTREAM_EFFICIENCY[f"efficiency/{category}_s"]
    (pct,) = collect(catalog_reader)["rl.efficiency.pct"].points
    assert pct.value == 92.1


def test_the_aggregate_keys_are_not_matched_by_the_category_family(
    catalog_reader: InMemoryMetricReader,
) -> None:
    """total_waste and the other aggregates are outside the category enum: no point at all."""
    names = ("total_waste", "productive_time", "total_wall_time", "thread_seconds_total")
    aggregates = {
        f"efficiency/{name}_s": UPSTREAM_EFFICIENCY[f"efficiency/{name}_s"] for name in names
    }
    with caught_warnings() as warned:
        tee_metrics(aggregates, "")
    assert warned.messages == []
    assert "rl.efficiency.seconds" not in collect(catalog_reader)
