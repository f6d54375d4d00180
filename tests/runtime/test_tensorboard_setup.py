"""TensorBoard from the catalog: descriptions and a custom-scalars layout, read back with
TensorBoard's own event reader and the custom_scalars plugin's layout proto."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from metric_catalog import vocabulary
from metric_catalog.tensorboard_setup import (
    describe_summary_writer,
    scalars_layout,
    tag_pattern,
)
from metric_catalog.vocabulary import MetricAttribute, TeedMetric

tensorboard_x = pytest.importorskip("tensorboardX")
accumulator = pytest.importorskip("tensorboard.backend.event_processing.plugin_event_accumulator")
layout_pb2 = pytest.importorskip("tensorboard.plugins.custom_scalar.layout_pb2")

PHASE = MetricAttribute("rl.phase", values=("train", "val"))
TRAINER = (
    TeedMetric("loss", "rl.loss", "gauge", "", "Training loss of the step."),
    TeedMetric("step_time", "rl.step.duration", "gauge", "s", "Wall time of the step.",
               logged_unit="ms"),
    TeedMetric("{rl.phase}/accuracy", "rl.accuracy", "gauge", "1", "Accuracy of a phase.",
               prefix="eval", attributes=(PHASE,)),
)  # fmt: skip
ROLLOUT = (TeedMetric("reward", "rl.reward", "gauge", "1", "Mean rollout reward."),)


@pytest.fixture
def rows() -> Any:
    vocabulary._reset_for_tests()
    vocabulary.register_teed_metrics(TRAINER, owner="myrl.trainer")
    vocabulary.register_teed_metrics(ROLLOUT, owner="myrl.rollout")
    yield
    vocabulary._reset_for_tests()


def write(folder: Path, *, describe: bool) -> None:
    writer = tensorboard_x.SummaryWriter(str(folder))
    if describe:
        assert describe_summary_writer(writer) is writer
        assert describe_summary_writer(writer) is writer  # twice is once
    for step in range(1, 4):
        writer.add_scalar("train/loss", 1.0 / step, step)
        writer.add_scalar("train/step_time", 250.0 * step, step)
        writer.add_scalar("eval/val/accuracy", 0.5, step)
        writer.add_scalar("train/reward", 0.1 * step, global_step=step)
        writer.add_scalar("not/declared", 3.0, step)
        writer.add_scalar("eval/test/accuracy", 0.5, step)  # not a value rl.phase takes
    writer.close()


def read(folder: Path) -> Any:
    events = accumulator.EventAccumulator(str(folder))
    events.Reload()
    return events


def test_each_declared_scalar_reads_back_with_its_description_unit_and_owner(
    rows: None, tmp_path: Path
) -> None:
    write(tmp_path, describe=True)
    events = read(tmp_path)
    described = {
        tag: events.SummaryMetadata(tag).summary_description
        for tag in ("train/loss", "train/step_time", "eval/val/accuracy", "train/reward")
    }
    assert described == {
        "train/loss": "Training loss of the step. Owner: myrl.trainer. Series: rl.loss.",
        "train/step_time": "Wall time of the step. Unit: ms. Owner: myrl.trainer. "
        "Series: rl.step.duration.",
        "eval/val/accuracy": "Accuracy of a phase. Owner: myrl.trainer. Series: rl.accuracy.",
        "train/reward": "Mean rollout reward. Owner: myrl.rollout. Series: rl.reward.",
    }
    assert events.SummaryMetadata("not/declared").summary_description == ""
    # routed as the tee routes it: an enum placeholder takes only its values
    assert events.SummaryMetadata("eval/test/accuracy").summary_description == ""
    # the description costs no point: every step of every tag is there
    for tag in ("train/loss", "train/step_time", "not/declared"):
        assert [event.step for event in events.Tensors(tag)] == [1, 2, 3]


def test_the_layout_reads_back_one_category_per_owner_and_a_chart_per_row(
    rows: None, tmp_path: Path
) -> None:
    write(tmp_path, describe=True)
    events = read(tmp_path)
    # As TensorBoard's custom_scalar plugin reads it: the config tag's string tensor.
    assert list(events.PluginTagToContent("custom_scalars")) == ["custom_scalars__config__"]
    (event,) = events.Tensors("custom_scalars__config__")
    layout = layout_pb2.Layout.FromString(event.tensor_proto.string_val[0])
    found = {
        category.title: {chart.title: list(chart.multiline.tag) for chart in category.chart}
        for category in layout.category
    }
    assert found == {
        "myrl.rollout": {"rl.reward": ["train/reward"]},
        "myrl.trainer": {
            "rl.accuracy": ["^eval/.+/accuracy$"],
            "rl.loss": ["train/loss"],
            "rl.step.duration": ["train/step_time"],
        },
    }
    assert scalars_layout()["myrl.trainer"]["rl.loss"] == ["Multiline", ["train/loss"]]


def test_an_undescribed_writer_writes_neither_descriptions_nor_a_layout(
    rows: None, tmp_path: Path
) -> None:
    write(tmp_path, describe=False)
    events = read(tmp_path)
    assert events.SummaryMetadata("train/loss").summary_description == ""
    with pytest.raises(KeyError, match="custom_scalars"):
        events.PluginTagToContent("custom_scalars")


class TorchLikeWriter:
    """A writer whose add_scalar takes no description (torch's signature)."""

    def __init__(self, folder: Path) -> None:
        self.inner = tensorboard_x.SummaryWriter(str(folder))

    def add_scalar(
        self, tag: str, scalar_value: float, global_step: int | None = None,
        walltime: float | None = None, new_style: bool = False,
    ) -> None:  # fmt: skip
        self.inner.add_scalar(tag, scalar_value, global_step, walltime)

    def _get_file_writer(self) -> Any:
        return self.inner._get_file_writer()


def test_a_writer_without_a_description_argument_is_described_through_its_file_writer(
    rows: None, tmp_path: Path
) -> None:
    writer = TorchLikeWriter(tmp_path)
    describe_summary_writer(writer, layout=False)
    for step in (1, 2):
        writer.add_scalar("train/loss", 0.5, step)
    writer.inner.close()
    events = read(tmp_path)
    assert events.SummaryMetadata("train/loss").summary_description.startswith("Training loss")
    assert [event.step for event in events.Tensors("train/loss")] == [1, 2]


@pytest.mark.parametrize(
    ("prefix", "key", "tag", "matches"),
    [
        ("eval", "{rl.phase}/accuracy", "eval/val/accuracy", True),
        ("eval", "{rl.phase}/accuracy", "eval/accuracy", False),
        ("train", "a.b", "train/a.b", True),
        ("train", "a.b", "train/aXb", False),
    ],
)
def test_a_rows_tag_pattern_matches_its_tags_only(
    prefix: str, key: str, tag: str, matches: bool
) -> None:
    import re

    assert (re.fullmatch(tag_pattern(prefix, key), tag) is not None) is matches


def test_importing_the_module_imports_no_tensorboard() -> None:
    code = (
        "import sys, metric_catalog.tensorboard_setup; "
        "print(sorted(m for m in sys.modules if m.startswith(('tensorboard', 'opentelemetry'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
