"""Teeing from loggers of other shapes: flat keys split against the declared rows."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from metric_catalog import vocabulary
from metric_catalog.adapters import (
    LightningTeeMixin,
    TrackingTee,
    TrainerCallbackTee,
    flatten_nested,
    split_flat,
    split_key,
    tee_flat,
    tee_summary_writer,
    tee_wandb_log,
)
from metric_catalog.loggers import JsonlLogger
from metric_catalog.vocabulary import MetricAttribute, TeedMetric
from tests.otel_fixtures import caught_warnings, clean_otel, collect, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

STAGE = MetricAttribute("verl.stage")
SOURCE = MetricAttribute("verl.data_source")

# verl-shaped rows: prefixes carry '/', a family under a prefix, a bare key with '/'.
ROWS = (
    TeedMetric("pg_loss", "rl.verl.actor.pg_loss", "gauge", "1", "Policy loss", prefix="actor"),
    TeedMetric("grad_norm", "rl.verl.actor.grad_norm", "gauge", "1", "Grad norm", prefix="actor"),
    TeedMetric(
        "{verl.stage}",
        "rl.verl.timing",
        "gauge",
        "s",
        "Stage time",
        prefix="timing_s",
        attributes=(STAGE,),
    ),
    TeedMetric("score/mean", "rl.verl.score.mean", "gauge", "1", "Score", prefix="critic"),
    TeedMetric("training/global_step", "rl.verl.global_step", "gauge", "1", "Step", prefix=""),
    TeedMetric("loss", "rl.hf.loss", "gauge", "1", "HF loss", prefix=""),
    # Megatron-LM's TensorBoard tags: spaces and hyphens, a timer family under a prefix.
    TeedMetric("lm loss", "rl.megatron.lm_loss", "gauge", "1", "LM loss", prefix=""),
    TeedMetric(
        "{verl.stage}-time",
        "rl.megatron.timer",
        "gauge",
        "s",
        "Timer",
        prefix="timers",
        attributes=(STAGE,),
    ),
    TeedMetric("eval.acc", "rl.wb.eval.accuracy", "gauge", "1", "Nested eval", prefix=""),
)


@pytest.fixture
def reader(clean_otel: None) -> Iterator[InMemoryMetricReader]:
    vocabulary.register_teed_metrics(ROWS)
    with installed_reader() as installed:
        yield installed


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("actor/pg_loss", ("actor", "pg_loss")),
        ("timing_s/gen", ("timing_s", "gen")),
        ("critic/score/mean", ("critic", "score/mean")),
        ("training/global_step", ("", "training/global_step")),
        ("loss", ("", "loss")),
        ("actor/unknown", ("", "actor/unknown")),
        ("", ("", "")),
        ("/leading", ("", "/leading")),
    ],
)
def test_a_flat_key_splits_at_the_longest_declared_prefix_that_routes(
    reader: InMemoryMetricReader, key: str, expected: tuple[str, str]
) -> None:
    assert split_key(key) == expected


def test_split_flat_groups_keys_by_prefix(reader: InMemoryMetricReader) -> None:
    assert split_flat({"actor/pg_loss": 1, "actor/grad_norm": 2, "loss": 3, 7: 4}) == {
        "actor": {"pg_loss": 1, "grad_norm": 2},
        "": {"loss": 3, 7: 4},
    }


def test_tee_flat_records_each_key_on_its_series_with_captures(
    reader: InMemoryMetricReader,
) -> None:
    tee_flat({"actor/pg_loss": 0.5, "timing_s/gen": 2.0, "training/global_step": 3.0})
    series = collect(reader)
    assert series["rl.verl.actor.pg_loss"].value == 0.5
    assert series["rl.verl.global_step"].value == 3.0
    (point,) = series["rl.verl.timing"].points
    assert dict(point.attributes) == {"verl.stage": "gen"}


def test_a_flat_dict_keyed_by_logged_key_reaches_every_literal_row(
    reader: InMemoryMetricReader,
) -> None:
    """``{ROW.logged_key: v}`` is exactly what tee_flat splits back onto ROW's series."""
    literal = [row for row in ROWS if "{" not in row.logger_key]
    tee_flat({row.logged_key: float(index) for index, row in enumerate(literal)})
    series = collect(reader)
    assert {row.name: series[row.name].value for row in literal} == {
        row.name: float(index) for index, row in enumerate(literal)
    }


