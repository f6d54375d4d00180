"""NaN and the infinities through the tee: a gauge exports them, ``non_finite="allowed"``
silences the warning, other kinds skip them; and ``metric_catalog.testing`` agrees."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from metric_catalog import otel, vocabulary
from metric_catalog.tee import tee_metrics
from metric_catalog.testing import MetricCapture
from metric_catalog.vocabulary import TeedMetric
from tests.otel_fixtures import caught_warnings, clean_otel, collect, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

ROWS = (
    TeedMetric("grad_norm", "rl.grad.norm", "gauge", "1", "Gradient norm.", non_finite="allowed"),
    TeedMetric("loss", "rl.policy.loss", "gauge", "1", "Training loss."),
    TeedMetric("skipped", "rl.skipped.steps", "counter", "{step}", "Skipped steps.",
               non_finite="allowed"),
    TeedMetric("tokens", "rl.tokens", "counter", "{token}", "Tokens."),
)  # fmt: skip


@pytest.fixture
def reader(clean_otel: None) -> Iterator[InMemoryMetricReader]:
    vocabulary.register_teed_metrics(ROWS)
    with installed_reader() as memory:
        yield memory


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan], ids=repr)
def test_an_allowed_gauge_exports_a_non_finite_value_without_a_warning(
    reader: InMemoryMetricReader, value: float
) -> None:
    with caught_warnings() as caught:
        tee_metrics({"grad_norm": 1.5}, "train")
        tee_metrics({"grad_norm": value}, "train")
    assert caught.messages == []
    assert collect(reader)["rl.grad.norm"].value == pytest.approx(value, nan_ok=True)


def test_a_reported_gauge_exports_a_non_finite_value_and_warns_once(
    reader: InMemoryMetricReader,
) -> None:
    with caught_warnings() as caught:
        for _ in range(3):
            tee_metrics({"loss": math.nan}, "train")
    assert len(caught.messages) == 1
    assert "non_finite: allowed" in caught.messages[0]
    assert math.isnan(collect(reader)["rl.policy.loss"].value)


def test_a_counter_skips_non_finite_values_quietly_only_when_allowed(
    reader: InMemoryMetricReader,
) -> None:
    with caught_warnings() as caught:
        tee_metrics({"skipped": 1.0, "tokens": 4.0}, "train")
        tee_metrics({"skipped": math.inf, "tokens": math.nan}, "train")
    series = collect(reader)
    assert (series["rl.skipped.steps"].value, series["rl.tokens"].value) == (1.0, 4.0)
    assert len(caught.messages) == 1
    assert "'train/tokens'" in caught.messages[0]
    assert "takes only finite values" in caught.messages[0]


def test_a_recorder_that_is_no_sdk_gauge_is_refused(reader: InMemoryMetricReader) -> None:
    """The tee warns once (as for any recording error) and skips the value."""

    def not_an_sdk_gauge(value: float, attributes: object = None) -> None:
        del value, attributes

    with pytest.raises(TypeError, match="not an OpenTelemetry SDK gauge"):
        otel.non_finite_recorder(not_an_sdk_gauge)


def test_a_bad_non_finite_setting_is_refused_at_declaration() -> None:
    with pytest.raises(ValueError, match="non_finite 'sometimes' is not one of"):
        TeedMetric("loss", "rl.policy.loss", non_finite="sometimes")


@settings(
    max_examples=50, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    steps=st.lists(
        st.one_of(st.floats(width=64), st.just(math.inf), st.just(-math.inf)),
        min_size=1,
        max_size=6,
    )
)
def test_an_allowed_gauge_holds_the_last_value_logged_whatever_it_is(
    reader: InMemoryMetricReader, steps: list[float]
) -> None:
    with caught_warnings() as caught:
        for value in steps:
            tee_metrics({"grad_norm": value}, "train")
    assert caught.messages == []
    assert collect(reader)["rl.grad.norm"].value == pytest.approx(steps[-1], nan_ok=True)


def test_a_capture_reports_non_finite_points_unless_the_row_allows_them(clean_otel: None) -> None:
    vocabulary.register_teed_metrics(ROWS)
    with caught_warnings(), MetricCapture() as captured:
        tee_metrics({"grad_norm": math.inf, "loss": math.nan}, "train")
    report = captured.check()
    assert [(f.kind, f.series) for f in report.findings] == [("non_finite", "rl.policy.loss")]
