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
import pkgutil
from collections.abc import Iterator

import pytest

import metric_catalog.generated
from metric_catalog import vocabulary
from metric_catalog.vocabulary import (
    RecordedMetric,
    TeedMetric,
    as_scalar,
    register_recorded_metrics,
    register_teed_metrics,
    registry_key,
)


def _import_generated_owners() -> list[TeedMetric | RecordedMetric]:
    rows: list[TeedMetric | RecordedMetric] = []
    for info in pkgutil.iter_modules(metric_catalog.generated.__path__):
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
