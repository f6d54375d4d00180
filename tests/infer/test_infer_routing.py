"""``infer`` reads a flat log's keys as live-check and the tee route them: a key a row
declares under its prefix (``train/loss`` for ``loss`` under ``train``) is no new row."""

from __future__ import annotations

import json
from pathlib import Path

from codegen.infer.observe import observe
from tests.catalog_projects import loaded_catalog

CATALOG = """\
owner: trainer.train
module: train
description: Training and evaluation metrics.
prefix: train
attributes:
  - name: rl.dataset
    type: string
    description: The evaluation data set.
    max_cardinality: "16"
loops:
  - name: ppo
    description: PPO.
    signature: [train/loss]
    step_keys:
      - {key: eval/step, prefix: eval}
teed:
  - logger_key: loss
    name: rl.train.loss
    kind: gauge
    unit: "1"
    description: Loss of the step.
  - logger_key: "{rl.dataset}"
    prefix: eval
    name: rl.eval.score
    kind: gauge
    unit: "1"
    description: Score on one evaluation data set.
    attributes: [{ref: rl.dataset}]
"""


def test_infer_drafts_only_the_flat_keys_no_row_takes(tmp_path: Path) -> None:
    catalog = loaded_catalog(tmp_path / "project", CATALOG)
    log = tmp_path / "run.jsonl"
    line = {"step": 1, "train/loss": 0.5, "eval/aime": 0.3, "eval/step": 1, "train/lr": 1e-5}
    log.write_text(json.dumps(line) + "\n", encoding="utf-8")
    seen = observe([[str(log)]], catalog, input_format="flat-jsonl")
    assert sorted(seen.keys) == [("", "train/lr")]
