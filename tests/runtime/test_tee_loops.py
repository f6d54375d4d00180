"""Rows scoped to loops: a key several loops log with different meanings feeds its loop's row.

OpenRLHF-shaped: the SFT, DPO and reward-model trainers share one logging path, so
``train/loss_mean`` and ``train/chosen_reward`` mean something else in each. The rows
are declared per loop (``emitted_by``); the tee routes each key by the process's loop.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from metric_catalog import vocabulary
from metric_catalog.adapters import TrackingTee, tee_flat, tee_wandb_log
from metric_catalog.loggers import JsonlLogger, TeeLogger
from metric_catalog.tee import tee_metrics
from metric_catalog.vocabulary import MetricAttribute, TeedMetric
from tests.otel_fixtures import caught_warnings, clean_otel, collect, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

TRAINER_ROWS = (
    TeedMetric("loss_mean", "rl.sft.nll.mean", unit="", emitted_by=("sft",)),
    TeedMetric("loss_mean", "rl.dpo.preference_loss.mean", unit="", emitted_by=("dpo",)),
    TeedMetric("loss_mean", "rl.rm.ranking_loss.mean", unit="", emitted_by=("rm",)),
    TeedMetric("chosen_reward", "rl.dpo.implicit_reward.chosen", unit="", emitted_by=("dpo",)),
    TeedMetric("chosen_reward", "rl.rm.score.chosen", unit="1", emitted_by=("rm",)),
    TeedMetric("lr", "rl.optimizer.lr", unit="1"),
)
"""Three trainer loops sharing keys with different meanings and units, plus a common row."""


@pytest.fixture
def reader(clean_otel: None) -> Iterator[InMemoryMetricReader]:
    """The trainer rows registered, export on."""
    vocabulary.register_teed_metrics(TRAINER_ROWS)
    with installed_reader() as memory:
        yield memory


def _values(reader: InMemoryMetricReader) -> dict[str, list[float]]:
    return {name: [p.value for p in s.points] for name, s in collect(reader).items()}


@pytest.mark.parametrize(
    ("loop", "expected"),
    [
        ("sft", {"rl.sft.nll.mean": [2.0], "rl.optimizer.lr": [0.1]}),  # no chosen_reward
        (
            "dpo",
            {
                "rl.dpo.preference_loss.mean": [2.0],
                "rl.dpo.implicit_reward.chosen": [0.5],
                "rl.optimizer.lr": [0.1],
            },
        ),
        (
            "rm",
            {
                "rl.rm.ranking_loss.mean": [2.0],
                "rl.rm.score.chosen": [0.5],
                "rl.optimizer.lr": [0.1],
            },
        ),
    ],
)
def test_a_key_logged_by_three_loops_routes_to_each_loops_row(
    reader: InMemoryMetricReader, loop: str, expected: dict[str, list[float]]
) -> None:
    """Each loop's call feeds its own rows; a row every loop logs is fed whatever the loop."""
    logged = {"loss_mean": 2.0, "chosen_reward": 0.5, "lr": 0.1}
    if loop == "sft":
        del logged["chosen_reward"]  # SFT logs no reward
    with caught_warnings() as caught:
        tee_metrics(logged, "train", loop=loop)
    assert _values(reader) == expected
    assert caught.messages == []


