"""myrl's own test of its telemetry: one PPO step exports what the catalog declares.

``metric_capture`` is metric-catalog's pytest fixture (the package registers the plugin;
it needs the ``otel`` extra, and skips the test without it). Run ``metric-catalog
generate`` first: the generated module declares the rows the capture is judged against.
"""

from __future__ import annotations

import pytest
from myrl import ppo

from metric_catalog.tee import tee_metrics
from metric_catalog.testing import CatalogMismatchError, MetricCaptures


def test_a_ppo_step_exports_what_the_catalog_declares(metric_capture: MetricCaptures) -> None:
    with metric_capture() as captured:
        tee_metrics(ppo.step_metrics(value_loss=0.41, clip_fraction=0.12, reward=0.8), ppo.PREFIX)
    captured.assert_matches_catalog()


def test_a_clip_fraction_logged_in_percent_is_caught(metric_capture: MetricCaptures) -> None:
    with metric_capture() as captured:
        tee_metrics(ppo.step_metrics(value_loss=0.41, clip_fraction=12.0, reward=0.8), ppo.PREFIX)
    with pytest.raises(
        CatalogMismatchError, match=r"warning\[OUT_OF_RANGE\]: rl.ppo.clip_fraction"
    ):
        captured.assert_matches_catalog()
