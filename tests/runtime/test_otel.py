"""The metric group: specs from the registry, one instrument per row, freezing, lazy SDK."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
import textwrap
import threading
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from metric_catalog import exporters, otel, vocabulary
from metric_catalog.otel import (
    MetricSpec,
    ensure_metric_group_registered,
    histogram_boundaries,
    metric_specs,
)
from metric_catalog.tee import record_metrics, tee_metrics
from metric_catalog.vocabulary import RecordedMetric, TeedMetric
from tests.otel_fixtures import (
    SAMPLE_RECORDED,
    SAMPLE_TEED,
    caught_warnings,
    clean_otel,
    collect,
    otel_reader,
    register_samples,
)

__all__ = ["clean_otel", "otel_reader"]  # fixtures used by name


def test_metric_specs_list_teed_rows_then_recorded_rows(clean_otel: None) -> None:
    register_samples()
    specs = metric_specs()
    assert [s.name for s in specs] == [r.name for r in (*SAMPLE_TEED, *SAMPLE_RECORDED)]
    assert specs[0] == MetricSpec("policy_loss", "rl.policy.loss", "gauge", "", "Training loss")


@pytest.mark.parametrize(
    ("logger_key", "prefix", "raw", "name", "unit", "expected"),
    [
        ("loss", "train", 0.25, "rl.policy.loss", "", 0.25),
        ("global_valid_toks", "train", 512, "rl.train.valid_tokens", "{token}", 512.0),
        ("kl", "train", -0.5, "rl.kl.divergence", "1", -0.5),
        ("generation", "timing/train", 2.5, "rl.generation.duration", "s", 2.5),
        ("efficiency/total_s", "", 7.0, "rl.efficiency.total", "s", 7.0),
    ],
    ids=["gauge", "counter", "up_down_counter", "histogram", "empty-prefix-gauge"],
)
def test_each_kind_arrives_with_value_unit_and_description(
    otel_reader: InMemoryMetricReader,
    logger_key: str,
    prefix: str,
    raw: float,
    *,
    name: str,
    unit: str,
    expected: float,
) -> None:
    tee_metrics({logger_key: raw}, prefix)
    series = collect(otel_reader)
    assert set(series) == {name}
    row = next(r for r in SAMPLE_TEED if r.name == name)
    assert (series[name].unit, series[name].description) == (unit, row.description)
    assert series[name].value == expected


def test_counters_accumulate_per_step_deltas_and_gauges_keep_the_last_value(
    otel_reader: InMemoryMetricReader,
) -> None:
    for step in range(1, 4):
        tee_metrics({"global_valid_toks": 100, "loss": 1.0 / step}, "train")
    series = collect(otel_reader)
    assert series["rl.train.valid_tokens"].value == 300.0
    assert series["rl.policy.loss"].value == pytest.approx(1 / 3)


def test_histogram_uses_the_unit_specific_bucket_boundaries(
    otel_reader: InMemoryMetricReader,
) -> None:
    tee_metrics({"generation": 0.3}, "timing/train")
    record_metrics({"vllm_batch_duration": 0.02})
    series = collect(otel_reader)
    for name in ("rl.generation.duration", "rl.vllm.batch.duration"):
        (point,) = series[name].points
        assert tuple(point.explicit_bounds) == histogram_boundaries("s")
        assert point.count == 1


@pytest.mark.parametrize(
    ("unit", "must_cover"),
    [
        ("s", (0.001, 0.5, 60.0, 3600.0)),
        ("ms", (1.0, 500.0, 60_000.0)),
        ("1", (0.0, 0.5, 1.0)),
        ("%", (0.0, 50.0, 100.0)),
        ("By", (1024.0, 1024.0**3)),
        ("{token}", (1.0, 1000.0, 1e7)),
        ("{token}/s", (1.0, 1e6)),
        ("", (1e-4, 1.0, 1e6)),
    ],
)
def test_histogram_boundaries_suit_the_unit(unit: str, must_cover: tuple[float, ...]) -> None:
    bounds = histogram_boundaries(unit)
    for value in must_cover:
        assert bounds[0] <= value <= bounds[-1]
    if unit == "1":
        assert (bounds[0], bounds[-1]) == (0.0, 1.0)


@given(st.text(max_size=12))
def test_histogram_boundaries_are_finite_and_strictly_increasing(unit: str) -> None:
    bounds = histogram_boundaries(unit)
    assert all(math.isfinite(b) for b in bounds)
    assert all(a < b for a, b in itertools.pairwise(bounds))


def test_first_tee_freezes_the_registry_and_a_late_row_raises(
    otel_reader: InMemoryMetricReader,
) -> None:
    assert not vocabulary.is_frozen()
    tee_metrics({"loss": 1.0}, "train")
    assert vocabulary.is_frozen()
    with pytest.raises(RuntimeError, match="after the metric group was registered"):
        vocabulary.register_teed_metrics([TeedMetric("late", "rl.late.metric")])
    with pytest.raises(RuntimeError, match="after the metric group was registered"):
        vocabulary.register_recorded_metrics([RecordedMetric("rl.late.recorded")])
    assert collect(otel_reader)["rl.policy.loss"].value == 1.0


def test_first_tee_freezes_even_with_export_disabled(clean_otel: None) -> None:
    register_samples()
    tee_metrics({"loss": 1.0}, "train")
    assert vocabulary.is_frozen()
    assert exporters.get_meter_provider() is None
    assert not ensure_metric_group_registered().enabled
    with pytest.raises(RuntimeError):
        vocabulary.register_teed_metrics([TeedMetric("late", "rl.late.metric")])


def test_group_is_built_once_under_concurrent_first_use(clean_otel: None) -> None:
    register_samples()
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader], shutdown_on_exit=False)
    exporters.configure(meter_provider=provider)
    barrier = threading.Barrier(8)
    groups: list[otel.MetricGroup] = []

    def first_use() -> None:
        barrier.wait()
        groups.append(ensure_metric_group_registered())

    threads = [threading.Thread(target=first_use) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(g) for g in groups}) == 1
    group = groups[0]
    assert group.enabled
    assert set(group.instruments) == {r.key for r in (*SAMPLE_TEED, *SAMPLE_RECORDED)}
    assert [e[0] for e in group.tee_tables["train"].entries] == [
        "loss",
        "reward",
        "global_valid_toks",
        "kl",
    ]
    provider.shutdown()


def test_configure_with_a_new_provider_rebuilds_the_instruments(clean_otel: None) -> None:
    register_samples()
    readers = [InMemoryMetricReader(), InMemoryMetricReader()]
    providers = [MeterProvider(metric_readers=[r], shutdown_on_exit=False) for r in readers]
    exporters.configure(meter_provider=providers[0])
    tee_metrics({"loss": 1.0}, "train")
    exporters.configure(meter_provider=providers[1])
    tee_metrics({"loss": 2.0}, "train")
    assert collect(readers[0])["rl.policy.loss"].value == 1.0
    assert collect(readers[1])["rl.policy.loss"].value == 2.0
    for provider in providers:
        provider.shutdown()


class _BrokenProvider:
    def get_meter(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("meter unavailable")


def test_instrument_setup_failure_is_warned_once_and_the_tee_becomes_a_no_op(
    clean_otel: None,
) -> None:
    register_samples()
    exporters.configure(meter_provider=_BrokenProvider())  # type: ignore[arg-type]
    with caught_warnings() as caught:
        tee_metrics({"loss": 1.0}, "train")
        tee_metrics({"loss": 2.0}, "train")
    assert len(caught.messages) == 1
    assert "meter unavailable" in caught.messages[0]
    assert not ensure_metric_group_registered().enabled


def _run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": "src:.", **env},
    )


def test_importing_the_runtime_modules_does_not_import_opentelemetry() -> None:
    result = _run(
        """
        import sys
        import metric_catalog, metric_catalog.vocabulary, metric_catalog.otel
        import metric_catalog.tee, metric_catalog.loggers, metric_catalog.exporters
        heavy = ("opentelemetry", "prometheus_client")
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in heavy)
        print(loaded)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_missing_sdk_disables_export_with_one_warning_and_never_raises() -> None:
    result = _run(
        """
        import sys, warnings
        sys.modules["opentelemetry"] = None  # as if the otel extra were not installed
        warnings.simplefilter("always")
        from metric_catalog import vocabulary, exporters
        from metric_catalog.tee import tee_metrics
        vocabulary.register_teed_metrics([vocabulary.TeedMetric("loss", "rl.policy.loss")])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for step in range(3):
                tee_metrics({"loss": 1.0}, "train")
        print(len(caught), exporters.get_meter_provider(), vocabulary.is_frozen())
        print(caught[0].message)
        """,
        OTEL_METRICS_EXPORTER="prometheus",
        METRIC_CATALOG_PROMETHEUS_PORT="0",
    )
    assert result.returncode == 0, result.stderr
    first, message = result.stdout.strip().splitlines()
    assert first == "1 None True"
    assert "metric export disabled" in message
    assert "ModuleNotFoundError" in message