def test_the_loop_comes_from_the_environment_when_not_passed(
    clean_otel: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``METRIC_CATALOG_LOOP`` names the process's loop, read when the tee first runs."""
    monkeypatch.setenv("METRIC_CATALOG_LOOP", "rm")
    vocabulary.register_teed_metrics(TRAINER_ROWS)
    with installed_reader() as memory:
        tee_metrics({"chosen_reward": 0.25}, "train")
        assert _values(memory) == {"rl.rm.score.chosen": [0.25]}


def test_with_no_loop_a_shared_key_is_not_exported_and_warned_once_naming_the_rows(
    reader: InMemoryMetricReader,
) -> None:
    """Never a guess: the key is skipped, one warning names both rows and how to fix it."""
    with caught_warnings() as caught:
        for _ in range(3):
            tee_metrics({"chosen_reward": 0.5, "lr": 0.1}, "train")
    assert _values(reader) == {"rl.optimizer.lr": [0.1]}
    assert len(caught.messages) == 1
    text = caught.messages[0]
    assert "'train/chosen_reward'" in text
    assert "'rl.dpo.implicit_reward.chosen'" in text
    assert "'rl.rm.score.chosen'" in text
    assert "METRIC_CATALOG_LOOP" in text


def test_a_key_one_loops_row_alone_claims_is_exported_from_any_loop(
    reader: InMemoryMetricReader,
) -> None:
    """Only one row claims it: routing it is no guess, whatever loop (or none) logs it.

    live-check then reports the row ``unexpected_loop``; the tee does not drop data.
    """
    with caught_warnings() as caught:
        tee_metrics({"loss_mean": 1.0}, "train", loop="ppo")
    # Three rows claim loss_mean and ppo is none of their loops: skipped, warned.
    assert _values(reader) == {}
    assert len(caught.messages) == 1
    with caught_warnings() as caught:
        TeeLogger(NullLogger(), loop="ppo").log_metrics({"lr": 0.2}, 1, prefix="train")
    assert _values(reader) == {"rl.optimizer.lr": [0.2]}


def test_a_shared_key_of_overlapping_loops_is_refused_at_registration(clean_otel: None) -> None:
    """Two rows one loop could both log are the old clash, named with the fix."""
    vocabulary.register_teed_metrics([TeedMetric("loss", "rl.a.loss", emitted_by=("sft", "dpo"))])
    with pytest.raises(ValueError, match="already teed") as raised:
        vocabulary.register_teed_metrics([TeedMetric("loss", "rl.b.loss", emitted_by=("dpo",))])
    assert "emitted_by" in str(raised.value)
    with pytest.raises(ValueError, match="already teed"):
        vocabulary.register_teed_metrics([TeedMetric("loss", "rl.c.loss")])  # every loop
    vocabulary.register_teed_metrics([TeedMetric("loss", "rl.d.loss", emitted_by=("rm",))])
    assert {row.name for row in vocabulary.teed_metrics()} == {"rl.a.loss", "rl.d.loss"}


@pytest.mark.parametrize(
    "emitted_by",
    [("sft", "sft"), ("",), (" sft",), ["sft"], (1,)],
    ids=["repeated", "empty", "padded", "list", "int"],
)
def test_emitted_by_is_a_tuple_of_distinct_loop_names(emitted_by: object) -> None:
    """A malformed scope is refused when the row is built, with the expected shape."""
    with pytest.raises(ValueError, match="emitted_by"):
        TeedMetric("loss", "rl.a.loss", emitted_by=emitted_by)  # type: ignore[arg-type]


FAMILY = MetricAttribute("extra", max_cardinality=16)


@pytest.fixture
def family_reader(clean_otel: None) -> Iterator[InMemoryMetricReader]:
    """A literal row of one loop beside a family every loop logs (prime-rl-shaped)."""
    vocabulary.register_teed_metrics(
        [
            TeedMetric(
                "step",
                "rl.orchestrator.step.duration",
                unit="s",
                prefix="time",
                emitted_by=("orch",),
            ),
            TeedMetric(
                "{extra}",
                "rl.trainer.time",
                unit="s",
                prefix="time",
                attributes=(FAMILY,),
                emitted_by=("trainer",),
            ),
        ]
    )
    with installed_reader() as memory:
        yield memory


def test_a_family_of_one_loop_and_a_literal_of_another_each_take_their_loops_key(
    family_reader: InMemoryMetricReader,
) -> None:
    """``time/step`` is the orchestrator's literal row there and the trainer's family here."""
    tee_metrics({"step": 3.0}, "time", loop="trainer")
    tee_metrics({"step": 5.0}, "time", loop="orch")
    series = collect(family_reader)
    assert [p.value for p in series["rl.orchestrator.step.duration"].points] == [5.0]
    points = series["rl.trainer.time"].points
    assert [(p.value, dict(p.attributes)) for p in points] == [(3.0, {"extra": "step"})]


def test_with_no_loop_a_key_a_literal_and_another_loops_family_claim_is_skipped(
    family_reader: InMemoryMetricReader,
) -> None:
    """The literal would win by rank, but the trainer's family claims the key too."""
    with caught_warnings() as caught:
        tee_metrics({"step": 3.0, "load_data": 1.0}, "time")
    series = collect(family_reader)
    assert "rl.orchestrator.step.duration" not in series
    assert [dict(p.attributes) for p in series["rl.trainer.time"].points] == [
        {"extra": "load_data"}
    ]
    assert len(caught.messages) == 1
    assert "'time/step'" in caught.messages[0]


def test_the_loggers_and_adapters_take_the_loop(
    reader: InMemoryMetricReader, tmp_path: Path
) -> None:
    """TeeLogger (or its JsonlLogger's loop), tee_flat, TrackingTee and tee_wandb_log."""

    class Sink:
        def log(self, data: object, *args: object, **kwargs: object) -> None:
            del data, args, kwargs

    with JsonlLogger(tmp_path / "run.jsonl", loop="sft") as jsonl:
        TeeLogger(jsonl).log_metrics({"loss_mean": 1.0}, 1, prefix="train")
    TeeLogger(NullLogger(), loop="dpo").log_metrics({"loss_mean": 2.0}, 1, prefix="train")
    tee_flat({"train/loss_mean": 3.0}, loop="rm")
    TrackingTee(Sink(), loop="rm").log({"train/chosen_reward": 4.0}, 1)
    tee_wandb_log(Sink(), loop="dpo")({"train/chosen_reward": 5.0})
    assert _values(reader) == {
        "rl.sft.nll.mean": [1.0],
        "rl.dpo.preference_loss.mean": [2.0],
        "rl.rm.ranking_loss.mean": [3.0],
        "rl.rm.score.chosen": [4.0],
        "rl.dpo.implicit_reward.chosen": [5.0],
    }


class NullLogger:
    """A logger with ``log_metrics`` that keeps nothing."""

    def log_metrics(self, metrics: object, step: int, prefix: str = "") -> None:
        """Drop the call."""
        del metrics, step, prefix


def test_a_wandb_media_dict_is_one_value_never_sub_keys(clean_otel: None) -> None:
    """``{"_type": "table-file", "nrows": 12}`` under an open family feeds no bogus points."""
    vocabulary.register_teed_metrics(
        [TeedMetric("{extra}", "rl.train.extra", attributes=(FAMILY,))]
    )

    class Sink:
        def log(self, data: object, *args: object, **kwargs: object) -> None:
            del data, args, kwargs

    with installed_reader() as memory, caught_warnings():
        table = {"_type": "table-file", "ncols": 3, "nrows": 12}
        tee_wandb_log(Sink())({"train/generated_samples": table, "train/loss": 0.5})
        points = collect(memory)["rl.train.extra"].points
    assert [(p.value, dict(p.attributes)) for p in points] == [(0.5, {"extra": "loss"})]


def test_a_non_scalar_row_gets_no_instrument_and_its_values_are_skipped_quietly(
    clean_otel: None,
) -> None:
    """A W&B table under its own row: nothing exported, no warning, not even in strict mode."""
    vocabulary.register_teed_metrics(
        [
            TeedMetric("generated_samples", "rl.ppo.generated_samples", value_type="table"),
            TeedMetric("{extra}", "rl.train.extra", attributes=(FAMILY,)),
        ]
    )
    table = {"_type": "table-file", "ncols": 3, "nrows": 12}
    with installed_reader() as memory, caught_warnings() as caught:
        tee_metrics({"generated_samples": table, "loss": 0.5}, "train", strict=True)
        tee_metrics({"generated_samples": 3.0}, "train", strict=True)
        series = collect(memory)
    assert "rl.ppo.generated_samples" not in series
    assert [p.value for p in series["rl.train.extra"].points] == [0.5]
    assert caught.messages == []


@pytest.mark.parametrize("value_type", ["tabel", "", "Number", None])
def test_value_type_is_one_of_the_value_types(value_type: object) -> None:
    """A misspelt value type is refused with the list."""
    with pytest.raises(ValueError, match="value_type"):
        TeedMetric("k", "rl.k", value_type=value_type)  # type: ignore[arg-type]


def test_the_adopt_guide_s_in_memory_reader_recipe_reads_the_points_back(
    clean_otel: None,
) -> None:
    """What docs/guide/adopt.md shows: configure(meter_provider=...), tee, read back."""
    from opentelemetry.sdk.metrics import MeterProvider

    from metric_catalog import exporters

    vocabulary.register_teed_metrics(TRAINER_ROWS)
    memory = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[memory])
    exporters.configure(meter_provider=provider)
    try:
        TeeLogger(NullLogger(), loop="dpo").log_metrics({"loss_mean": 0.4}, 1, prefix="train")
        data = memory.get_metrics_data()
        assert data is not None
        names = {
            metric.name
            for resource in data.resource_metrics
            for scope in resource.scope_metrics
            for metric in scope.metrics
        }
    finally:
        exporters.reset_for_tests()
        provider.shutdown()
    assert names == {"rl.dpo.preference_loss.mean"}