class FakeTracking:
    """verl's Tracking.log(data, step, backend=None), recording its calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[dict[str, Any], int, Any]] = []
        self.project = "p"

    def log(self, data: dict[str, Any], step: int, backend: Any = None) -> None:
        self.calls.append((data, step, backend))


def test_tracking_tee_logs_then_tees_and_passes_other_attributes(
    reader: InMemoryMetricReader,
) -> None:
    inner = FakeTracking()
    tracking = TrackingTee(inner)
    tracking.log(data={"actor/pg_loss": 0.25}, step=4)
    tracking.log({"actor/grad_norm": 1.5}, 5, backend=["console"])
    assert inner.calls == [
        ({"actor/pg_loss": 0.25}, 4, None),
        ({"actor/grad_norm": 1.5}, 5, ["console"]),
    ]
    assert tracking.project == "p"
    series = collect(reader)
    assert series["rl.verl.actor.pg_loss"].value == 0.25
    assert series["rl.verl.actor.grad_norm"].value == 1.5


def test_tracking_tee_tees_even_when_the_wrapped_logger_raises(
    reader: InMemoryMetricReader,
) -> None:
    class Broken:
        def log(self, data: dict[str, Any], step: int) -> None:
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        TrackingTee(Broken()).log({"actor/pg_loss": 0.75}, 1)
    assert collect(reader)["rl.verl.actor.pg_loss"].value == 0.75


def test_tracking_tee_refuses_an_object_without_log() -> None:
    with pytest.raises(TypeError, match="needs an object with a log method"):
        TrackingTee(object())


def test_wandb_log_wrapper_keeps_wandbs_signature(reader: InMemoryMetricReader) -> None:
    seen: list[tuple[Any, ...]] = []

    class Run:
        def log(
            self, data: dict[str, Any], step: int | None = None, commit: bool | None = None
        ) -> None:
            seen.append((data, step, commit))

    log = tee_wandb_log(Run())
    log({"loss": 0.4}, step=3, commit=False)
    assert seen == [({"loss": 0.4}, 3, False)]
    assert collect(reader)["rl.hf.loss"].value == 0.4


def test_wandb_log_wrapper_tees_a_nested_dict_under_its_dotted_path(
    reader: InMemoryMetricReader,
) -> None:
    """W&B stores {"eval": {"acc": x}} as the path eval/acc, which live-check reads as the
    key eval.acc: the tee sends it to the same row."""
    seen: list[dict[str, Any]] = []

    class Run:
        def log(self, data: dict[str, Any], step: int | None = None) -> None:
            seen.append(data)

    log = tee_wandb_log(Run())
    log({"eval": {"acc": 0.75}, "actor/pg_loss": 0.5}, step=1)
    assert seen == [{"eval": {"acc": 0.75}, "actor/pg_loss": 0.5}]  # wandb gets it as given
    collected = collect(reader)
    assert collected["rl.wb.eval.accuracy"].value == 0.75
    assert collected["rl.verl.actor.pg_loss"].value == 0.5


@pytest.mark.parametrize(
    ("data", "flat"),
    [
        ({"a": 1}, {"a": 1}),
        ({"a": {"b": {"c": 1}}, "d": 2}, {"a.b.c": 1, "d": 2}),
        ({"a": {}}, {"a": {}}),
        ({"a/b": {"c.d": 1}}, {"a/b.c.d": 1}),
    ],
)
def test_flatten_nested_joins_paths_with_dots(data: dict[str, Any], flat: dict[str, Any]) -> None:
    assert dict(flatten_nested(data)) == flat


def test_flatten_nested_stops_at_a_cycle() -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    (key,) = flatten_nested({"x": cyclic})
    assert key.startswith("x.self.self")


def test_trainer_callback_tees_on_log_and_ignores_other_events(
    reader: InMemoryMetricReader,
) -> None:
    callback = TrainerCallbackTee()
    # The Trainer's CallbackHandler calls getattr(callback, event)(args, state, control, **kw).
    callback.on_train_begin(None, None, None)
    callback.on_log(None, None, None, logs={"loss": 1.25, "epoch": 0.5})
    callback.on_log(None, None, None, logs=None)
    assert collect(reader)["rl.hf.loss"].value == 1.25
    with pytest.raises(AttributeError):
        callback.not_an_event  # noqa: B018


def test_trainer_callback_runs_under_transformers_own_callback_handler(
    reader: InMemoryMetricReader, tmp_path: Path
) -> None:
    """The real CallbackHandler dispatches every event; on_log tees and writes the dict."""
    trainer_callback = pytest.importorskip("transformers.trainer_callback")
    state = trainer_callback.TrainerState(global_step=7)
    control = trainer_callback.TrainerControl()
    with JsonlLogger(tmp_path / "run.jsonl") as writer:
        callback = TrainerCallbackTee(logger=writer)
        handler = trainer_callback.CallbackHandler([callback], None, None, None, None)
        handler.on_train_begin(None, state, control)
        handler.on_step_end(None, state, control)
        handler.on_log(None, state, control, {"loss": 1.25, "actor/pg_loss": 0.5, "epoch": 0.5})
        handler.on_train_end(None, state, control)
    assert collect(reader)["rl.hf.loss"].value == 1.25
    assert collect(reader)["rl.verl.actor.pg_loss"].value == 0.5
    (line,) = [json.loads(text) for text in (tmp_path / "run.jsonl").read_text().splitlines()]
    assert line == {
        "step": 7,
        "prefix": "",
        "metrics": {"loss": 1.25, "actor/pg_loss": 0.5, "epoch": 0.5},
    }
    # Every event transformers' TrainerCallback declares is answered.
    for name in dir(trainer_callback.TrainerCallback):
        if name.startswith("on_"):
            assert getattr(callback, name)(None, state, control) is None


def test_trainer_callback_tees_even_when_its_logger_raises(reader: InMemoryMetricReader) -> None:
    class Broken:
        def log_metrics(self, metrics: dict[str, Any], step: int, prefix: str = "") -> None:
            raise OSError("disk full")

    callback = TrainerCallbackTee(logger=Broken())
    with pytest.raises(OSError, match="disk full"):
        callback.on_log(None, None, None, logs={"loss": 0.75})
    assert collect(reader)["rl.hf.loss"].value == 0.75
    with pytest.raises(TypeError, match="log_metrics"):
        TrainerCallbackTee(logger=object())


def test_lightning_mixin_tees_what_log_metrics_receives(reader: InMemoryMetricReader) -> None:
    class CSVLogger:
        def __init__(self) -> None:
            self.rows: list[tuple[dict[str, float], int | None]] = []

        def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
            self.rows.append((metrics, step))

    class TeedCSV(LightningTeeMixin, CSVLogger):
        pass

    logger = TeedCSV()
    logger.log_metrics({"loss": 2.0, "actor/pg_loss": 0.1}, step=9)
    assert logger.rows == [({"loss": 2.0, "actor/pg_loss": 0.1}, 9)]
    series = collect(reader)
    assert series["rl.hf.loss"].value == 2.0
    assert series["rl.verl.actor.pg_loss"].value == 0.1


class FakeSummaryWriter:
    """torch.utils.tensorboard.SummaryWriter's add_scalar signature, recording its calls."""

    def __init__(self) -> None:
        self.scalars: list[tuple[str, Any, int | None]] = []
        self.log_dir = "runs/x"

    def add_scalar(  # noqa: PLR0917 - torch's signature
        self,
        tag: str,
        scalar_value: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        new_style: bool = False,
        double_precision: bool = False,
    ) -> None:
        self.scalars.append((tag, scalar_value, global_step))


