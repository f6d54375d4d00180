"""Step keys: a loop names the logged key that holds its step (``train/global_step``).

OpenRLHF calls ``wandb.log`` without ``step=``, so the backend's step counts calls and
the real step is the logged ``train/global_step``; prime-rl logs ``step`` in every dict.
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
owner: openrlhf.trainer
module: sft
description: The SFT trainer.
loops:
  - name: sft
    description: Supervised fine-tuning.
    signature: [train/gpt_loss]
    step_keys:
      - key: train/global_step
        prefix: train
      - key: eval/global_step
        prefix: eval
teed:
  - logger_key: gpt_loss
    name: rl.sft.gpt_loss
    kind: gauge
    unit: ""
    description: Next-token loss of the step.
    requirement_level: required
    emitted_by: [sft]
  - logger_key: save_seconds
    name: rl.sft.checkpoint.duration
    kind: gauge
    unit: s
    description: Seconds the checkpoint of every 20th step took.
    requirement_level: required
    every: "20"
    emitted_by: [sft]
  - logger_key: generated_samples
    name: rl.sft.generated_samples
    kind: gauge
    unit: ""
    description: Samples of the run, as a W&B table.
    value_type: table
    emitted_by: [sft]
"""


def _catalog(tmp_path: Path) -> Catalog:
    return loaded_catalog(tmp_path / "project", CATALOG)


def _flat(lines: list[dict[str, Any]]) -> io.BytesIO:
    return io.BytesIO(b"".join(json.dumps(line).encode() + b"\n" for line in lines))


def _kinds(report: LiveCheckReport) -> list[tuple[str, str]]:
    return sorted((f.kind, f.key) for f in report.findings)


def test_the_step_key_is_the_step_of_the_keys_it_covers(tmp_path: Path) -> None:
    """Three calls (the input's steps 1 to 3) at global steps 10, 20, 30: the checkpoint of
    step 20 was due, and missing; the step key itself is no undeclared key."""
    lines = [
        {"step": call, "train/gpt_loss": 0.5, "train/global_step": 10 * call} for call in (1, 2, 3)
    ]
    report = check_stream(_flat(lines), _catalog(tmp_path), input_format="flat-jsonl")
    assert report.last_step == 30
    assert _kinds(report) == [("missing", "save_seconds")]
    loss = next(s for s in report.rows if s.row.name == "rl.sft.gpt_loss")
    assert (loss.logged, loss.last_step) == (3, 30)


def test_without_the_step_key_the_call_counter_is_the_step(tmp_path: Path) -> None:
    """The same run without ``train/global_step``: steps 1 to 3, no checkpoint due yet."""
    lines = [{"step": call, "train/gpt_loss": 0.5} for call in (1, 2, 3)]
    report = check_stream(_flat(lines), _catalog(tmp_path), input_format="flat-jsonl")
    assert report.last_step == 3
    assert _kinds(report) == []


def test_a_flat_line_without_a_step_is_read_and_judged_not_malformed(tmp_path: Path) -> None:
    """A table logged at the end with no step: counted, and it moves no step."""
    lines: list[dict[str, Any]] = [
        {"step": 1, "train/gpt_loss": 0.5},
        {"train/generated_samples": {"_type": "table-file", "nrows": 12}},
    ]
    report = check_stream(_flat(lines), _catalog(tmp_path), input_format="flat-jsonl")
    assert _kinds(report) == []
    assert report.malformed_unreported == 0  # and no malformed finding above
    samples = next(s for s in report.rows if s.row.name == "rl.sft.generated_samples")
    assert samples.logged == 1
    assert report.last_step == 1


FLAT_CONFIG = """\
owner: openrlhf.trainer
module: ppo
description: The PPO trainer, configured by flat dotted flags.
teed:
  - logger_key: other
    name: rl.ppo.other
    kind: gauge
    unit: ""
    description: A value logged every step.
  - logger_key: policy_loss
    name: rl.ppo.policy_loss
    kind: gauge
    unit: ""
    description: Policy loss, once the actor is no longer frozen.
    requirement_level: required
    first_step: 'config["critic.freezing_steps"] + 1'
  - logger_key: eval_reward
    name: rl.ppo.eval_reward
    kind: gauge
    unit: ""
    description: Evaluation reward every eval.steps steps.
    requirement_level: required
    every: 'config["eval.steps"]'
"""


def _jsonl(config: dict[str, Any] | None, steps: int) -> io.BytesIO:
    lines = [] if config is None else [{"config": config}]
    lines += [
        {"step": s, "prefix": "train", "metrics": {"other": 1.0}} for s in range(1, steps + 1)
    ]
    return _flat(lines)


def test_first_step_and_every_take_subscripts_for_flat_dotted_keys(tmp_path: Path) -> None:
    """``config["critic.freezing_steps"] + 1`` and ``config["eval.steps"]`` resolve."""
    catalog = loaded_catalog(tmp_path / "project", FLAT_CONFIG)
    config = {"critic.freezing_steps": 5, "eval.steps": 4}
    early = check_stream(_jsonl(config, 3), catalog)
    states = {s.row.name: s.presence for s in early.rows}
    assert (states["rl.ppo.policy_loss"], states["rl.ppo.eval_reward"]) == ("not_due", "not_due")
    late = check_stream(_jsonl(config, 8), catalog)
    assert sorted(f.key for f in late.findings if f.kind == "missing") == [
        "eval_reward",
        "policy_loss",
    ]


def test_a_path_the_configuration_lacks_is_undecided_with_a_notice_naming_it(
    tmp_path: Path,
) -> None:
    """Never silently: the notice names the field and the path."""
    catalog = loaded_catalog(tmp_path / "project", FLAT_CONFIG)
    report = check_stream(_jsonl({"critic": {"freezing_steps": 5}}, 8), catalog)
    assert {s.row.name: s.presence for s in report.rows}["rl.ppo.policy_loss"] == "undecided"
    notices = [n.message for n in report.notices if n.kind == "undecided_step"]
    assert any('config["critic.freezing_steps"] + 1' in text for text in notices)
    assert any('config["eval.steps"]' in text for text in notices)


@pytest.mark.parametrize("period", [-1, 0])
def test_a_sentinel_period_is_never_due(tmp_path: Path, period: int) -> None:
    """``-1`` (once per epoch, or never) and ``0``: not_due, never missing."""
    catalog = loaded_catalog(tmp_path / "project", FLAT_CONFIG)
    config = {"critic.freezing_steps": 0, "eval.steps": period}
    report = check_stream(_jsonl(config, 8), catalog)
    assert {s.row.name: s.presence for s in report.rows}["rl.ppo.eval_reward"] == "not_due"
