"""Units as the code logs them: the shared scale table, row validation and the tee's scaling."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from metric_catalog import vocabulary
from metric_catalog.series_rules import POWER_OF_TEN_LIMIT, UNIT_SCALES, scale_value, unit_scale
from metric_catalog.tee import record_metrics, tee_metrics
from metric_catalog.vocabulary import RecordedMetric, TeedMetric
from tests.otel_fixtures import caught_warnings, clean_otel, collect, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

_FINITE = st.floats(allow_nan=False, allow_infinity=False)


@pytest.mark.parametrize(
    ("unit", "expected"),
    [
        ("ms", ("s", 1, 1000)),
        ("us", ("s", 1, 10**6)),
        ("ns", ("s", 1, 10**9)),
        ("min", ("s", 60, 1)),
        ("h", ("s", 3600, 1)),
        ("d", ("s", 86400, 1)),
        ("KiBy", ("By", 1024, 1)),
        ("GiBy", ("By", 2**30, 1)),
        ("kBy", ("By", 1000, 1)),
        ("TBy", ("By", 10**12, 1)),
        ("Mbit", ("bit", 10**6, 1)),
        ("s", ("s", 1, 1)),
        ("{token}", ("{token}", 1, 1)),
        ("", ("", 1, 1)),
        ("ms/{token}", ("s/{token}", 1, 1000)),
        ("{token}/ms", ("{token}/s", 1000, 1)),
        ("{token.ms}/s", ("{token.ms}/s", 1, 1)),
        ("KiBy/ms", ("By/s", 1024000, 1)),
        # UCUM powers of ten: what UCUM writes for a prefixed count (TFLOP/s).
        ("10*12{FLOP}/s", ("{FLOP}/s", 10**12, 1)),
        ("10^12{FLOP}/s", ("{FLOP}/s", 10**12, 1)),
        ("10*+6{token}", ("{token}", 10**6, 1)),
        ("10*-3{token}/s", ("{token}/s", 1, 1000)),
        ("10*3", ("1", 1000, 1)),
        ("10*12{FLOP}/ms", ("{FLOP}/s", 10**15, 1)),
        # Not a power the tee scales: left as written (UNIT_NOT_UCUM refuses them).
        ("10*19{FLOP}", ("10*19{FLOP}", 1, 1)),
        ("10*0{FLOP}", ("10*0{FLOP}", 1, 1)),
        ("10*12{a}{b}", ("10*12{a}{b}", 1, 1)),
        ("10*x{a}", ("10*x{a}", 1, 1)),
    ],
)
def test_unit_scale_gives_the_exported_unit_and_the_exact_factor(
    unit: str, expected: tuple[str, int, int]
) -> None:
    assert unit_scale(unit) == expected


def test_every_table_entry_is_a_prefixed_unit_of_an_unprefixed_base() -> None:
    for unit, (base, numerator, denominator) in UNIT_SCALES.items():
        assert base in {"s", "By", "bit"}, unit
        assert base not in UNIT_SCALES
        assert 1 in (numerator, denominator), unit
        assert max(numerator, denominator) < 2**53, unit  # exact as a float


@given(_FINITE, st.sampled_from(sorted(UNIT_SCALES)))
def test_scaling_rounds_the_exact_product_once(value: float, unit: str) -> None:
    _, numerator, denominator = unit_scale(unit)
    scaled = scale_value(value, numerator, denominator)
    exact = Fraction(value) * numerator / denominator
    try:
        expected = float(exact)
    except OverflowError:
        expected = float("inf") if exact > 0 else float("-inf")
    assert scaled == expected


@given(_FINITE, st.integers(2, 10**6), st.integers(2, 10**6))
def test_scaling_by_any_ratio_is_correctly_rounded(
    value: float, numerator: int, denominator: int
) -> None:
    exact = Fraction(value) * numerator / denominator
    try:
        expected = float(exact)
    except OverflowError:
        expected = float("inf") if exact > 0 else float("-inf")
    assert scale_value(value, numerator, denominator) == expected


@given(_FINITE, st.integers(-POWER_OF_TEN_LIMIT, POWER_OF_TEN_LIMIT).filter(bool))
def test_a_power_of_ten_scales_exactly(value: float, exponent: int) -> None:
    """``10*N{FLOP}``: the factor is exactly 10^N, and the scaled value correctly rounded."""
    base, numerator, denominator = unit_scale(f"10*{exponent}{{FLOP}}")
    assert base == "{FLOP}"
    assert Fraction(numerator, denominator) == Fraction(10) ** exponent
    assert float(max(numerator, denominator)) == max(numerator, denominator)  # exact as a float
    exact = Fraction(value) * numerator / denominator
    try:
        expected = float(exact)
    except OverflowError:
        expected = float("inf") if exact > 0 else float("-inf")
    assert scale_value(value, numerator, denominator) == expected


@given(_FINITE)
def test_milliseconds_divide_by_a_thousand_exactly(value: float) -> None:
    assert scale_value(value, *unit_scale("ms")[1:]) == float(Fraction(value) / 1000)


@pytest.mark.parametrize("row_class", [TeedMetric, RecordedMetric])
@pytest.mark.parametrize(
    ("unit", "logged_unit", "message"),
    [
        ("s", "GiBy", "exported in 'By', not in the row's unit 's'"),
        ("ms", "ms", "set unit='s'"),
        ("By", "ms", "exported in 's'"),
        ("s", 3, "logged_unit must be a str"),
        ("s", "m\ns", "logged_unit"),
    ],
)
def test_a_logged_unit_that_does_not_scale_to_the_unit_is_refused(
    row_class: type[TeedMetric] | type[RecordedMetric],
    unit: str,
    logged_unit: object,
    message: str,
) -> None:
    args = ("key", "rl.x") if row_class is TeedMetric else ("rl.x",)
    with pytest.raises(ValueError, match=r"logged_unit|exported") as raised:
        row_class(*args, unit=unit, logged_unit=logged_unit)  # type: ignore[arg-type]
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("unit", "logged_unit"),
    [
        ("s", "ms"),
        ("s", ""),
        ("s", "s"),
        ("By", "GiBy"),
        ("s/{token}", "ms/{token}"),
        ("{FLOP}/s", "10*12{FLOP}/s"),
    ],
)
def test_a_logged_unit_that_scales_to_the_unit_is_accepted(unit: str, logged_unit: str) -> None:
    assert TeedMetric("k", "rl.x", unit=unit, logged_unit=logged_unit).logged_unit == logged_unit


def test_logged_unit_follows_every_earlier_field_and_defaults_to_empty() -> None:
    row = TeedMetric("k", "rl.x", "gauge", "s", "d", "train")
    assert row.logged_unit == ""
    # Fields added later come after it: positional construction of every earlier one holds.
    recorded = [field.name for field in dataclasses.fields(RecordedMetric)]
    assert recorded[recorded.index("logged_unit") :] == [
        "logged_unit",
        "value_range",
        "goal",
        "namespace",
    ]
    names = [field.name for field in dataclasses.fields(TeedMetric)]
    assert names[names.index("logged_unit") :] == [
        "logged_unit",
        "emitted_by",
        "value_type",
        "value_range",
        "goal",
        "every",
        "first_step",
        "phase",
        "non_finite",
        "choice",
        "namespace",
    ]


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize(
    ("logged_unit", "unit", "raw", "expected"),
    [
        ("ms", "s", 1500.0, 1.5),
        ("ms", "s", 1500, 1.5),
        ("ms", "s", 0.1, 0.1 / 1000),
        ("min", "s", 2.5, 150.0),
        ("GiBy", "By", 1.5, 1.5 * 2**30),
        ("", "s", 1500.0, 1500.0),
        ("s", "s", 7.0, 7.0),
        ("10*12{FLOP}/s", "{FLOP}/s", 312.5, 312.5e12),  # torchtitan's tflops
    ],
)
def test_the_tee_records_the_value_in_the_exported_unit(
    logged_unit: str, unit: str, raw: float, expected: float
) -> None:
    vocabulary.register_teed_metrics(
        [TeedMetric("step_ms", "rl.step.time", "gauge", unit, "Step", logged_unit=logged_unit)]
    )
    with installed_reader() as reader:
        tee_metrics({"step_ms": raw}, "train")
        series = collect(reader)["rl.step.time"]
    assert series.unit == unit
    assert series.value == expected


@pytest.mark.usefixtures("clean_otel")
def test_record_metrics_scales_a_recorded_row_too() -> None:
    vocabulary.register_recorded_metrics(
        [RecordedMetric("rl.vllm.batch.duration", "histogram", "s", logged_unit="us")]
    )
    with installed_reader() as reader:
        record_metrics({"vllm_batch_duration": 250.0})
        series = collect(reader)["rl.vllm.batch.duration"]
    assert series.value == 250.0 / 10**6


@pytest.mark.usefixtures("clean_otel")
def test_a_value_that_overflows_when_scaled_is_skipped_and_warned_once() -> None:
    vocabulary.register_teed_metrics(
        [TeedMetric("mem", "rl.memory.peak", "gauge", "By", logged_unit="TiBy")]
    )
    with installed_reader() as reader, caught_warnings() as caught:
        tee_metrics({"mem": 1e300}, "train")
        tee_metrics({"mem": 1e300}, "train")
        tee_metrics({"mem": 2.0}, "train")
        series = collect(reader)["rl.memory.peak"]
    assert series.value == 2.0 * 2**40
    assert len([m for m in caught.messages if "beyond the float range" in m]) == 1
