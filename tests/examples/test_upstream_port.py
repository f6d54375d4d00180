"""Upstream NeMo-RL's vocabulary behaviours, under upstream's own isolation fixture.

Upstream's tests get an empty registry by swapping the module globals
``_REGISTERED``, ``_RECORDED`` and ``_FROZEN`` with ``monkeypatch``; they do
not call any reset helper. This module does the same, after importing every
generated owner module, so the original registry holds real rows (and may
be frozen) while each test runs against the swapped one. Written from
upstream's behaviours, not from its code.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

import metric_catalog.generated
from codegen.generate.wandb import MODULE as WANDB_MODULE
from metric_catalog import exporters, otel, vocabulary
from metric_catalog.tee import record_metrics, tee_metrics
from metric_catalog.vocabulary import (
    RecordedMetric,
    TeedMetric,
    as_scalar,
    register_recorded_metrics,
    register_teed_metrics,
    registry_key,
)
from tests.otel_fixtures import caught_warnings, installed_reader


def _import_generated_owners() -> list[TeedMetric | RecordedMetric]:
    rows: list[TeedMetric | RecordedMetric] = []
    for info in pkgutil.iter_modules(metric_catalog.generated.__path__):
        if info.name == WANDB_MODULE:
            continue  # the loops' W&B definitions beside the owners: no rows
        module = importlib.import_module(f"metric_catalog.generated.{info.name}")
        rows += [*module.TEED, *module.RECORDED]
    return rows


GENERATED_ROWS = _import_generated_owners()


@pytest.fixture(autouse=True)
def empty_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Upstream's isolation: fresh registry globals, nothing else reset."""
    vocabulary._reset_for_tests()  # the original registry: real rows, frozen
    _import_generated_owners_again()
    vocabulary.freeze_metrics()
    monkeypatch.setattr(vocabulary, "_REGISTERED", {})
    monkeypatch.setattr(vocabulary, "_RECORDED", {})
    monkeypatch.setattr(vocabulary, "_FROZEN", False)
    yield
    monkeypatch.undo()
    vocabulary._reset_for_tests()


def _import_generated_owners_again() -> None:
    """Re-register every generated owner's rows, as their import did."""
    for info in pkgutil.iter_modules(metric_catalog.generated.__path__):
        if info.name == WANDB_MODULE:
            continue
        module = importlib.import_module(f"metric_catalog.generated.{info.name}")
        register_teed_metrics(module.TEED, owner=module.__name__)
        register_recorded_metrics(module.RECORDED, owner=module.__name__)


def test_the_original_registry_really_holds_generated_rows() -> None:
    """The swap hides real rows: the generated owners declared some before it."""
    assert len(GENERATED_ROWS) > 20
    assert vocabulary.teed_metrics() == ()
    assert vocabulary.recorded_metrics() == ()


def test_registry_key_strips_the_prefix_and_flattens_dots() -> None:
    assert registry_key("rl.reward.mean") == "reward_mean"
    assert registry_key("rl.reward.mean").isidentifier()


def test_registry_key_is_derived_from_the_name() -> None:
    assert TeedMetric("reward", "rl.reward.mean").key == "reward_mean"


@pytest.mark.parametrize(
    ("value", "expected"),
    [(1, 1.0), (2.5, 2.5), (True, None), (False, None), ("3", None), (None, None)],
)
def test_as_scalar_accepts_only_real_numbers(value: object, expected: float | None) -> None:
    assert as_scalar(value) == expected


def test_a_duplicate_logger_key_is_rejected() -> None:
    register_teed_metrics([TeedMetric("reward", "rl.reward.mean")])
    with pytest.raises(ValueError, match="already teed"):
        register_teed_metrics([TeedMetric("reward", "rl.reward.other")])


def test_a_duplicate_series_name_is_rejected() -> None:
    register_teed_metrics([TeedMetric("reward", "rl.reward.mean")])
    with pytest.raises(ValueError, match="already declared"):
        register_teed_metrics([TeedMetric("other_key", "rl.reward.mean")])


def test_declaring_the_same_row_twice_is_allowed() -> None:
    row = TeedMetric("reward", "rl.reward.mean")
    register_teed_metrics([row])
    register_teed_metrics([row])
    assert vocabulary.teed_metrics() == (row,)


