"""tee_metrics and record_metrics: what gets recorded, and that nothing ever raises."""

from __future__ import annotations

import dataclasses
import logging
import math
import threading
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    InMemoryMetricReader,
    MetricExporter,
    MetricExportResult,
    MetricsData,
    PeriodicExportingMetricReader,
)

from metric_catalog import exporters, otel
from metric_catalog._warn import FAMILY_LIMIT, MetricCatalogWarning
from metric_catalog.tee import record_metrics, tee_metrics
from tests.otel_fixtures import caught_warnings, clean_otel, collect, otel_reader, register_samples

__all__ = ["clean_otel", "otel_reader"]  # fixtures used by name


class TensorStandIn:
    """Duck-types a 0-d torch tensor: ``.shape == ()`` and ``.item()``."""

    shape: tuple[int, ...] = ()

    def __init__(self, value: Any) -> None:
        self._value = value

    def item(self) -> Any:
        return self._value


class ExplodingItem:
    """A value whose conversion raises."""

    shape: tuple[int, ...] = ()

    def item(self) -> float:
        raise RuntimeError("device-side assert")


@pytest.mark.parametrize(
    ("raw", "expected", "warning"),
    [
        (0.5, 0.5, None),
        (3, 3.0, None),
        (np.float32(0.25), 0.25, None),
        (np.float64(1.5), 1.5, None),
        (np.int64(7), 7.0, None),
        (np.array(2.0), 2.0, None),
        (TensorStandIn(0.75), 0.75, None),
        # a gauge exports NaN and the infinities (its NonFinite alert fires), warned once
        (float("nan"), math.nan, "non-finite"),
        (float("inf"), math.inf, "non-finite"),
        (float("-inf"), -math.inf, "non-finite"),
        (np.float32("nan"), math.nan, "non-finite"),
        (True, None, "not a number"),
        (np.bool_(True), None, "not a number"),
        ("0.5", None, "not a number"),
        ([1.0, 2.0], None, "not a number"),
        (np.array([1.0, 2.0]), None, "not a number"),
        (TensorStandIn(True), None, "not a number"),
        (ExplodingItem(), None, "not a number"),
        (1 + 2j, None, "not a number"),
    ],
    ids=repr,
)
def test_odd_values_never_raise_and_only_scalars_are_recorded(
    otel_reader: InMemoryMetricReader, raw: Any, expected: float | None, warning: str | None
) -> None:
    with caught_warnings() as caught:
        tee_metrics({"loss": raw, "reward": 1.0}, "train")
    series = collect(otel_reader)
    assert series["rl.reward.mean"].value == 1.0  # the rest of the dict still goes through
    if expected is None:
        assert "rl.policy.loss" not in series
    else:
        assert series["rl.policy.loss"].value == pytest.approx(expected, nan_ok=True)
    if warning is None:
        assert caught.messages == []
    else:
        assert len(caught.messages) == 1
        assert warning in caught.messages[0]
        assert "'train/loss'" in caught.messages[0]


def test_a_none_value_is_skipped_without_a_warning(otel_reader: InMemoryMetricReader) -> None:
    # None is "no value this step" (HF Trainer's grad_norm without clipping): not a defect
    with caught_warnings() as caught:
        tee_metrics({"loss": None, "reward": 1.0}, "train")
        tee_metrics({"loss": None, "reward": 2.0}, "train")
    series = collect(otel_reader)
    assert "rl.policy.loss" not in series
    assert series["rl.reward.mean"].value == 2.0
    assert caught.messages == []


def test_each_cause_is_warned_once_per_key(otel_reader: InMemoryMetricReader) -> None:
    with caught_warnings() as caught:
        for _ in range(5):
            tee_metrics({"loss": math.nan, "reward": math.inf, "global_valid_toks": -3}, "train")
        tee_metrics({"loss": "bad"}, "train")  # another cause for the same key
        tee_metrics({"loss": 0.5, "reward": 0.25}, "train")
    assert len(caught.messages) == 4
    assert sum("'train/loss'" in m for m in caught.messages) == 2
    assert sum("'train/reward'" in m for m in caught.messages) == 1
    assert any("counter takes only non-negative" in m for m in caught.messages)
    series = collect(otel_reader)
    assert (series["rl.policy.loss"].value, series["rl.reward.mean"].value) == (0.5, 0.25)
    assert "rl.train.valid_tokens" not in series


