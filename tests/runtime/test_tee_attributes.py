"""Attributes, cardinality budgets, key families, prefixes and identity in the tee."""

from __future__ import annotations

import math
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from metric_catalog import otel, vocabulary
from metric_catalog._attributes import KEY_CACHE_LIMIT, SeriesPoints, series_limit
from metric_catalog.series_rules import DEFAULT_CARDINALITY_LIMIT
from metric_catalog.tee import record_metrics, tee_metrics
from metric_catalog.vocabulary import (
    OVERFLOW_ATTRIBUTE,
    MetricAttribute,
    RecordedMetric,
    TeedMetric,
)
from tests.otel_fixtures import caught_warnings, clean_otel, collect, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

PHASE = MetricAttribute("rl.setup.phase", values=("policy", "vllm", "total"))
DATASET = MetricAttribute("rl.dataset")
BUCKET = MetricAttribute("rl.bucket", values=("gen", "train"))
RANK = MetricAttribute("rank", "int")

ROWS = (
    TeedMetric("reward", "rl.reward.mean", attributes=(BUCKET, RANK)),
    TeedMetric("lr", "rl.learning_rate", cardinality_limit=4, attributes=(RANK,)),
    TeedMetric("setup/{rl.setup.phase}_time_s", "rl.setup.duration", unit="s", attributes=(PHASE,)),
    TeedMetric("tokens/{rl.dataset}", "rl.tokens", attributes=(DATASET,), other_prefixes=("",)),
    TeedMetric(
        "accuracy", "rl.val.accuracy", prefix="validation-{rl.dataset}", attributes=(DATASET,)
    ),
    TeedMetric(
        "loss/{rl.bucket}",
        "rl.val.loss",
        prefix="validation-{rl.dataset}",
        attributes=(DATASET, BUCKET),
    ),
    TeedMetric("loss", "rl.policy.loss", other_prefixes=("",)),
    TeedMetric("grad", "rl.grad.old", replaced_by="rl.grad.norm"),
    TeedMetric("grad", "rl.grad.norm"),
)
RECORDED = (
    RecordedMetric("rl.batch.duration", "histogram", "s", attributes=(BUCKET,)),
    RecordedMetric("rl.queue.depth", attributes=(MetricAttribute("engine", max_cardinality=3),)),
)


@pytest.fixture
def reader(clean_otel: None) -> Iterator[InMemoryMetricReader]:
    """The rows above registered, a provider with an in-memory reader installed."""
    vocabulary.register_teed_metrics(ROWS)
    vocabulary.register_recorded_metrics(RECORDED)
    with installed_reader() as memory:
        yield memory


def points(reader: InMemoryMetricReader, name: str) -> dict[frozenset[tuple[str, Any]], float]:
    """Each point of ``name`` by its attribute set, gauge value or histogram count."""
    series = collect(reader).get(name)
    if series is None:
        return {}
    return {
        frozenset(dict(p.attributes or {}).items()): float(
            p.value if hasattr(p, "value") else p.count
        )
        for p in series.points
    }


def fs(**attrs: Any) -> frozenset[tuple[str, Any]]:
    return frozenset(attrs.items())


# --- declaration check --------------------------------------------------------------


def test_declared_attributes_label_the_points(reader: InMemoryMetricReader) -> None:
    tee_metrics({"reward": 1.0}, "train", attributes={"rl.bucket": "gen", "rank": 0})
    tee_metrics({"reward": 2.0}, "train", attributes={"rl.bucket": "train", "rank": 0})
    assert points(reader, "rl.reward.mean") == {
        fs(**{"rl.bucket": "gen", "rank": 0}): 1.0,
        fs(**{"rl.bucket": "train", "rank": 0}): 2.0,
    }


@pytest.mark.parametrize(
    ("attributes", "kept", "warning"),
    [
        (
            {"host": "a", "rank": 1},
            {"rank": 1},
            "attribute 'host' on rl.reward.mean is not declared",
        ),
        ({"rl.bucket": "eval"}, {}, "got 'eval', but the row allows values one of 'gen', 'train'"),
        ({"rank": "1"}, {}, "got '1', but the row allows values of type int"),
        ({"rank": True}, {}, "got True"),
        ({"rank": [1]}, {}, "got [1]"),
    ],
    ids=["undeclared key", "outside the enum", "wrong type", "bool for int", "unhashable"],
)
def test_bad_attributes_are_dropped_with_one_warning_per_cause(
    reader: InMemoryMetricReader, attributes: dict[str, Any], kept: dict[str, Any], warning: str
) -> None:
    with caught_warnings() as caught:
        for step in range(5):
            tee_metrics({"reward": float(step)}, "train", attributes=attributes)
    assert points(reader, "rl.reward.mean") == {fs(**kept): 4.0}
    assert len(caught.messages) == 1
    assert warning in caught.messages[0]