@pytest.mark.parametrize("adapter", ["tee_flat", "TrackingTee", "tee_wandb_log", "TeeLogger"])
def test_strict_mode_warns_a_misspelt_key_through_every_adapter(
    reader: InMemoryMetricReader, monkeypatch: pytest.MonkeyPatch, adapter: str
) -> None:
    """``METRIC_CATALOG_STRICT=1`` behaves the same whatever shape the logger has."""
    monkeypatch.setenv("METRIC_CATALOG_STRICT", "1")  # read when the first tee builds the group

    class Sink:
        def log(self, data: object, *args: object, **kwargs: object) -> None:
            del data, args, kwargs

    with caught_warnings() as caught:
        if adapter == "tee_flat":
            tee_flat({"train/lr_typo": 0.1}, loop="sft")
        elif adapter == "TrackingTee":
            TrackingTee(Sink(), loop="sft").log({"train/lr_typo": 0.1}, 1)
        elif adapter == "tee_wandb_log":
            tee_wandb_log(Sink(), loop="sft")({"train/lr_typo": 0.1})
        else:
            TeeLogger(NullLogger(), loop="sft").log_metrics({"lr_typo": 0.1}, 1, prefix="train")
    assert len(caught.messages) == 1, caught.messages
    assert "'train/lr_typo'" in caught.messages[0]
    assert "no row declares it" in caught.messages[0]
