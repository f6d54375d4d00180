"""The W&B definitions never raise into training code (issue 37 build-item 4).

``define_metrics`` (and each generated ``define_<loop>``) met ``run=None`` or
``object()`` with ``AttributeError``, and a ``define_metric`` that raised on being
read passed its error on. Every hostile ``run`` below is warned once and skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from metric_catalog import _warn
from metric_catalog._warn import MetricCatalogWarning
from metric_catalog.generated import wandb_metrics
from metric_catalog.wandb_setup import WandbMetric, define_metrics

METRICS = (WandbMetric("train/loss", summary="min", goal="minimize"), WandbMetric("lr"))


@pytest.fixture(autouse=True)
def _fresh_warnings() -> Iterator[None]:
    _warn._reset_for_tests()
    yield
    _warn._reset_for_tests()


class _Raising:
    """``define_metric`` raises on being read (a finished run, a proxy whose target is gone)."""

    @property
    def define_metric(self) -> Any:
        raise RuntimeError("the run has finished")


class _NotCallable:
    define_metric = "not a function"


class _UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("cannot print")


class _RaisesUnprintable:
    def define_metric(self, name: str, **options: Any) -> None:
        raise _UnprintableError


class _RaisesRuntime:
    def define_metric(self, name: str, **options: Any) -> None:
        raise RuntimeError("wandb.init() was not called")


class _BadRepr:
    def __repr__(self) -> str:
        raise ValueError("no repr")


HOSTILE_RUNS = {
    "none": None,
    "object": object(),
    "property-raises": _Raising(),
    "not-callable": _NotCallable(),
    "bad-repr": _BadRepr(),
    "raises-runtime": _RaisesRuntime(),
    "raises-unprintable": _RaisesUnprintable(),
}


@pytest.mark.parametrize("run", HOSTILE_RUNS.values(), ids=HOSTILE_RUNS.keys())
def test_a_hostile_run_is_warned_once_and_nothing_is_defined(run: object) -> None:
    with pytest.warns(MetricCatalogWarning, match="W&B"):
        assert define_metrics(run, METRICS, step_metric="train/global_step") == 0


@pytest.mark.parametrize("run", HOSTILE_RUNS.values(), ids=HOSTILE_RUNS.keys())
def test_the_generated_definitions_never_raise_on_a_hostile_run(run: object) -> None:
    with pytest.warns(MetricCatalogWarning):
        defined = (wandb_metrics.define_grpo_sync(run), wandb_metrics.define_loop(run, "sft"))
    assert defined == (0, 0)


def test_a_run_without_define_metric_is_told_what_to_pass() -> None:
    with pytest.warns(MetricCatalogWarning, match="pass the run wandb.init returned") as caught:
        [define_metrics(None, METRICS, step_metric=None) for _ in range(2)]
    assert len(caught) == 1  # warned once, not per call


def _failing_metrics() -> Iterator[WandbMetric]:
    yield WandbMetric("a")
    raise OSError("the caller's generator failed")


class _Recording:
    def __init__(self) -> None:
        self.names: list[str] = []

    def define_metric(self, name: str, **options: Any) -> None:
        self.names.append(name)


def test_metrics_that_fail_midway_keep_what_was_defined() -> None:
    run = _Recording()
    with pytest.warns(MetricCatalogWarning, match="stopped after 1"):
        assert define_metrics(run, _failing_metrics(), step_metric=None) == 1
    assert run.names == ["a"]


def test_a_real_shaped_run_still_gets_every_definition(recwarn: pytest.WarningsRecorder) -> None:
    run = _Recording()
    assert define_metrics(run, METRICS, step_metric="train/global_step") == 3
    assert run.names == ["train/global_step", "train/loss", "lr"]
    assert not [w for w in recwarn if issubclass(w.category, MetricCatalogWarning)]