def test_record_metrics_checks_attributes_too(reader: InMemoryMetricReader) -> None:
    with caught_warnings() as caught:
        record_metrics({"batch_duration": 0.5}, attributes={"rl.bucket": "gen"})
        record_metrics({"batch_duration": 0.7}, attributes={"rl.bucket": "nope", "x": 1})
    assert points(reader, "rl.batch.duration") == {fs(**{"rl.bucket": "gen"}): 1.0, fs(): 1.0}
    assert len(caught.messages) == 2


# --- cardinality budget -------------------------------------------------------------


def test_past_the_budget_new_sets_go_to_one_overflow_point(reader: InMemoryMetricReader) -> None:
    with caught_warnings() as caught:
        for rank in range(10):
            tee_metrics({"lr": float(rank)}, "train", attributes={"rank": rank})
        tee_metrics({"lr": 100.0}, "train", attributes={"rank": 1})  # admitted set: still its own
    got = points(reader, "rl.learning_rate")
    # The budget of 4 counts the overflow point and the attribute-less point (kept free
    # for a call without attributes), so two rank sets get their own points.
    assert len(got) == 3
    assert got[fs(**{OVERFLOW_ATTRIBUTE: "true"})] == 9.0
    assert got[fs(rank=1)] == 100.0
    assert sum("budget of 4 attribute sets" in m for m in caught.messages) == 1


def test_an_open_attribute_budget_sends_new_values_to_overflow(
    reader: InMemoryMetricReader,
) -> None:
    with caught_warnings() as caught:
        for i in range(6):
            record_metrics({"queue_depth": float(i)}, attributes={"engine": f"e{i}"})
    got = points(reader, "rl.queue.depth")
    overflow = fs(**{OVERFLOW_ATTRIBUTE: "true"})
    assert set(got) == {fs(engine="e0"), fs(engine="e1"), fs(engine="e2"), overflow}
    assert [m for m in caught.messages if "reached its budget" in m] == [caught.messages[0]]
    assert "rl.queue.depth" in caught.messages[0]


@pytest.mark.parametrize(
    ("row", "limit"),
    [
        (RecordedMetric("rl.x"), 2),
        (RecordedMetric("rl.x", attributes=(BUCKET,)), 4),
        (RecordedMetric("rl.x", attributes=(BUCKET, PHASE)), 13),
        (RecordedMetric("rl.x", attributes=(MetricAttribute("a", max_cardinality=9),)), 11),
        (RecordedMetric("rl.x", attributes=(BUCKET, DATASET)), DEFAULT_CARDINALITY_LIMIT),
        (RecordedMetric("rl.x", attributes=(DATASET,), cardinality_limit=50), 50),
        (RecordedMetric("rl.x", attributes=(BUCKET,), cardinality_limit=3), 3),
    ],
)
def test_the_budget_is_derived_from_the_enums_when_smaller(row: RecordedMetric, limit: int) -> None:
    assert series_limit(row) == limit


def test_a_million_distinct_values_keep_memory_and_work_bounded(
    reader: InMemoryMetricReader,
) -> None:
    """1e6 distinct attribute values: the caches stop at the budget and memory stays flat."""
    open_points = SeriesPoints(RecordedMetric("rl.open.series", attributes=(DATASET,)), {})
    overflow = {OVERFLOW_ATTRIBUTE: "true"}
    with caught_warnings() as caught:
        for i in range(900_000):
            open_points.attributes({"rl.dataset": f"d{i}"})
    assert len(caught.messages) == 1  # one warning per series, not one per overflowing value
    assert "rl.open.series reached its budget of 2000" in caught.messages[0]
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        for i in range(900_000, 1_000_000):
            assert open_points.attributes({"rl.dataset": f"d{i}"}) == overflow
        after, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert open_points.attribute_sets == DEFAULT_CARDINALITY_LIMIT - 1
    assert len(open_points._raw) <= open_points._raw_limit
    assert after - before < 64 * 1024  # the last 100k new values allocate nothing that stays
    assert peak - before < 1024 * 1024
    assert open_points.attributes({"rl.dataset": "d5"}) == {"rl.dataset": "d5"}  # admitted early
    with caught_warnings():
        for i in range(20_000):  # and through the real SDK: the point count stays bounded
            record_metrics({"queue_depth": float(i)}, attributes={"engine": f"e{i}"})
    assert len(points(reader, "rl.queue.depth")) == 4  # 3 engines (max_cardinality) + overflow


# --- key families and prefixes ------------------------------------------------------


