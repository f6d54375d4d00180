"""Rows sharing a key under exclusive conditions: the tee routes it by the run's configuration.

``critic/clipfrac`` is a share when value clipping is on and a squared error when it is
off (two rows, ``choice`` ``config.critic.clip_value`` true / false). With a
configuration given to ``otel.set_run_config`` the key feeds the chosen row; without
one that decides, it feeds neither, with one warning (never a crash, never a guess).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from metric_catalog import otel, vocabulary
from metric_catalog.adapters import tee_flat
from metric_catalog.series_rules import ConfigChoice
from metric_catalog.tee import tee_metrics
from metric_catalog.vocabulary import TeedMetric
from tests.otel_fixtures import caught_warnings, clean_otel, collect, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

CLIP = ConfigChoice(("critic", "clip_value"), "true")
NO_CLIP = ConfigChoice(("critic", "clip_value"), "false")


def _rows(first: ConfigChoice | None, second: ConfigChoice | None) -> list[TeedMetric]:
    return [
        TeedMetric("critic/clipfrac", "rl.critic.clip.fraction", unit="1", choice=first),
        TeedMetric("critic/clipfrac", "rl.critic.value.sq_error", unit="1", choice=second),
        TeedMetric("loss", "rl.loss", unit="1"),
    ]


@pytest.fixture
def critic(clean_otel: None) -> Iterator[InMemoryMetricReader]:
    """The two critic rows (clip on / off) and a plain one registered, a reader installed."""
    vocabulary.register_teed_metrics(_rows(CLIP, NO_CLIP))
    with installed_reader() as reader:
        yield reader


def _exported(reader: InMemoryMetricReader) -> dict[str, list[float]]:
    return {name: [p.value for p in series.points] for name, series in collect(reader).items()}


@pytest.mark.parametrize(
    ("config", "chosen"),
    [
        ({"critic": {"clip_value": True}}, "rl.critic.clip.fraction"),
        ({"critic": {"clip_value": False}}, "rl.critic.value.sq_error"),
        ({"critic": {"clip_value": 0}}, "rl.critic.value.sq_error"),
        ({"critic": {"clip_value": "yes"}}, "rl.critic.clip.fraction"),
    ],
)
def test_the_run_configuration_chooses_the_row_a_shared_key_feeds(
    critic: InMemoryMetricReader, config: Mapping[str, Any], chosen: str
) -> None:
    otel.set_run_config(config)
    with caught_warnings() as caught:
        tee_metrics({"critic/clipfrac": 0.25, "loss": 1.0}, prefix="train")
        tee_flat({"train/critic/clipfrac": 0.5})
    assert _exported(critic) == {chosen: [0.5], "rl.loss": [1.0]}
    assert caught.messages == []


@pytest.mark.parametrize(
    "config",
    [None, {}, {"critic": {}}, {"critic": "on"}, {"critic": {"other": True}}],
    ids=["no-config", "empty", "no-key", "not-a-mapping", "other-key"],
)
def test_an_undecided_configuration_exports_neither_row_and_warns_once(
    critic: InMemoryMetricReader, config: Mapping[str, Any] | None
) -> None:
    otel.set_run_config(config)
    with caught_warnings() as caught:
        for _ in range(3):
            tee_metrics({"critic/clipfrac": 0.25, "loss": 1.0}, prefix="train")
    assert _exported(critic) == {"rl.loss": [1.0]}
    assert len(caught.messages) == 1
    message = caught.messages[0]
    assert "'train/critic/clipfrac'" in message
    assert "'rl.critic.clip.fraction', 'rl.critic.value.sq_error'" in message
    assert "set_run_config" in message


def test_a_configuration_given_later_routes_from_then_on(critic: InMemoryMetricReader) -> None:
    with caught_warnings():
        tee_metrics({"critic/clipfrac": 0.25}, prefix="train")
    otel.set_run_config({"critic": {"clip_value": False}})
    tee_metrics({"critic/clipfrac": 0.75}, prefix="train")
    assert _exported(critic) == {"rl.critic.value.sq_error": [0.75]}


def test_a_row_alone_on_its_key_is_teed_whatever_the_configuration(clean_otel: None) -> None:
    vocabulary.register_teed_metrics([TeedMetric("kl", "rl.kl", unit="1", choice=CLIP)])
    otel.set_run_config({"critic": {"clip_value": False}})
    with installed_reader() as reader, caught_warnings() as caught:
        tee_metrics({"kl": 0.1}, prefix="train")
        assert _exported(reader) == {"rl.kl": [0.1]}
    assert caught.messages == []


class _Hostile(dict[str, Any]):
    def __contains__(self, key: object) -> bool:
        raise RuntimeError("no")


def test_a_hostile_configuration_decides_nothing_and_never_raises(
    critic: InMemoryMetricReader,
) -> None:
    otel.set_run_config(_Hostile(critic={"clip_value": True}))
    with caught_warnings() as caught:
        tee_metrics({"critic/clipfrac": 0.25}, prefix="train")
    assert _exported(critic) == {}
    assert len(caught.messages) == 1


def test_set_run_config_refuses_what_is_no_mapping(clean_otel: None) -> None:
    with pytest.raises(TypeError, match="a mapping"):
        otel.set_run_config(["critic"])  # type: ignore[arg-type]
    assert otel.run_config() is None


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (None, None),
        (CLIP, None),
        (CLIP, CLIP),
        (CLIP, ConfigChoice(("critic", "other"), "false")),
        (ConfigChoice(("a",), "equals", 1), ConfigChoice(("a",), "equals", True)),
    ],
)
def test_rows_whose_choices_can_hold_together_cannot_share_a_key(
    clean_otel: None, first: ConfigChoice | None, second: ConfigChoice | None
) -> None:
    with pytest.raises(ValueError, match="choices that exclude each other"):
        vocabulary.register_teed_metrics(_rows(first, second))
    assert vocabulary.teed_metrics() == ()


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (CLIP, NO_CLIP),
        (ConfigChoice(("a",), "equals", "gae"), ConfigChoice(("a",), "equals", "grpo")),
        (ConfigChoice(("a",), "equals", 0), ConfigChoice(("a",), "true")),
    ],
)
def test_rows_whose_choices_exclude_each_other_share_a_key(
    clean_otel: None, first: ConfigChoice, second: ConfigChoice
) -> None:
    vocabulary.register_teed_metrics(_rows(first, second))
    assert len(vocabulary.teed_metrics()) == 3


@pytest.mark.parametrize("bad", ["config.critic.clip_value", ("critic", "true"), 1])
def test_a_choice_that_is_no_config_choice_is_refused_at_declaration(bad: object) -> None:
    with pytest.raises(ValueError, match="choice must be a ConfigChoice"):
        TeedMetric("k", "rl.k", choice=bad)  # type: ignore[arg-type]