def test_a_row_declared_after_freezing_raises() -> None:
    register_teed_metrics([TeedMetric("reward", "rl.reward.mean")])
    vocabulary.freeze_metrics()
    with pytest.raises(RuntimeError, match="after the metric group was registered"):
        register_teed_metrics([TeedMetric("late", "rl.late.metric")])
    with pytest.raises(RuntimeError, match="after the metric group was registered"):
        register_recorded_metrics([RecordedMetric("rl.late.recorded")])


def test_recorded_rows_are_kept_apart_from_teed_rows() -> None:
    teed = TeedMetric("reward", "rl.reward.mean")
    recorded = RecordedMetric("rl.vllm.batch.duration", kind="histogram", unit="s")
    register_teed_metrics([teed])
    register_recorded_metrics([recorded])
    assert vocabulary.teed_metrics() == (teed,)
    assert vocabulary.recorded_metrics() == (recorded,)
    assert recorded.key == "vllm_batch_duration"


# --- the swap itself: isolated both ways ------------------------------------------


@pytest.mark.parametrize("row", GENERATED_ROWS[:: max(1, len(GENERATED_ROWS) // 8)], ids=repr)
def test_a_generated_row_owns_nothing_in_the_swapped_registry(
    row: TeedMetric | RecordedMetric,
) -> None:
    """A row from an imported generated module does not still claim its name or key."""
    if isinstance(row, TeedMetric):
        other = TeedMetric(row.logger_key, row.name, "counter", prefix=row.prefix)
        register_teed_metrics([other])
        assert vocabulary.teed_metrics() == (other,)
    else:
        recorded = RecordedMetric(row.name, "counter")
        register_recorded_metrics([recorded])
        assert vocabulary.recorded_metrics() == (recorded,)


def test_teed_metrics_reflects_the_swapped_dict() -> None:
    """teed_metrics() reads whatever dict is installed now, including a later swap."""
    row = TeedMetric("reward", "rl.reward.mean")
    register_teed_metrics([row])
    assert vocabulary.teed_metrics() == (row,)
    vocabulary._REGISTERED = {}
    assert vocabulary.teed_metrics() == ()
    register_teed_metrics([TeedMetric("reward", "rl.reward.other")])  # the key is free again


def test_swapping_back_restores_the_original_registry_and_its_owners(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After monkeypatch restores the globals, the real rows and owners are back, intact."""
    register_teed_metrics([TeedMetric("swapped", "rl.swapped.only")])
    monkeypatch.undo()
    names = {row.name for row in vocabulary.teed_metrics()}
    assert "rl.swapped.only" not in names
    assert {r.name for r in GENERATED_ROWS if isinstance(r, TeedMetric)} <= names
    assert vocabulary.is_frozen()
    first = next(r for r in GENERATED_ROWS if isinstance(r, TeedMetric))
    assert (vocabulary.owner_of(first.name) or "").startswith("metric_catalog.generated.")
    vocabulary._FROZEN = False
    with pytest.raises(ValueError, match=r"from metric_catalog\.generated"):
        register_teed_metrics([TeedMetric(first.logger_key, "rl.clash.row", prefix=first.prefix)])


def test_a_registry_edited_in_place_is_re_derived() -> None:
    """Clearing the installed dict directly (as some fixtures do) frees its claims."""
    register_teed_metrics([TeedMetric("reward", "rl.reward.mean")])
    vocabulary._REGISTERED.clear()
    assert vocabulary.teed_metrics() == ()
    register_teed_metrics([TeedMetric("reward", "rl.reward.other")])


def test_many_swaps_keep_only_a_few_derived_tables() -> None:
    """A fresh dict swapped in per test leaves no growing trail of side tables behind."""
    for i in range(50):
        vocabulary._REGISTERED = {}
        register_teed_metrics([TeedMetric(f"k{i}", f"rl.swap.m{i}")])
        assert len(vocabulary.teed_metrics()) == 1
    assert len(vocabulary._PREVIOUS) <= vocabulary._PREVIOUS_KEPT


# --- the tee after a swap: the metric group follows the registry in place ----------


@pytest.fixture
def reader(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemoryMetricReader]:
    """An exporting provider with an in-memory reader, as upstream's tee tests start one."""
    for name in list(os.environ):
        if name.startswith(("OTEL_", "METRIC_CATALOG_")):
            monkeypatch.delenv(name)
    exporters.reset_for_tests()
    with installed_reader() as memory:
        yield memory


def _swap(monkeypatch: pytest.MonkeyPatch) -> None:
    """Upstream's fixture once more: what the next test of a session does."""
    monkeypatch.setattr(vocabulary, "_REGISTERED", {})
    monkeypatch.setattr(vocabulary, "_RECORDED", {})
    monkeypatch.setattr(vocabulary, "_FROZEN", False)


def _streams(reader: InMemoryMetricReader, name: str) -> list[Any]:
    """Every exported metric stream called ``name`` (two instruments of one name: two)."""
    data = reader.get_metrics_data()
    if data is None:
        return []
    return [
        metric
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == name
    ]


def _values(reader: InMemoryMetricReader, name: str) -> list[float]:
    return [float(p.value) for s in _streams(reader, name) for p in s.data.data_points]


def test_a_row_registered_after_a_swap_is_teed_and_the_old_rows_are_gone(
    reader: InMemoryMetricReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Swap, register, tee: the new row is exported, the swapped-out one no longer is."""
    register_teed_metrics([TeedMetric("reward", "rl.swap.first")])
    tee_metrics({"reward": 1.0}, "train")
    assert _values(reader, "rl.swap.first") == [1.0]
    _swap(monkeypatch)
    register_teed_metrics([TeedMetric("fresh", "rl.swap.fresh")])
    tee_metrics({"fresh": 2.0, "reward": 3.0}, "train")
    assert _values(reader, "rl.swap.fresh") == [2.0]
    assert _values(reader, "rl.swap.first") == [1.0]  # its last value, not the 3.0 logged now
    group = otel._GROUP
    assert group is not None
    assert set(group.series) == {"rl.swap.fresh"}
    assert set(group.instruments) == {"swap_fresh"}
    assert vocabulary.is_frozen()  # the tee froze the registry in place, as on a first tee
    with pytest.raises(RuntimeError, match="after the metric group was registered"):
        register_teed_metrics([TeedMetric("late", "rl.swap.late")])


def test_a_recorded_row_registered_after_a_swap_is_recorded(
    reader: InMemoryMetricReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_recorded_metrics([RecordedMetric("rl.swap.depth")])
    record_metrics({"swap_depth": 1.0})
    _swap(monkeypatch)
    register_recorded_metrics([RecordedMetric("rl.swap.queue")])
    with caught_warnings() as caught:
        record_metrics({"swap_queue": 4.0, "swap_depth": 5.0})
    assert _values(reader, "rl.swap.queue") == [4.0]
    assert _values(reader, "rl.swap.depth") == [1.0]
    assert any("no recorded row has registry key 'swap_depth'" in m for m in caught.messages)


def test_a_registry_reopened_in_place_is_teed_with_its_new_rows(
    reader: InMemoryMetricReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same dicts, registration reopened (``_FROZEN`` back to False): rebuilt too."""
    register_teed_metrics([TeedMetric("a", "rl.reopen.a")])
    tee_metrics({"a": 1.0}, "train")
    monkeypatch.setattr(vocabulary, "_FROZEN", False)
    register_teed_metrics([TeedMetric("b", "rl.reopen.b")])
    tee_metrics({"a": 2.0, "b": 3.0}, "train")
    assert _values(reader, "rl.reopen.a") == [2.0]
    assert _values(reader, "rl.reopen.b") == [3.0]
    assert vocabulary.is_frozen()


def test_swapping_back_reuses_the_instruments_created_before_the_swap(
    reader: InMemoryMetricReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Original registry, swap, back: one instrument per series name throughout."""
    monkeypatch.undo()  # the original registry, with the generated owners' rows
    tee_metrics({"reward": 0.25}, "train")
    group = otel._GROUP
    assert group is not None
    instrument = group.instruments["reward_mean"]
    _swap(monkeypatch)
    register_teed_metrics([TeedMetric("reward", "rl.reward.mean", description="Other words.")])
    with caught_warnings() as caught:
        tee_metrics({"reward": 0.5}, "train")
    assert [m for m in caught.messages if "rl.reward.mean is declared again" in m]
    assert otel._GROUP is not None
    assert otel._GROUP.instruments["reward_mean"] is instrument
    assert _values(reader, "rl.reward.mean") == [0.5]  # one stream, not two of one name
    monkeypatch.undo()
    tee_metrics({"reward": 0.75}, "train")
    assert otel._GROUP.instruments["reward_mean"] is instrument
    assert _values(reader, "rl.reward.mean") == [0.75]
    assert len(_streams(reader, "rl.reward.mean")) == 1


def test_a_swapped_row_of_another_kind_is_not_exported_under_the_same_name(
    reader: InMemoryMetricReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A gauge and a counter cannot share an instrument: the second is warned, not doubled."""
    register_teed_metrics([TeedMetric("x", "rl.kind.clash")])
    tee_metrics({"x": 1.0}, "train")
    _swap(monkeypatch)
    register_teed_metrics([TeedMetric("x", "rl.kind.clash", "counter")])
    with caught_warnings() as caught:
        tee_metrics({"x": 5.0}, "train")
        tee_metrics({"x": 6.0}, "train")
    assert len(_streams(reader, "rl.kind.clash")) == 1
    assert _values(reader, "rl.kind.clash") == [1.0]
    assert len([m for m in caught.messages if "already created it as a gauge" in m]) == 1


# --- upstream's tee tests (tests/unit/telemetry/test_metrics.py), ported -----------
# Upstream's tee is tee_rl_metrics_to_otel(metrics, prefix) in nemo_rl.telemetry.metrics;
# ours is metric_catalog.tee.tee_metrics(metrics, prefix). Upstream's tests of its
# hand-written mappers (map_efficiency_seconds, setup_phase, efficiency_measurements)
# have no counterpart: our catalog declares those families as key patterns instead.
# They run under the swap fixture above, after a group may have been built on
# another registry, which is the case the tee must follow.


def _import_teed_metric_owners() -> None:
    """Upstream imports each owner so its rows exist; here they re-declare into the swap."""
    _import_generated_owners_again()


@pytest.fixture
def not_exporting(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No exporter configured: upstream's "no telemetry handle"."""
    for name in list(os.environ):
        if name.startswith(("OTEL_", "METRIC_CATALOG_")):
            monkeypatch.delenv(name)
    exporters.reset_for_tests()
    yield
    exporters.reset_for_tests()


def _points(reader: InMemoryMetricReader, name: str) -> list[Any]:
    return [p for s in _streams(reader, name) for p in s.data.data_points]


def test_tee_noop_when_not_exporting(not_exporting: None) -> None:
    _import_teed_metric_owners()
    with caught_warnings() as caught:
        tee_metrics({"efficiency/idle/refit_bubble_s": 12.0}, "train")
    assert caught.messages == []
    assert otel._GROUP is not None
    assert not otel._GROUP.enabled


def test_every_declared_scalar_has_a_unique_key_and_name() -> None:
    _import_teed_metric_owners()
    rows = vocabulary.teed_metrics()
    keys = [teed.key for teed in rows]
    names = [teed.name for teed in rows]
    assert len(set(keys)) == len(keys)
    assert len(set(names)) == len(names)
    assert all(key.isidentifier() for key in keys)


def test_tee_emits_the_training_scalars(reader: InMemoryMetricReader) -> None:
    _import_teed_metric_owners()
    tee_metrics({"reward": 0.75, "lr": 1e-6}, "train")
    data = reader.get_metrics_data()
    assert data is not None
    assert [p.value for p in _points(reader, "rl.reward.mean")] == [0.75]
    assert [p.value for p in _points(reader, "rl.learning_rate")] == [1e-6]


def test_tee_emits_the_vllm_engine_metrics(reader: InMemoryMetricReader) -> None:
    _import_teed_metric_owners()
    tee_metrics({"vllm/generation_length_mean": 150.0, "vllm/generations_failed": 2.0}, "train")
    assert [p.value for p in _points(reader, "rl.vllm.generation_length.mean")] == [150.0]


def test_tee_emits_the_setup_phases_under_their_own_prefix(reader: InMemoryMetricReader) -> None:
    _import_teed_metric_owners()
    tee_metrics({"generation_init_time_s": 300.0, "total_setup_time_s": 420.0}, "timing/setup")
    points = _points(reader, "rl.setup.duration")
    assert {p.attributes["rl.setup.phase"]: p.value for p in points} == {
        "generation_init": 300.0,
        "total_setup": 420.0,
    }


def test_setup_phases_carry_no_bucket(reader: InMemoryMetricReader) -> None:
    """They overlap each other, so anything summing them by bucket would lie."""
    _import_teed_metric_owners()
    tee_metrics({"total_setup_time_s": 420.0}, "timing/setup")
    points = _points(reader, "rl.setup.duration")
    assert points
    assert all("rl.bucket" not in p.attributes for p in points)


def test_a_train_dict_does_not_reach_the_setup_tee(reader: InMemoryMetricReader) -> None:
    _import_teed_metric_owners()
    tee_metrics({"total_step_time_s": 12.0}, "train")  # ends in _s, but arrives under "train"
    assert not _points(reader, "rl.setup.duration")


def test_tee_skips_prefixes_other_than_train(reader: InMemoryMetricReader) -> None:
    _import_teed_metric_owners()
    tee_metrics({"efficiency/idle/refit_bubble_s": 12.0}, "performance")
    tee_metrics({"efficiency/idle/refit_bubble_s": 12.0}, "validation")
    assert _points(reader, "rl.efficiency.seconds") == []


def test_tee_skips_efficiency_instruments_without_efficiency_keys(
    reader: InMemoryMetricReader,
) -> None:
    _import_teed_metric_owners()
    tee_metrics({"reward": 0.5}, "train")
    assert _points(reader, "rl.efficiency.seconds") == []
    assert _points(reader, "rl.efficiency.pct") == []


def test_tee_emits_efficiency_pct(reader: InMemoryMetricReader) -> None:
    _import_teed_metric_owners()
    tee_metrics({"efficiency/efficiency_pct": 87.5}, "")
    assert [p.value for p in _points(reader, "rl.efficiency.pct")] == [87.5]


def test_tee_never_raises_into_the_training_step(
    not_exporting: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """log_metrics calls the tee unguarded, so it swallows everything, warned once."""

    def _boom(*_: object) -> otel.MetricGroup:
        raise RuntimeError("handle is wedged")

    monkeypatch.setattr(otel, "ensure_metric_group_registered", _boom)
    with caught_warnings() as caught:
        tee_metrics({"reward": 1.0}, "train")
    assert len(caught.messages) == 1
    assert "handle is wedged" in caught.messages[0]


def test_a_missing_metric_registry_disables_the_tee_without_raising(
    reader: InMemoryMetricReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broken instrument setup costs the run its metrics, not its step."""
    _import_teed_metric_owners()

    def _no_registry() -> tuple[otel.MetricSpec, ...]:
        raise ImportError("no registry")

    monkeypatch.setattr(otel, "metric_specs", _no_registry)
    with caught_warnings() as caught:
        tee_metrics({"reward": 1.0}, "train")
    assert not otel.ensure_metric_group_registered().enabled
    assert any("no registry" in m for m in caught.messages)


def test_a_broken_scalar_tee_does_not_silence_the_efficiency_tee(
    reader: InMemoryMetricReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failing instrument costs its own key only: the family keys are still recorded."""
    _import_teed_metric_owners()
    create = otel._create

    def _wedged(meter: Any, spec: otel.MetricSpec) -> tuple[Any, otel.Recorder]:
        instrument, record = create(meter, spec)
        if spec.name != "rl.reward.mean":
            return instrument, record

        def _boom(*_: object) -> None:
            raise RuntimeError("scalars are wedged")

        return instrument, _boom

    monkeypatch.setattr(otel, "_create", _wedged)
    with caught_warnings() as caught:
        tee_metrics({"efficiency/idle/refit_bubble_s": 12.0, "reward": 1.0}, "train")
    assert [p.value for p in _points(reader, "rl.efficiency.seconds")] == [12.0]
    assert any("scalars are wedged" in m and "rl.reward.mean" in m for m in caught.messages)


def test_a_broken_tee_warns_once_not_once_per_step(
    reader: InMemoryMetricReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deterministic failure repeats every step, so it is reported once."""
    _import_teed_metric_owners()

    def _boom(*_: object) -> None:
        raise RuntimeError("instrument is gone")

    monkeypatch.setattr("metric_catalog.tee._tee_families", _boom)
    with caught_warnings() as caught:
        for _ in range(3):
            tee_metrics({"efficiency/idle/refit_bubble_s": 1.0}, "train")
    assert len([m for m in caught.messages if "instrument is gone" in m]) == 1