@pytest.mark.parametrize(
    ("logger_key", "prefix", "name", "recorded"),
    [
        ("global_valid_toks", "train", "rl.train.valid_tokens", False),
        ("generation", "timing/train", "rl.generation.duration", False),
        ("kl", "train", "rl.kl.divergence", True),  # up_down_counter takes signed deltas
        ("loss", "train", "rl.policy.loss", True),  # gauges are signed
    ],
)
def test_negative_values_are_skipped_only_for_monotonic_kinds(
    otel_reader: InMemoryMetricReader, logger_key: str, prefix: str, name: str, recorded: bool
) -> None:
    with caught_warnings() as caught:
        tee_metrics({logger_key: -2.0, "reward": 1.0}, prefix)
        tee_metrics({"reward": 1.0}, "train")
    series = collect(otel_reader)
    assert (name in series) is recorded
    assert len(caught.messages) == (0 if recorded else 1)
    if recorded:
        assert series[name].value == -2.0


@pytest.mark.parametrize(
    ("prefix", "metrics", "expected"),
    [
        ("train", {"loss": 1.0, "accuracy": 0.5}, {"rl.policy.loss": 1.0}),
        ("validation", {"loss": 1.0, "accuracy": 0.5}, {"rl.validation.accuracy": 0.5}),
        ("timing/train", {"generation": 4.0, "loss": 1.0}, {"rl.generation.duration": 4.0}),
        ("", {"efficiency/total_s": 9.0, "loss": 1.0}, {"rl.efficiency.total": 9.0}),
        ("performance", {"loss": 1.0, "generation": 4.0}, {}),
        ("train/", {"loss": 1.0}, {}),
    ],
)
def test_rows_match_on_the_exact_prefix_and_key(
    otel_reader: InMemoryMetricReader,
    prefix: str,
    metrics: dict[str, float],
    expected: dict[str, float],
) -> None:
    tee_metrics(metrics, prefix)
    tee_metrics({"reward": 3.0}, "train")  # proves the tee is live even when nothing matched
    series = collect(otel_reader)
    assert {n: s.value for n, s in series.items() if n != "rl.reward.mean"} == expected
    assert series["rl.reward.mean"].value == 3.0


def test_attributes_label_the_points(otel_reader: InMemoryMetricReader) -> None:
    tee_metrics({"loss": 1.0}, "train", attributes={"rank": 0, "phase": "train"})
    tee_metrics({"loss": 2.0}, "train", attributes={"rank": 1, "phase": "train"})
    record_metrics({"vllm_queue_depth": 4}, attributes={"engine": "vllm-0"})
    series = collect(otel_reader)
    by_rank = {p.attributes["rank"]: p.value for p in series["rl.policy.loss"].points}
    assert by_rank == {0: 1.0, 1: 2.0}
    (point,) = series["rl.vllm.queue.depth"].points
    assert (dict(point.attributes), point.value) == ({"engine": "vllm-0"}, 4.0)


@pytest.mark.parametrize("via", ["argument", "env"])
def test_strict_mode_reports_undeclared_keys_under_teed_prefixes_once(
    otel_reader: InMemoryMetricReader, monkeypatch: pytest.MonkeyPatch, via: str
) -> None:
    strict: bool | None = True
    if via == "env":
        monkeypatch.setenv("METRIC_CATALOG_STRICT", "1")
        otel._invalidate_group()  # the env default is read when the group is built
        strict = None
    with caught_warnings() as caught:
        for _ in range(3):
            tee_metrics({"loss": 1.0, "lossy": 2.0}, "train", strict=strict)
        tee_metrics({"anything": 1.0}, "performance", strict=strict)  # no rows: not teed
    assert len(caught.messages) == 1
    assert "'train/lossy'" in caught.messages[0]
    assert collect(otel_reader)["rl.policy.loss"].value == 1.0