def test_summary_writer_tee_writes_then_tees_each_scalar(reader: InMemoryMetricReader) -> None:
    """Megatron-LM's add_scalar calls: a tag with a space, a timer under a prefix, vs samples."""
    inner = FakeSummaryWriter()
    writer = tee_summary_writer(inner)
    assert writer is inner
    writer.add_scalar("lm loss", 2.5, 10)
    writer.add_scalar("lm loss vs samples", 2.5, 5120)  # undeclared here: written, not teed
    writer.add_scalar("timers/forward-backward-time", 0.75, global_step=10, walltime=1.0)
    assert inner.scalars == [
        ("lm loss", 2.5, 10),
        ("lm loss vs samples", 2.5, 5120),
        ("timers/forward-backward-time", 0.75, 10),
    ]
    series = collect(reader)
    assert series["rl.megatron.lm_loss"].value == 2.5
    assert series["rl.megatron.timer"].value == 0.75
    (point,) = series["rl.megatron.timer"].points
    assert dict(point.attributes) == {"verl.stage": "forward-backward"}


def test_a_teed_summary_writer_is_still_a_summary_writer(reader: InMemoryMetricReader) -> None:
    """Megatron-LM's Timers.write only writes to ``isinstance(writer, SummaryWriter)``."""
    writer = tee_summary_writer(FakeSummaryWriter())
    tee_summary_writer(writer)  # a second call changes nothing: one write, one tee

    def timers_write(names: dict[str, float], writer: object, iteration: int) -> None:
        for name, value in names.items():
            if isinstance(writer, FakeSummaryWriter):
                writer.add_scalar(name + "-time", value, iteration)

    timers_write({"timers/forward-backward": 0.5}, writer, 20)
    assert writer.scalars == [("timers/forward-backward-time", 0.5, 20)]
    (point,) = collect(reader)["rl.megatron.timer"].points
    assert point.value == 0.5


