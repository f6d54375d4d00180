"""Training steps: a record logged outside them (an evaluation before the first or after
the last training step) does not make training rows due.

A trainer that runs ``num_steps`` steps and then evaluates once more logs that final
evaluation at ``num_steps + 1``; a resumed run evaluates at the step it resumed from.
Only the steps of keys of rows that are not periodic (``every``) are training steps.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from codegen.catalog.model import Catalog
from codegen.live_check import LiveCheckReport, check_stream
from tests.catalog_projects import loaded_catalog

CATALOG = """\
owner: trainer
module: train
description: A trainer that evaluates every 10 steps and saves every 20.
loops:
  - name: sft
    description: Supervised fine-tuning.
    signature: [train/loss]
    step_keys:
      - key: train/global_step
        prefix: train
      - key: eval/global_step
        prefix: eval
teed:
  - logger_key: loss
    prefix: train
    name: rl.sft.loss
    kind: gauge
    unit: ""
    description: Loss of the step.
    requirement_level: required
    emitted_by: [sft]
  - logger_key: score
    prefix: eval
    name: rl.sft.eval.score
    kind: gauge
    unit: ""
    description: Evaluation score, every 10 steps.
    requirement_level: required
    every: "10"
    emitted_by: [sft]
  - logger_key: save_seconds
    prefix: train
    name: rl.sft.checkpoint.duration
    kind: gauge
    unit: s
    description: Seconds the checkpoint of every 20th step took.
    requirement_level: required
    every: "20"
    emitted_by: [sft]
"""


def _catalog(tmp_path: Path) -> Catalog:
    return loaded_catalog(tmp_path / "project", CATALOG)


def _check(tmp_path: Path, lines: list[dict[str, Any]]) -> LiveCheckReport:
    data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    return check_stream(io.BytesIO(data), _catalog(tmp_path), input_format="flat-jsonl")


def _missing(report: LiveCheckReport) -> list[str]:
    return sorted(f.key for f in report.findings if f.kind == "missing")


def _train(steps: range) -> list[dict[str, Any]]:
    return [{"step": s, "train/loss": 0.5} for s in steps]


def _eval(step: int) -> dict[str, Any]:
    return {"step": step, "eval/score": 0.7}


@pytest.mark.parametrize(
    ("lines", "last_step"),
    [
        pytest.param([*_train(range(1, 20)), _eval(20)], 19, id="final-eval-at-num-steps-plus-1"),
        pytest.param([_eval(20), *_train(range(21, 40)), _eval(30)], 39, id="eval-before-first"),
        pytest.param([*_train(range(5, 20)), _eval(10), _eval(20)], 19, id="evals-in-and-after"),
    ],
)
def test_an_evaluation_outside_the_training_steps_makes_no_checkpoint_due(
    tmp_path: Path, lines: list[dict[str, Any]], last_step: int
) -> None:
    """The checkpoint every 20 steps was never due within the training steps."""
    report = _check(tmp_path, lines)
    assert _missing(report) == []
    assert report.last_step == last_step
    checkpoint = next(s for s in report.rows if s.row.name == "rl.sft.checkpoint.duration")
    assert checkpoint.presence == "not_due"


def test_a_checkpoint_missing_inside_the_training_steps_is_still_missing(tmp_path: Path) -> None:
    """Training reached step 25 and the final evaluation came at 26: step 20's checkpoint
    was due and never logged."""
    report = _check(tmp_path, [*_train(range(1, 26)), _eval(10), _eval(20), _eval(26)])
    assert _missing(report) == ["save_seconds"]
    assert report.last_step == 25


def test_a_run_of_evaluations_only_is_judged_by_their_steps(tmp_path: Path) -> None:
    """With no training row logged, every step the worker logged is its span (as before):
    an evaluation at step 20 makes the checkpoint of step 20 due."""
    report = _check(tmp_path, [_eval(10), _eval(20)])
    assert "save_seconds" in _missing(report)
    assert report.last_step == 20


def test_step_keys_keep_the_final_evaluation_out_of_the_training_steps(tmp_path: Path) -> None:
    """W&B-style calls without a step: the step keys say training ran to 19 and the final
    evaluation was at 20, in one record; no checkpoint was due."""
    lines: list[dict[str, Any]] = [
        {"step": s, "train/loss": 0.5, "train/global_step": s} for s in range(1, 20)
    ]
    lines.append({"step": 20, "eval/score": 0.7, "eval/global_step": 20})
    report = _check(tmp_path, lines)
    assert _missing(report) == []
    assert report.last_step == 19