def test_a_key_pattern_feeds_one_series_with_the_captured_value(
    reader: InMemoryMetricReader,
) -> None:
    tee_metrics(
        {"setup/policy_time_s": 1.5, "setup/vllm_time_s": 2.5, "setup/critic_time_s": 9.0},
        "train",
    )
    assert points(reader, "rl.setup.duration") == {
        fs(**{"rl.setup.phase": "policy"}): 1.5,
        fs(**{"rl.setup.phase": "vllm"}): 2.5,
    }


def test_a_placeholder_placed_twice_exports_only_keys_whose_places_agree(
    reader: InMemoryMetricReader,
) -> None:
    """``{d}/scheduler/{d}/latency`` takes ``math/scheduler/math/latency`` as ``d=math``;
    ``math/scheduler/code/latency`` is no key of the row, so it is not exported."""
    vocabulary.register_teed_metrics(
        [
            TeedMetric(
                "{rl.dataset}/scheduler/{rl.dataset}/latency",
                "rl.scheduler.latency",
                unit="s",
                attributes=(DATASET,),
            )
        ]
    )
    with caught_warnings():
        tee_metrics(
            {"math/scheduler/math/latency": 0.5, "math/scheduler/code/latency": 9.0}, "train"
        )
    assert points(reader, "rl.scheduler.latency") == {fs(**{"rl.dataset": "math"}): 0.5}


@pytest.mark.parametrize(
    ("key", "matched"),
    [("tokens/math", "math"), ("tokens/a/b", None), ("tokens/", None), ("tokens", None)],
)
def test_an_open_placeholder_matches_one_non_empty_segment(
    reader: InMemoryMetricReader, key: str, matched: str | None
) -> None:
    tee_metrics({key: 3.0}, "train")
    expected = {fs(**{"rl.dataset": matched}): 3.0} if matched else {}
    assert points(reader, "rl.tokens") == expected


def test_other_prefixes_tee_the_row_under_each(reader: InMemoryMetricReader) -> None:
    tee_metrics({"loss": 1.0}, "train")
    tee_metrics({"loss": 2.0}, "")
    tee_metrics({"loss": 3.0}, "validation")
    assert points(reader, "rl.policy.loss") == {fs(): 2.0}
    tee_metrics({"tokens/code": 4.0}, "")
    assert points(reader, "rl.tokens") == {fs(**{"rl.dataset": "code"}): 4.0}


def test_a_prefix_pattern_captures_an_attribute(reader: InMemoryMetricReader) -> None:
    tee_metrics({"accuracy": 0.5, "loss/gen": 1.0}, "validation-math")
    tee_metrics({"accuracy": 0.7, "loss/train": 2.0, "loss/eval": 3.0}, "validation-code")
    tee_metrics({"accuracy": 0.9}, "validation-")
    assert points(reader, "rl.val.accuracy") == {
        fs(**{"rl.dataset": "math"}): 0.5,
        fs(**{"rl.dataset": "code"}): 0.7,
    }
    assert points(reader, "rl.val.loss") == {
        fs(**{"rl.dataset": "math", "rl.bucket": "gen"}): 1.0,
        fs(**{"rl.dataset": "code", "rl.bucket": "train"}): 2.0,
    }


def test_call_attributes_merge_with_captured_ones(reader: InMemoryMetricReader) -> None:
    tee_metrics({"loss/gen": 1.0}, "validation-math", attributes={"rl.bucket": "train"})
    assert points(reader, "rl.val.loss") == {fs(**{"rl.dataset": "math", "rl.bucket": "gen"}): 1.0}


def test_a_deprecated_row_and_its_replacement_both_record(reader: InMemoryMetricReader) -> None:
    tee_metrics({"grad": 0.77}, "train")
    assert points(reader, "rl.grad.old") == {fs(): 0.77}
    assert points(reader, "rl.grad.norm") == {fs(): 0.77}


def test_a_family_key_with_a_bad_value_is_warned_once(reader: InMemoryMetricReader) -> None:
    with caught_warnings() as caught:
        for _ in range(3):
            tee_metrics({"tokens/math": float("nan"), "tokens/code": "x"}, "train")
    assert len(caught.messages) == 2
    # the gauge shows the NaN (its NonFinite alert reads it); the text is skipped
    (only,) = points(reader, "rl.tokens").items()
    assert only[0] == fs(**{"rl.dataset": "math"})
    assert math.isnan(only[1])