def test_strict_mode_goes_quiet_after_the_limit_of_distinct_undeclared_keys(
    otel_reader: InMemoryMetricReader,
) -> None:
    with caught_warnings() as caught:
        for step in range(FAMILY_LIMIT + 50):
            tee_metrics({"loss": float(step), f"reward_{step}": 1.0}, "train", strict=True)
    assert len(caught.messages) == FAMILY_LIMIT + 1
    assert "'train/reward_0'" in caught.messages[0]
    assert "further ones are not reported" in caught.messages[-1]
    assert collect(otel_reader)["rl.policy.loss"].value == FAMILY_LIMIT + 49


def test_strict_mode_is_off_by_default(otel_reader: InMemoryMetricReader) -> None:
    with caught_warnings() as caught:
        tee_metrics({"loss": 1.0, "lossy": 2.0}, "train")
    assert caught.messages == []
    assert collect(otel_reader)["rl.policy.loss"].value == 1.0


def test_strict_mode_works_without_an_exporter(clean_otel: None) -> None:
    register_samples()
    with caught_warnings() as caught:
        tee_metrics({"undeclared": 1.0}, "train", strict=True)
    assert len(caught.messages) == 1
    assert "'train/undeclared'" in caught.messages[0]


def test_concurrent_tees_from_eight_threads_lose_no_increment(
    otel_reader: InMemoryMetricReader,
) -> None:
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def worker(rank: int) -> None:
        try:
            barrier.wait()
            for step in range(200):
                tee_metrics({"global_valid_toks": 1, "loss": float(step)}, "train")
                tee_metrics({"global_valid_toks": math.nan}, "train", attributes={"rank": rank})
        except BaseException as exc:
            errors.append(exc)

    with caught_warnings() as caught:
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []
    assert len(caught.messages) == 1  # the NaN a counter skips, once across all threads
    series = collect(otel_reader)
    assert series["rl.train.valid_tokens"].value == 8 * 200
    assert series["rl.policy.loss"].value == 199.0


