"""Whatever it is fed, the tee never raises into training code and remembers a bounded amount."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from metric_catalog import _warn, exporters, otel, vocabulary
from metric_catalog._attributes import KEY_CACHE_LIMIT, RUNTIME_PREFIX_KEY_CACHE_LIMIT
from metric_catalog._warn import FAMILY_LIMIT
from metric_catalog.tee import record_metrics, tee_metrics
from metric_catalog.vocabulary import MetricAttribute, RecordedMetric, TeedMetric
from tests.otel_fixtures import caught_warnings, clean_otel, collect, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

DATASET = MetricAttribute("rl.dataset")
PHASE = MetricAttribute("rl.setup.phase", values=("policy", "vllm"))
ROWS = (
    TeedMetric("reward", "rl.reward.mean"),
    TeedMetric("setup/{rl.setup.phase}_time_s", "rl.setup.duration", unit="s", attributes=(PHASE,)),
    TeedMetric(
        "accuracy", "rl.val.accuracy", prefix="validation-{rl.dataset}", attributes=(DATASET,)
    ),
)
RECORDED = (RecordedMetric("rl.queue.depth"), RecordedMetric("rl.batch.size"))


@pytest.fixture
def reader(clean_otel: None) -> Iterator[InMemoryMetricReader]:
    """The rows above registered, a provider with an in-memory reader installed."""
    vocabulary.register_teed_metrics(ROWS)
    vocabulary.register_recorded_metrics(RECORDED)
    with installed_reader() as memory:
        yield memory


def _value(reader: InMemoryMetricReader, name: str) -> float | None:
    series = collect(reader).get(name)
    return None if series is None else series.value


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("odd_key", [7, 2.5, None, ("a", "b"), b"setup/policy_time_s"])
def test_a_non_string_key_costs_nothing_but_itself(
    reader: InMemoryMetricReader, strict: bool, odd_key: Any
) -> None:
    """A key that is not a str, under a prefix with key patterns, is skipped; the rest is teed."""
    metrics = {"reward": 1.0, odd_key: 2.0, "setup/policy_time_s": 3.0}
    with caught_warnings() as caught:
        tee_metrics(metrics, "train", strict=strict)
    assert _value(reader, "rl.reward.mean") == 1.0
    assert _value(reader, "rl.setup.duration") == 3.0
    assert not [m for m in caught.messages if "failed" in m]


def test_a_failing_group_build_disables_export_instead_of_raising(
    clean_otel: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Anything failing while the group is built (not only the SDK) yields a disabled group."""
    vocabulary.register_teed_metrics(ROWS)
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader], shutdown_on_exit=False)
    exporters.configure(meter_provider=provider)

    def _broken(*_: object) -> None:
        raise RuntimeError("cannot compile")

    monkeypatch.setattr(otel, "compile_template", _broken)
    try:
        with caught_warnings() as caught:
            group = otel.ensure_metric_group_registered()
            tee_metrics({"reward": 1.0}, "train")
            tee_metrics({"reward": 1.0}, "train")
        assert not group.enabled
        assert otel._GROUP is group  # built once: the failure is not retried every step
        assert [m for m in caught.messages if "cannot compile" in m] == [caught.messages[0]]
        assert len(caught.messages) == 1
        assert vocabulary.is_frozen()
    finally:
        exporters.reset_for_tests()
        provider.shutdown()


def test_a_recorded_row_without_an_instrument_does_not_cost_the_others(
    reader: InMemoryMetricReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row refused its instrument (another kind already holds the name) is skipped alone."""
    record_metrics({"queue_depth": 1.0})
    monkeypatch.setattr(vocabulary, "_REGISTERED", {})
    monkeypatch.setattr(vocabulary, "_RECORDED", {})
    monkeypatch.setattr(vocabulary, "_FROZEN", False)
    vocabulary.register_recorded_metrics(
        [RecordedMetric("rl.queue.depth", "counter"), RecordedMetric("rl.batch.size")]
    )
    with caught_warnings() as caught:
        record_metrics({"queue_depth": 5.0, "batch_size": 8.0})
    assert _value(reader, "rl.batch.size") == 8.0
    assert _value(reader, "rl.queue.depth") == 1.0
    assert not [m for m in caught.messages if "record_metrics failed" in m]


def test_bad_values_under_many_run_time_prefixes_keep_warnings_bounded(
    reader: InMemoryMetricReader,
) -> None:
    """A prefix pattern admits prefixes without end; their causes warn a bounded number of times."""
    with caught_warnings() as caught:
        for i in range(3 * FAMILY_LIMIT):
            tee_metrics({"accuracy": float("nan")}, f"validation-set{i}")
    assert len(caught.messages) <= FAMILY_LIMIT + 1
    assert len(_warn._SEEN) <= FAMILY_LIMIT + 5


def test_a_failing_tee_under_many_prefixes_keeps_warnings_bounded(
    reader: InMemoryMetricReader,
) -> None:
    """Metrics that are not a mapping, under a new run-time prefix every step: bounded warnings."""
    bad: Any = ["not", "a", "mapping"]
    with caught_warnings() as caught:
        for i in range(3 * FAMILY_LIMIT):
            tee_metrics(bad, f"validation-set{i}")
    assert 1 <= len(caught.messages) <= FAMILY_LIMIT + 1
    assert len(_warn._SEEN) <= FAMILY_LIMIT + 5


def test_key_caches_of_run_time_prefixes_stay_small(reader: InMemoryMetricReader) -> None:
    """A key family under a prefix pattern: each run-time prefix remembers few keys.

    Up to 1024 run-time prefixes keep a plan; each remembers at most
    ``RUNTIME_PREFIX_KEY_CACHE_LIMIT`` logged keys, not ``KEY_CACHE_LIMIT``.
    """
    bucket = MetricAttribute("rl.bucket", values=("gen", "train"))
    vocabulary.register_teed_metrics(
        [
            TeedMetric(
                "loss/{rl.bucket}",
                "rl.val.loss",
                prefix="validation-{rl.dataset}",
                attributes=(DATASET, bucket),
            )
        ]
    )
    keys = {f"other/{i}": 1.0 for i in range(RUNTIME_PREFIX_KEY_CACHE_LIMIT + 300)}
    keys["loss/gen"] = 2.0
    for dataset in ("a", "b"):
        tee_metrics(keys, f"validation-{dataset}")
        plan = otel.ensure_metric_group_registered().plan(f"validation-{dataset}")
        assert plan is not None
        assert plan.patterns is not None
        assert len(plan.patterns.cache) == RUNTIME_PREFIX_KEY_CACHE_LIMIT
    assert RUNTIME_PREFIX_KEY_CACHE_LIMIT < KEY_CACHE_LIMIT
    points = collect(reader)["rl.val.loss"].points
    assert {p.attributes["rl.dataset"] for p in points} == {"a", "b"}