def test_summary_writer_tee_tees_even_when_the_writer_raises(
    reader: InMemoryMetricReader,
) -> None:
    class Broken:
        def add_scalar(self, tag: str, scalar_value: Any, global_step: int | None = None) -> None:
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        tee_summary_writer(Broken()).add_scalar("lm loss", 3.0, 1)
    assert collect(reader)["rl.megatron.lm_loss"].value == 3.0


def test_summary_writer_tee_refuses_an_object_without_add_scalar() -> None:
    with pytest.raises(TypeError, match="needs a writer with an add_scalar method"):
        tee_summary_writer(object())


def test_summary_writer_tee_around_a_real_tensorboardx_writer(
    reader: InMemoryMetricReader, tmp_path: Any
) -> None:
    """With tensorboardX installed: the real writer writes its event file, the tee records."""
    tensorboardx = pytest.importorskip("tensorboardX")
    writer = tee_summary_writer(tensorboardx.SummaryWriter(str(tmp_path)))
    assert isinstance(writer, tensorboardx.SummaryWriter)
    writer.add_scalar("lm loss", 1.75, 3)
    writer.close()
    assert list(tmp_path.glob("events.out.tfevents.*"))
    assert collect(reader)["rl.megatron.lm_loss"].value == 1.75


class Hostile:
    """A key that hashes but refuses every comparison."""

    def __hash__(self) -> int:
        return 1

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no comparison")


@pytest.mark.parametrize(
    "metrics",
    [None, [("actor/pg_loss", 1.0)], {Hostile(): 1.0}, {"actor/pg_loss": object()}],
    ids=["none", "list", "hostile-key", "object-value"],
)
def test_tee_flat_never_raises(reader: InMemoryMetricReader, metrics: Any) -> None:
    with caught_warnings():
        tee_flat(metrics)
