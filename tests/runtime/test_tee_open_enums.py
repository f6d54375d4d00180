"""Open enumerations in the tee: the listed values plus others, within a budget of others."""

from __future__ import annotations

import pytest

from metric_catalog import vocabulary
from metric_catalog._attributes import SeriesPoints, series_limit
from metric_catalog.series_rules import attribute_bound
from metric_catalog.tee import tee_metrics
from metric_catalog.vocabulary import (
    OVERFLOW_ATTRIBUTE,
    MetricAttribute,
    RecordedMetric,
    TeedMetric,
)
from tests.otel_fixtures import caught_warnings, clean_otel, collect, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

ERROR_TYPE = MetricAttribute(
    "rl.error.type", values=("timeout", "oom"), max_cardinality=2, open_enum=True
)
CLOSED = MetricAttribute("rl.error.type", values=("timeout", "oom"))
OVERFLOW = {OVERFLOW_ATTRIBUTE: "true"}


def _points(attribute: MetricAttribute) -> SeriesPoints:
    """A series of ``attribute`` and an unbounded ``rank``: its set budget is the default,
    so only the attribute's own budget folds values."""
    rank = MetricAttribute("rank", "int")
    return SeriesPoints(RecordedMetric("rl.errors", "counter", attributes=(attribute, rank)), {})


def test_an_open_enum_takes_values_it_does_not_list_and_a_closed_one_drops_them() -> None:
    assert ERROR_TYPE.accepts("disk_full")
    assert not ERROR_TYPE.accepts(3)  # still of its type
    assert not CLOSED.accepts("disk_full")
    with caught_warnings() as caught:
        assert _points(ERROR_TYPE).attributes({"rl.error.type": "disk_full"}) == {
            "rl.error.type": "disk_full"
        }
        assert _points(CLOSED).attributes({"rl.error.type": "disk_full"}) is None
    assert len(caught.messages) == 1
    assert "allows values one of 'timeout', 'oom'" in caught.messages[0]


def test_only_values_it_does_not_list_count_against_an_open_enums_budget() -> None:
    points = _points(ERROR_TYPE)
    with caught_warnings() as caught:
        got = [
            points.attributes({"rl.error.type": value})
            for value in ("timeout", "disk_full", "oom", "eof", "reset", "timeout", "eof")
        ]
    assert got == [
        {"rl.error.type": "timeout"},
        {"rl.error.type": "disk_full"},
        {"rl.error.type": "oom"},  # a listed value: free, though two others came before
        {"rl.error.type": "eof"},
        OVERFLOW,  # a third other value: past the budget of 2
        {"rl.error.type": "timeout"},
        {"rl.error.type": "eof"},
    ]
    (warning,) = caught.messages
    assert "reached its max_cardinality of 2 values" in warning


@pytest.mark.parametrize(
    ("attribute", "bound", "limit"),
    [
        (ERROR_TYPE, 4, 6),  # 2 listed + 2 others; absent or one of 4, plus the overflow
        (CLOSED, 2, 4),
        (MetricAttribute("rl.dataset", max_cardinality=4), 4, 6),
    ],
)
def test_an_open_enums_bound_is_its_values_plus_its_budget(
    attribute: MetricAttribute, bound: int, limit: int
) -> None:
    assert (
        attribute_bound(
            len(attribute.values), attribute.max_cardinality, open_enum=attribute.open_enum
        )
        == bound
    )
    assert series_limit(RecordedMetric("rl.x", attributes=(attribute,))) == limit


@pytest.mark.parametrize(
    "fields",
    [
        {"max_cardinality": 2},  # no listed values: an open set, say so without open_enum
        {"values": ("a",)},  # no budget of others
        {"values": (True,), "max_cardinality": 2, "type": "bool"},
        {"values": ("a",), "max_cardinality": 2, "open_enum": "yes"},
    ],
)
def test_an_open_enum_needs_listed_values_and_a_budget(fields: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="open_enum must be a bool, and True only on an enum"):
        MetricAttribute("rl.a", open_enum=fields.pop("open_enum", True), **fields)  # type: ignore[arg-type]


def test_a_key_family_captures_an_open_enums_other_values(clean_otel: None) -> None:
    row = TeedMetric("errors/{rl.error.type}", "rl.errors", "counter", attributes=(ERROR_TYPE,))
    vocabulary.register_teed_metrics((row,))
    with installed_reader() as reader, caught_warnings() as caught:
        tee_metrics({"errors/disk_full": 1.0, "errors/timeout": 2.0}, "train")
        series = collect(reader)["rl.errors"]
    values = {dict(point.attributes)["rl.error.type"] for point in series.points}
    assert values == {"disk_full", "timeout"}
    assert caught.messages == []
