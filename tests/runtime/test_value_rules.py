"""What a value may be: ranges, integers, unit defaults (metric_catalog.value_rules)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from metric_catalog.value_rules import ValueRange, implied_range, parse_bound

UNIT = ValueRange(0.0, 1.0)


@pytest.mark.parametrize(
    ("bounds", "value", "expected"),
    [
        (UNIT, 0.0, None),
        (UNIT, 1.0, None),
        (UNIT, 38.2, "out_of_range"),
        (UNIT, -0.01, "out_of_range"),
        (ValueRange(0.0, 1.0, low_open=True), 0.0, "out_of_range"),
        (ValueRange(0.0, 1.0, high_open=True), 1.0, "out_of_range"),
        (ValueRange(0.0, 1.0, high_open=True), 0.999, None),
        (ValueRange(integer=True), 3.0, None),
        (ValueRange(integer=True), 3.5, "not_integer"),
        (ValueRange(0.0, integer=True), -2.0, "out_of_range"),
        (ValueRange(), -1e300, None),
    ],
)
def test_a_value_is_judged_against_bounds_and_integers(
    bounds: ValueRange, value: float, expected: str | None
) -> None:
    assert bounds.judge(value) == expected
    assert bounds.contains(value) is (expected is None)


@pytest.mark.parametrize(
    ("unit", "expected"),
    [
        ("%", ValueRange(0.0, 100.0)),
        ("s", ValueRange(0.0)),
        ("ms", ValueRange(0.0)),
        ("GiBy", ValueRange(0.0)),
        ("By", ValueRange(0.0, integer=True)),  # 38.5 "By" is a GiB value: not_integer
        ("bit", ValueRange(0.0, integer=True)),
        ("By/s", ValueRange(0.0)),
        ("{token}", ValueRange(0.0)),
        ("{token}/s", ValueRange(0.0)),
        ("10*12{FLOP}/s", ValueRange(0.0)),
        ("1", None),
        ("", None),
        ("Cel", None),
    ],
)
def test_a_unit_implies_its_obvious_range(unit: str, expected: ValueRange | None) -> None:
    assert implied_range(unit) == expected
    assert implied_range(unit, "histogram") == expected


@pytest.mark.parametrize("kind", ["counter", "up_down_counter"])
def test_a_counters_logged_change_takes_no_default_range(kind: str) -> None:
    # an up-down counter of memory logs -10 By when memory is freed
    assert implied_range("By", kind) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [("0", 0.0), ("-1.5", -1.5), ("1e-6", 1e-6), (" 2 ", 2.0), ("nan", None), ("inf", None),
     ("-Infinity", None), ("zero", None), ("", None), ("0x10", None), ("1e999", None)],
)  # fmt: skip
def test_a_bound_is_a_finite_number_as_written(text: str, expected: float | None) -> None:
    assert parse_bound(text) == expected


@pytest.mark.parametrize(
    ("bounds", "text"),
    [
        (UNIT, "[0, 1]"),
        (ValueRange(0.0, low_open=True), "(0, +inf)"),
        (ValueRange(high=1.0, high_open=True), "(-inf, 1)"),
        (ValueRange(0.0, integer=True), "integers in [0, +inf)"),
    ],
)
def test_a_range_reads_in_interval_notation(bounds: ValueRange, text: str) -> None:
    assert bounds.text() == text


def test_a_range_is_immutable_and_compared_by_what_it_declares() -> None:
    with pytest.raises(AttributeError, match="immutable"):
        UNIT.low = 3.0  # type: ignore[misc]
    assert ValueRange(0.0, 1.0) == UNIT
    assert len({ValueRange(0.0, 1.0), UNIT}) == 1


finite = st.floats(-1e9, 1e9, allow_nan=False)


@given(finite, finite, st.tuples(st.booleans(), st.booleans(), st.booleans()), st.floats(0, 1))
def test_a_sample_always_lies_inside_its_range(
    a: float, b: float, flags: tuple[bool, bool, bool], fraction: float
) -> None:
    low, high = sorted((math.floor(a), math.floor(b) + 3))
    high = max(high, low + 3)  # [2, 2) holds no value: keep the range non-empty
    low_open, high_open, integer = flags
    bounds = ValueRange(low, high, low_open=low_open, high_open=high_open, integer=integer)
    assert bounds.contains(bounds.sample(fraction))


@given(finite, finite, finite)
def test_covers_agrees_with_containment_of_values(a: float, b: float, value: float) -> None:
    low, high = sorted((a, b))
    wide, narrow = ValueRange(low - 1, high + 1), ValueRange(low, high)
    assert wide.covers(narrow)
    if narrow.contains(value):
        assert wide.contains(value)
    assert not narrow.covers(ValueRange()) or narrow == ValueRange()


def test_scaling_moves_bounds_into_the_exported_unit() -> None:
    assert ValueRange(0.0, 500.0).scaled(1e-3) == ValueRange(0.0, 0.5)
    assert ValueRange(1.0, integer=True).scaled(0.5).integer is False
