"""Running totals: a counter row with ``temporality="cumulative"`` adds what the total grew by."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from metric_catalog import otel, vocabulary
from metric_catalog.tee import tee_metrics
from metric_catalog.vocabulary import MetricAttribute, TeedMetric
from tests.otel_fixtures import caught_warnings, clean_otel, collect, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

RANK = MetricAttribute("rank", "int", max_cardinality=64)
ROWS = (
    TeedMetric("step", "rl.train.step", "counter", temporality="cumulative"),
    TeedMetric("tokens", "rl.train.tokens", "counter"),
    TeedMetric(
        "consumed",
        "rl.train.consumed",
        "counter",
        attributes=(RANK,),
        temporality="cumulative",
        cardinality_limit=8,
    ),
)


@pytest.fixture
def reader(clean_otel: None) -> Iterator[InMemoryMetricReader]:
    """The rows above registered, export on (an in-memory reader)."""
    vocabulary.register_teed_metrics(ROWS)
    with installed_reader() as memory:
        yield memory


def _sums(reader: InMemoryMetricReader, name: str) -> dict[tuple[tuple[str, object], ...], float]:
    series = collect(reader)[name]
    return {tuple(sorted(p.attributes.items())): p.value for p in series.points}


def test_temporality_defaults_to_delta_and_positional_construction_is_unchanged() -> None:
    """The new field comes after every existing one; the reference order still works."""
    row = TeedMetric("k", "rl.k", "counter", "1", "K.", "train", (), (), None, None)
    assert row.temporality == "delta"
    assert TeedMetric("k", "rl.k").temporality == "delta"
    assert vocabulary.TEMPORALITIES == ("delta", "cumulative")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"kind": "gauge", "temporality": "cumulative"}, "only a counter", id="gauge"),
        pytest.param(
            {"kind": "up_down_counter", "temporality": "cumulative"},
            "only a counter",
            id="up_down_counter",
        ),
        pytest.param(
            {"kind": "histogram", "temporality": "cumulative"}, "only a counter", id="histogram"
        ),
        pytest.param({"kind": "counter", "temporality": "total"}, "is not one of", id="unknown"),
        pytest.param({"kind": "counter", "temporality": None}, "is not one of", id="None"),
    ],
)
def test_temporality_is_checked(kwargs: dict[str, object], message: str) -> None:
    """Only counters may be cumulative; the value is one of delta, cumulative."""
    with pytest.raises(ValueError, match=message):
        TeedMetric("k", "rl.k", **kwargs)  # type: ignore[arg-type]
    row = TeedMetric("k", "rl.k", "counter")
    with pytest.raises(ValueError, match=message):
        row.__replace__(**kwargs)


def test_a_running_total_adds_its_growth_and_a_delta_counter_adds_each_value(
    reader: InMemoryMetricReader,
) -> None:
    """Logged 10, 15, 15, 30: the cumulative counter reads 30, the delta one 70."""
    with caught_warnings() as caught:
        for total in (10.0, 15.0, 15.0, 30.0):
            tee_metrics({"step": total, "tokens": total}, "train")
    assert collect(reader)["rl.train.step"].value == 30.0
    assert collect(reader)["rl.train.tokens"].value == 70.0
    assert caught.messages == []


def test_a_decrease_is_a_restart_added_whole_and_noted_once(
    reader: InMemoryMetricReader,
) -> None:
    """10, 20, then 5 (a restart), 8, then 2 (another): 20 + 5 + 3 + 2, one warning."""
    with caught_warnings() as caught:
        for total in (10.0, 20.0, 5.0, 8.0, 2.0):
            tee_metrics({"step": total}, "train")
    assert collect(reader)["rl.train.step"].value == 30.0
    assert len(caught.messages) == 1
    assert "rl.train.step" in caught.messages[0]
    assert "restart" in caught.messages[0]


def test_each_attribute_set_keeps_its_own_running_total(reader: InMemoryMetricReader) -> None:
    """Rank 0 and rank 1 log their own totals; neither looks like the other's restart."""
    with caught_warnings() as caught:
        for step in range(1, 4):
            tee_metrics({"consumed": 100.0 * step}, "train", attributes={"rank": 0})
            tee_metrics({"consumed": 10.0 * step}, "train", attributes={"rank": 1})
    assert _sums(reader, "rl.train.consumed") == {(("rank", 0),): 300.0, (("rank", 1),): 30.0}
    assert caught.messages == []


def test_running_totals_are_exact_with_many_threads(reader: InMemoryMetricReader) -> None:
    """Six threads, each its own attribute set, 500 steps each: every total is exact."""

    def run(rank: int) -> None:
        for step in range(1, 501):
            tee_metrics({"consumed": float(step * (rank + 1))}, "train", attributes={"rank": rank})

    threads = [threading.Thread(target=run, args=(rank,)) for rank in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert _sums(reader, "rl.train.consumed") == {
        (("rank", rank),): 500.0 * (rank + 1) for rank in range(6)
    }


def test_previous_values_stay_within_the_series_budget(reader: InMemoryMetricReader) -> None:
    """Thousands of attribute sets past the budget keep at most the budget's previous values."""
    with caught_warnings():
        for rank in range(2000):
            tee_metrics({"consumed": 1.0}, "train", attributes={"rank": rank % 64})
    group = otel.current_group()
    recorder, points = group.series["rl.train.consumed"]
    assert isinstance(recorder, otel.RunningTotal)
    assert len(recorder) <= points.limit