def test_strict_mode_understands_patterns(reader: InMemoryMetricReader) -> None:
    with caught_warnings() as caught:
        tee_metrics(
            {"setup/policy_time_s": 1.0, "setup/critic_time_s": 1.0, "tokens/x": 1.0, "lr": 1.0},
            "train",
            strict=True,
        )
        tee_metrics({"accuracy": 1.0, "other": 1.0}, "validation-math", strict=True)
        tee_metrics({"anything": 1.0}, "unteed", strict=True)
    assert len(caught.messages) == 2
    assert "'train/setup/critic_time_s'" in caught.messages[0]
    assert "'validation-math/other'" in caught.messages[1]


def test_strict_mode_understands_patterns_with_export_disabled(clean_otel: None) -> None:
    vocabulary.register_teed_metrics(ROWS)
    with caught_warnings() as caught:
        tee_metrics({"setup/vllm_time_s": 1.0, "setup/x_time_s": 1.0}, "train", strict=True)
    assert len(caught.messages) == 1
    assert "setup/x_time_s" in caught.messages[0]


def test_the_key_match_cache_is_bounded(reader: InMemoryMetricReader) -> None:
    keys = {f"tokens/d{i}": 1.0 for i in range(KEY_CACHE_LIMIT + 500)}
    with caught_warnings() as caught:
        tee_metrics(keys, "train")
    assert len(caught.messages) == 1
    assert "rl.tokens reached its budget" in caught.messages[0]
    plan = otel.ensure_metric_group_registered().tee_tables["train"]
    assert plan.patterns is not None
    assert len(plan.patterns.cache) <= KEY_CACHE_LIMIT
    got = points(reader, "rl.tokens")
    assert len(got) == DEFAULT_CARDINALITY_LIMIT - 1  # the attribute-less slot stays free
    assert fs(**{OVERFLOW_ATTRIBUTE: "true"}) in got


# --- identity -------------------------------------------------------------------------


def test_identity_labels_join_every_point_outside_the_budget(
    reader: InMemoryMetricReader,
) -> None:
    otel.set_identity({"worker.rank": 3, "host.name": "node-1"})
    tee_metrics({"loss": 1.0, "setup/vllm_time_s": 2.0}, "train")
    tee_metrics({"lr": 1.0}, "train", attributes={"rank": 0})
    record_metrics({"batch_duration": 0.5}, attributes={"rl.bucket": "gen"})
    ident = {"worker.rank": 3, "host.name": "node-1"}
    assert points(reader, "rl.policy.loss") == {fs(**ident): 1.0}
    assert points(reader, "rl.setup.duration") == {fs(**ident, **{"rl.setup.phase": "vllm"}): 2.0}
    assert points(reader, "rl.learning_rate") == {fs(**ident, rank=0): 1.0}
    assert points(reader, "rl.batch.duration") == {fs(**ident, **{"rl.bucket": "gen"}): 1.0}
    assert otel.ensure_metric_group_registered().identity == ident


def test_identity_labels_are_validated() -> None:
    with pytest.raises(ValueError, match="identity label"):
        otel.set_identity({"worker.rank": [1]})
    with pytest.raises(ValueError, match="identity label"):
        otel.set_identity({"": 1})
    assert otel.identity_labels() == {}


# --- required attributes ------------------------------------------------------------

REQUIRED_ENGINE = MetricAttribute("engine", values=("vllm", "sglang"), requirement="required")


@pytest.mark.parametrize(
    ("calls", "warned"),
    [
        pytest.param([{"engine": "vllm"}, {"engine": "sglang"}], False, id="always-present"),
        pytest.param([{}, {}, None], True, id="never-passed"),
        pytest.param([{"engine": "vllm"}, {"rank": 1}, {"rank": 2}], True, id="sometimes-absent"),
        pytest.param([{"engine": "tpu"}], True, id="dropped-as-invalid"),
    ],
)
def test_a_required_attribute_left_out_is_warned_once_and_the_point_kept(
    clean_otel: None, calls: list[dict[str, Any] | None], warned: bool
) -> None:
    row = RecordedMetric(
        "rl.engine.busy", attributes=(REQUIRED_ENGINE, MetricAttribute("rank", "int"))
    )
    series = SeriesPoints(row, {})
    with caught_warnings() as caught:
        recorded = [series.attributes(call) for call in calls]
    required = [m for m in caught.messages if "required attribute 'engine'" in m]
    assert len(required) == (1 if warned else 0)
    assert all(r is None or OVERFLOW_ATTRIBUTE not in r for r in recorded)
    if warned:
        assert "rl.engine.busy" in required[0]


def test_a_recommended_attribute_left_out_is_not_warned(clean_otel: None) -> None:
    series = SeriesPoints(RecordedMetric("rl.x", attributes=(BUCKET, RANK)), {})
    with caught_warnings() as caught:
        assert series.attributes({}) is None
        assert series.attributes({"rank": 3}) == {"rank": 3}
    assert caught.messages == []
