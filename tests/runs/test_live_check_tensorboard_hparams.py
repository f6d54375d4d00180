"""A TensorBoard run's hparams are its configuration: conditions over ``config.<path>`` are judged.

Lightning's ``TensorBoardLogger.log_hyperparams`` (NeMo and NeMo-Aligner call it with the
whole Hydra configuration) writes the hparams plugin's summaries into the event file:
the configuration flattened with ``/``, a null written as the text ``"None"``. So do
``add_hparams`` of tensorboardX and torch and Hugging Face's ``TensorBoardCallback``
(flat keys). live-check reads the session start's hparams as the run's configuration, so
a row its condition rules out is ``not_applicable`` and one it requires is ``missing``;
before, both were ``conditional`` information and the three summaries were counted as
"empty" skipped values. Files are written by the real tensorboardX.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tensorboardX import SummaryWriter
from tensorboardX.summary import hparams

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.live_check import check_file

CATALOG = """\
owner: nemo_aligner.algorithms.ppo
module: ppo
description: Rows of an actor's optimizer step, some logged only as configured.
prefix: train_optim
teed:
  - logger_key: loss
    name: rl.na.actor.loss
    kind: gauge
    unit: ""
    description: Loss of the optimizer step.
    requirement_level: required
  - logger_key: grad_norm
    name: rl.na.actor.grad_norm
    kind: gauge
    unit: ""
    description: Gradient norm before clipping.
    requirement_level: conditionally_required
    condition: "config.trainer.ppo.gradient_clip_val != null
      and config.trainer.ppo.gradient_clip_val > 0"
  - logger_key: seq_len
    name: rl.na.actor.seq_len
    kind: gauge
    unit: "{token}"
    description: Length the rollout batch is padded to, when one is configured.
    requirement_level: conditionally_required
    condition: "config.trainer.ppo.rollout_batch_seq_length != null"
  - logger_key: hp_metric
    prefix: ""
    name: rl.na.hp_metric
    kind: gauge
    unit: ""
    description: Lightning's placeholder metric of the hyperparameter view.
"""


@pytest.fixture(scope="module")
def hparams_catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """The catalog of :data:`CATALOG`."""
    folder = tmp_path_factory.mktemp("catalog")
    (folder / "ppo.yaml").write_text(CATALOG, encoding="utf-8")
    result = load_and_check([folder / "ppo.yaml"], root=folder)
    assert result.ok, [str(d) for d in result.diagnostics]
    assert result.catalog is not None
    return result.catalog


def _lightning_run(folder: Path, clip: float | None) -> None:
    """A run as Lightning's TensorBoardLogger writes it: ``hp_metric`` and the hparams
    summaries from ``log_hyperparams`` (the config flattened with ``/``, None as "None"),
    then ``add_scalar`` per key; no grad_norm or seq_len is logged."""
    flat: dict[str, Any] = {
        "trainer/ppo/gradient_clip_val": "None" if clip is None else clip,
        "trainer/ppo/rollout_batch_seq_length": "None",
        "trainer/ppo/normalize_advantages": True,
        "model/global_batch_size": 64,
    }
    writer = SummaryWriter(logdir=str(folder))
    writer.add_scalar("hp_metric", -1, 0)
    file_writer = writer._get_file_writer()
    for summary in hparams(flat, {"hp_metric": -1}):
        file_writer.add_summary(summary)
    for step in range(3):
        writer.add_scalar("train_optim/loss", 0.5, step)
    writer.close()


@pytest.mark.parametrize(
    ("clip", "grad_norm"),
    [(0.0, "not_applicable"), (None, "not_applicable"), (1.0, "missing")],
    ids=["zero", "null", "clipping"],
)
def test_a_condition_over_a_tensorboard_runs_hparams_is_judged(
    hparams_catalog: Catalog, tmp_path: Path, clip: float | None, grad_norm: str
) -> None:
    """Clipping 0 or null: grad_norm is not applicable; 1.0 and never logged: missing.
    ``rollout_batch_seq_length`` was written as the text "None", read as null: seq_len is
    ruled out. The hparams summaries are read, not counted as skipped values."""
    _lightning_run(tmp_path / "run" / "version_0", clip)
    report = check_file(str(tmp_path / "run"), hparams_catalog)
    states = {s.row.name: s.presence for s in report.rows if not s.logged}
    assert states == {"rl.na.actor.grad_norm": grad_norm, "rl.na.actor.seq_len": "not_applicable"}
    found = [(f.kind, f.qualified_key) for f in report.findings]
    assert found == ([("missing", "train_optim/grad_norm")] if grad_norm == "missing" else [])
    notes = [n.message for n in report.notices if n.kind == "skipped_summaries"]
    assert all("empty" not in message and "hparams metadata 2" in message for message in notes)


def test_flat_hparams_of_add_hparams_are_the_configuration(
    hparams_catalog: Catalog, tmp_path: Path
) -> None:
    """tensorboardX's ``add_hparams`` (flat keys, as Hugging Face's callback logs its
    arguments) is read too; a key that is not nested stays at the top."""
    writer = SummaryWriter(logdir=str(tmp_path / "run"))
    writer.add_hparams({"learning_rate": 1e-5, "trainer/ppo/gradient_clip_val": 0.0}, {})
    writer.add_scalar("train_optim/loss", 0.5, 1)
    writer.close()
    report = check_file(str(tmp_path / "run"), hparams_catalog)
    states = {s.row.name: s.presence for s in report.rows if not s.logged}
    assert states["rl.na.actor.grad_norm"] == "not_applicable"
    assert [(f.kind, f.qualified_key) for f in report.findings] == []


def test_a_run_config_file_wins_over_the_hparams(hparams_catalog: Catalog, tmp_path: Path) -> None:
    """``--run-config`` still decides, as over any configuration a log holds."""
    _lightning_run(tmp_path / "run", 0.0)
    config = {"trainer": {"ppo": {"gradient_clip_val": 1.0, "rollout_batch_seq_length": 8}}}
    report = check_file(str(tmp_path / "run"), hparams_catalog, run_config=config)
    found = [(f.kind, f.qualified_key) for f in report.findings]
    assert found == [("missing", "train_optim/grad_norm"), ("missing", "train_optim/seq_len")]
