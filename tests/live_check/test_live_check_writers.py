"""Writers: processes of one loop writing into one run, each with its own step key.

A rollout manager, an actor and a critic log into one W&B run; each dict carries the
writer's own counter (``rollout/step``, ``actor/update_step``), and a row naming its writer
is judged at that counter, not at the loop's ``train/global_step``.
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
owner: areal.trainer
module: ppo_async
description: An asynchronous PPO job whose processes share one run.
loops:
  - name: ppo_async
    description: Asynchronous PPO, a rollout manager feeding an actor and a critic.
    signature: [train/grad_norm]
    step_keys:
      - key: train/global_step
    writers:
      - name: rollout
        description: The rollout manager, counting the batches it generated.
        step_key: {key: rollout/step, prefix: rollout}
      - name: actor
        description: The actor's trainer, counting its own updates.
        step_key: {key: actor/update_step}
teed:
  - logger_key: grad_norm
    prefix: train
    name: rl.ppo.grad_norm
    kind: gauge
    unit: ""
    description: Gradient norm of the step.
    emitted_by: [ppo_async]
  - logger_key: throughput
    prefix: rollout
    name: rl.rollout.throughput
    kind: gauge
    unit: "{token}/s"
    description: Tokens the rollout manager generated per second.
    emitted_by: [ppo_async]
    writer: rollout
  - logger_key: policy/loss
    prefix: ""
    name: rl.actor.policy_loss
    kind: gauge
    unit: ""
    description: The actor's policy loss of its update.
    emitted_by: [ppo_async]
    writer: actor
"""


def _catalog(tmp_path: Path) -> Catalog:
    return loaded_catalog(tmp_path / "project", CATALOG)


def _flat(lines: list[dict[str, Any]]) -> io.BytesIO:
    return io.BytesIO(b"".join(json.dumps(line).encode() + b"\n" for line in lines))


def _last_steps(report: LiveCheckReport) -> dict[str, int | None]:
    return {s.row.name: s.last_step for s in report.rows if s.logged}


def test_a_writer_row_is_at_its_writer_step_key(tmp_path: Path) -> None:
    """The actor's loss is at the actor's update counter, not at the loop's step key that
    covers every key; the rollout row at the rollout counter; the writers' step keys are
    no undeclared keys."""
    lines = [
        {
            "step": call,
            "train/global_step": 100 * call,
            "train/grad_norm": 1.0,
            "rollout/step": 3 * call,
            "rollout/throughput": 10.0,
            "actor/update_step": 7 * call,
            "policy/loss": 0.5,
        }
        for call in (1, 2)
    ]
    report = check_stream(_flat(lines), _catalog(tmp_path), input_format="flat-jsonl")
    assert [(f.kind, f.key) for f in report.findings] == []
    assert _last_steps(report) == {
        "rl.ppo.grad_norm": 200,
        "rl.rollout.throughput": 6,
        "rl.actor.policy_loss": 14,
    }


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # The actor's counter is not in the dict: the loop's step key covers the row.
        ({"step": 1, "train/global_step": 40, "policy/loss": 0.5}, 40),
        # No step key at all: the input's own step.
        ({"step": 5, "policy/loss": 0.5}, 5),
    ],
)
def test_without_its_writer_step_key_a_row_falls_back_to_the_loop(
    tmp_path: Path, line: dict[str, Any], expected: int
) -> None:
    report = check_stream(_flat([line]), _catalog(tmp_path), input_format="flat-jsonl")
    assert _last_steps(report)["rl.actor.policy_loss"] == expected


def test_a_writer_counter_does_not_move_the_loop_last_step(tmp_path: Path) -> None:
    """An actor counting micro-updates (1000 per step) says nothing of how far the loop
    trained: the run's last step is the loop's step key's."""
    lines = [
        {
            "step": call,
            "train/global_step": 10 * call,
            "train/grad_norm": 1.0,
            "actor/update_step": 1000 * call,
            "policy/loss": 0.5,
        }
        for call in (1, 2)
    ]
    report = check_stream(_flat(lines), _catalog(tmp_path), input_format="flat-jsonl")
    assert report.last_step == 20
    assert _last_steps(report)["rl.actor.policy_loss"] == 2000