def test_an_sdk_error_on_one_key_is_warned_once_and_spares_the_others(
    otel_reader: InMemoryMetricReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    tee_metrics({"reward": 1.0}, "train")  # builds the group
    group = otel.ensure_metric_group_registered()

    def broken(value: float, attributes: Any = None) -> None:
        raise ValueError("instrument exploded")

    plan = group.tee_tables["train"]
    entries = tuple(
        (key, broken if key == "loss" else rec, *rest) for key, rec, *rest in plan.entries
    )
    monkeypatch.setitem(group.tee_tables, "train", dataclasses.replace(plan, entries=entries))
    with caught_warnings() as caught:
        for step in range(3):
            tee_metrics({"loss": 1.0, "reward": float(step)}, "train")
    assert len(caught.messages) == 1
    assert "instrument exploded" in caught.messages[0]
    assert "'train/loss'" in caught.messages[0]
    assert collect(otel_reader)["rl.reward.mean"].value == 2.0


class _FailingExporter(MetricExporter):
    def __init__(self, mode: str) -> None:
        super().__init__()
        self.mode = mode
        self.calls = 0

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        self.calls += 1
        if self.mode == "raise":
            raise ConnectionError("collector down")
        return MetricExportResult.FAILURE

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        return None


@pytest.mark.parametrize("mode", ["raise", "fail"])
def test_exporter_failure_never_reaches_the_caller(clean_otel: None, mode: str) -> None:
    register_samples()
    failing = _FailingExporter(mode)
    memory = InMemoryMetricReader()
    periodic = PeriodicExportingMetricReader(
        exporters._process_bound(failing, "test collector"), export_interval_millis=math.inf
    )
    provider = MeterProvider(metric_readers=[periodic, memory], shutdown_on_exit=False)
    exporters.configure(meter_provider=provider)
    with caught_warnings() as caught:
        for step in range(3):
            tee_metrics({"loss": float(step)}, "train")
            provider.force_flush()
    assert failing.calls == 3
    assert len(caught.messages) == 1
    assert "test collector" in caught.messages[0]
    assert collect(memory)["rl.policy.loss"].value == 2.0
    provider.shutdown()


def test_record_metrics_records_by_registry_key_and_warns_unknown_keys_once(
    otel_reader: InMemoryMetricReader,
) -> None:
    with caught_warnings() as caught:
        for depth in (1, 2, 3):
            record_metrics(
                {
                    "vllm_queue_depth": depth,
                    "vllm_batch_duration": 0.5,
                    "nope": 1.0,
                    "policy_loss": 1,
                }
            )
        record_metrics({"vllm_queue_depth": None, "vllm_batch_duration": math.nan})
    series = collect(otel_reader)
    assert series["rl.vllm.queue.depth"].value == 3.0
    (hist,) = series["rl.vllm.batch.duration"].points
    assert (hist.count, hist.sum) == (3, 1.5)
    assert "rl.policy.loss" not in series  # teed rows are not recordable by key
    assert len(caught.messages) == 3
    assert any("'nope'" in m and "declare a RecordedMetric" in m for m in caught.messages)
    assert any("'policy_loss'" in m and "teed row" in m for m in caught.messages)
    assert any("'vllm_batch_duration'" in m and "nan" in m for m in caught.messages)


@pytest.mark.parametrize(
    "bad_input",
    [None, 42, "loss", ["loss", 1.0], {("tuple", "key"): 1.0}],
    ids=repr,
)
def test_malformed_input_never_raises(otel_reader: InMemoryMetricReader, bad_input: Any) -> None:
    with caught_warnings():
        tee_metrics(bad_input, "train", strict=True)
        record_metrics(bad_input)
        tee_metrics({"loss": 5.0}, "train")
    assert collect(otel_reader)["rl.policy.loss"].value == 5.0


def test_warnings_promoted_to_errors_are_logged_instead_of_raised(
    otel_reader: InMemoryMetricReader, caplog: pytest.LogCaptureFixture
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", MetricCatalogWarning)
        with caplog.at_level(logging.WARNING, logger="metric_catalog"):
            tee_metrics({"loss": math.nan, "reward": 1.0}, "train")
    assert "'train/loss'" in caplog.text
    assert collect(otel_reader)["rl.reward.mean"].value == 1.0


def test_disabled_export_makes_the_tee_a_no_op(clean_otel: None) -> None:
    register_samples()
    with caught_warnings() as caught:
        tee_metrics({"loss": math.nan, "reward": "x"}, "train")
    assert caught.messages == []  # nothing is exported, so nothing is checked
    group = otel.ensure_metric_group_registered()
    assert not group.enabled
    assert group.instruments == {}
    assert all(plan.entries == () for plan in group.tee_tables.values())
    assert group.tee_tables["train"].plain >= {"loss", "reward"}  # strict mode still knows them


finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
values = st.one_of(finite, st.just(math.nan), st.just(math.inf), st.booleans(), st.text(max_size=3))


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(values, min_size=1, max_size=8))
def test_a_gauge_reports_the_last_number_whatever_was_logged(
    otel_reader: InMemoryMetricReader, steps: Sequence[Any]
) -> None:
    # Hypothesis reuses the fixture across examples, so each example gets its own reader.
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader], shutdown_on_exit=False)
    exporters.configure(meter_provider=provider)
    with caught_warnings():
        for value in steps:
            tee_metrics({"loss": value}, "train")
    # NaN and the infinities included: a gauge holding NaN is what its NonFinite alert reads
    usable = [v for v in steps if type(v) is float]
    series = collect(reader)
    provider.shutdown()
    if usable:
        assert series["rl.policy.loss"].value == pytest.approx(usable[-1], nan_ok=True)
    else:
        assert "rl.policy.loss" not in series
