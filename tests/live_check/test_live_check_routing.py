"""live-check routes a run's keys by the one rule the tee uses (issue 36, findings 3-6).

An enumeration decides which family takes a key; a step key is no metric; a misspelt
literal key a family takes only through an open (or opened) placeholder is undeclared
beside the row it left missing, with "did you mean"; an undeclared key's step is the
loop's step key's. A renamed key is one finding (issue 40): the row's ``missing`` is
folded into the ``undeclared`` rename, and ``--fail-on missing`` still fails.
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

CRITIC = """\
owner: verl.trainer.critic
module: critic
description: Critic metrics of a PPO trainer.
prefix: ""
attributes:
  - name: rl.domain
    type: string
    description: Which part of the trainer logged it.
    max_cardinality: "16"
  - name: rl.advantage_kind
    type: string
    description: How advantages were estimated.
    values:
      - {value: gae, description: Generalised advantage estimation.}
      - {value: grpo, description: Group-relative advantages.}
  - name: rl.stat
    type: string
    description: The statistic over the batch.
    values:
      - {value: mean, description: Mean.}
      - {value: max, description: Maximum.}
  - name: rl.critic_op
    type: string
    description: The critic's timed operation.
    values:
      - {value: compute_values, description: Value estimation.}
      - {value: update_critic, description: The critic's update.}
teed:
  - logger_key: "critic/{rl.advantage_kind}/{rl.stat}"
    prefix: "{rl.domain}"
    name: rl.critic.advantage
    kind: gauge
    unit: "1"
    description: An advantage statistic.
    attributes: [{ref: rl.domain}, {ref: rl.advantage_kind}, {ref: rl.stat}]
  - logger_key: "time/critic/{rl.critic_op}/total"
    name: rl.critic.op.duration
    kind: gauge
    unit: s
    description: Seconds a critic operation took in the step.
    attributes: [{ref: rl.critic_op}]
"""

GRAD = """\
owner: trainer.actor
module: actor
description: Actor metrics.
prefix: actor
attributes:
  - name: rl.stat
    type: string
    description: The statistic over the batch.
    values:
      - {value: mean, description: Mean.}
      - {value: max, description: Maximum.}
  - name: rl.metric
    type: string
    description: Any other actor metric.
    max_cardinality: "32"
teed:
  - logger_key: grad_norm
    name: rl.actor.grad_norm
    kind: gauge
    unit: "1"
    description: Gradient norm before clipping.
    requirement_level: required
  - logger_key: "{FAMILY}"
    prefix: "{PREFIX}"
    name: rl.actor.stat
    kind: gauge
    unit: "1"
    description: A statistic of the actor.
    attributes: [{ATTRIBUTES}]
"""

EVAL = """\
owner: trainer.eval
module: evaluation
description: Evaluation scores.
prefix: eval
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
      - {key: train/global_step, prefix: train}
teed:
  - logger_key: "{rl.dataset}"
    name: rl.eval.score
    kind: gauge
    unit: "1"
    description: Score on one evaluation data set.
    attributes: [{ref: rl.dataset}]
  - logger_key: loss
    prefix: train
    name: rl.train.loss
    kind: gauge
    unit: "1"
    description: Loss of the step.
  - logger_key: kl
    prefix: train
    name: rl.train.kl
    kind: gauge
    unit: "1"
    description: KL divergence to the reference policy.
    requirement_level: required
"""


def _lines(lines: list[dict[str, Any]]) -> io.BytesIO:
    return io.BytesIO(b"".join(json.dumps(line).encode() + b"\n" for line in lines))


def _check(catalog: Catalog, lines: list[dict[str, Any]]) -> LiveCheckReport:
    return check_stream(_lines(lines), catalog, input_format="flat-jsonl")


def _kinds(report: LiveCheckReport) -> list[tuple[str, str]]:
    return sorted((f.kind, f.qualified_key) for f in report.findings)


def _grad_catalog(tmp_path: Path, *, family: str) -> Catalog:
    """The actor's rows with a family that is enumerated (``{rl.domain}/{rl.stat}``-like) or
    open (``actor/{rl.metric}``)."""
    if family == "enumerated":
        text = GRAD.replace("{FAMILY}", "{rl.stat}").replace("{PREFIX}", "actor")
        text = text.replace("{ATTRIBUTES}", "{ref: rl.stat}")
    else:
        text = GRAD.replace("{FAMILY}", "{rl.metric}").replace("{PREFIX}", "actor")
        text = text.replace("{ATTRIBUTES}", "{ref: rl.metric}")
    return loaded_catalog(tmp_path / family, text)


def test_an_enumeration_decides_which_family_takes_a_key(tmp_path: Path) -> None:
    """Finding 3: ``time/critic/compute_values/total`` is the critic timer's, not an
    advantage of domain ``time`` with a kind outside its enumeration."""
    catalog = loaded_catalog(tmp_path, CRITIC)
    report = _check(
        catalog,
        [
            {
                "step": step,
                "time/critic/compute_values/total": 0.3,
                "time/critic/update_critic/total": 0.2,
                "actor/critic/gae/mean": 0.1,
            }
            for step in (1, 2)
        ],
    )
    assert _kinds(report) == []
    logged = {s.row.name: s.logged for s in report.rows}
    assert logged == {"rl.critic.op.duration": 4, "rl.critic.advantage": 2}


def test_a_value_outside_every_familys_enumeration_is_still_judged(tmp_path: Path) -> None:
    """Non-firing side: a key of the advantage family's shape with an unknown kind is an
    ``attribute_value`` finding on that family, as before."""
    catalog = loaded_catalog(tmp_path, CRITIC)
    report = _check(catalog, [{"step": 1, "actor/critic/vtrace/mean": 0.1}])
    assert _kinds(report) == [("attribute_value", "actor/critic/vtrace/mean")]


def test_a_step_key_is_no_value_of_the_family_beside_it(tmp_path: Path) -> None:
    """Finding 4: ``eval/step`` is the step of ``eval/*``; the family counts ``eval/aime``."""
    catalog = loaded_catalog(tmp_path, EVAL)
    report = _check(
        catalog,
        [
            {"step": 1, "train/global_step": 3, "train/loss": 0.5, "train/kl": 0.1},
            {"step": 2, "eval/aime": 0.5, "eval/step": 3},
        ],
    )
    assert _kinds(report) == []
    score = next(s for s in report.rows if s.row.name == "rl.eval.score")
    assert score.logged == 1
    assert report.coverage.open_values["rl.eval.score"]["rl.dataset"]["seen"] == ["aime"]


@pytest.mark.parametrize("family", ["enumerated", "open"])
def test_a_misspelt_literal_key_is_undeclared_with_did_you_mean(
    tmp_path: Path, family: str
) -> None:
    """Finding 5: ``actor/grad_nrom`` is taken by the family only through its placeholder
    (opened past its enumeration, or open) while ``actor/grad_norm`` goes missing: one
    ``undeclared`` finding naming the row, not an ``attribute_value`` on the family."""
    catalog = _grad_catalog(tmp_path, family=family)
    other = "actor/max" if family == "enumerated" else "actor/entropy"  # the family's own
    report = _check(
        catalog, [{"step": step, "actor/grad_nrom": 1.5, other: 0.1} for step in (1, 2, 3)]
    )
    assert _kinds(report) == [("undeclared", "actor/grad_nrom")]
    (finding,) = report.findings
    assert finding.count == 3
    message = finding.message()
    assert "did you mean 'actor/grad_norm'" in message
    assert "rl.actor.grad_norm" in message
    assert report.failed(["missing"]) == ["missing"]  # the folded row still fails the gate


@pytest.mark.parametrize("family", ["enumerated", "open"])
def test_a_familys_own_values_are_no_rename(tmp_path: Path, family: str) -> None:
    """Non-firing side: the literal row logged, the family's values routed to it."""
    catalog = _grad_catalog(tmp_path, family=family)
    value = "mean" if family == "enumerated" else "entropy"
    report = _check(catalog, [{"step": 1, "actor/grad_norm": 1.0, f"actor/{value}": 0.2}])
    assert _kinds(report) == []


def test_a_renamed_key_is_one_finding_with_the_rename(tmp_path: Path) -> None:
    """Issue 40, item 9: ``train/kl_div`` beside a missing ``train/kl`` is one finding."""
    catalog = loaded_catalog(tmp_path, EVAL)
    report = _check(
        catalog,
        [
            {"step": s, "train/global_step": s, "train/loss": 0.5, "train/kl_div": 0.1}
            for s in (1, 2)
        ],
    )
    assert _kinds(report) == [("undeclared", "train/kl_div")]
    message = report.findings[0].message()
    assert "did you mean 'train/kl'? Row rl.train.kl declares that key" in message
    assert "change the row's key to 'train/kl_div'" in message
    assert report.failed(["undeclared", "missing"]) == ["undeclared", "missing"]
    assert report.summary()["kinds"] == {"undeclared": 2, "missing": 1}
    (finding,) = json.loads(report.to_json())["findings"]
    assert finding["did_you_mean"] == "train/kl"


def test_an_undeclared_key_far_from_every_unlogged_row_has_no_did_you_mean(
    tmp_path: Path,
) -> None:
    """Non-firing side: ``train/lr`` is no rename of ``train/kl`` (a whole other word)."""
    catalog = loaded_catalog(tmp_path, EVAL)
    report = _check(catalog, [{"step": 1, "train/loss": 0.5, "train/lr": 0.1}])
    assert _kinds(report) == [("missing", "train/kl"), ("undeclared", "train/lr")]
    assert all("did you mean" not in f.message() for f in report.findings)


def test_an_undeclared_keys_step_is_the_step_keys(tmp_path: Path) -> None:
    """Finding 6: W&B's call counter says 4; the loop's step key says 0."""
    catalog = loaded_catalog(tmp_path, EVAL)
    report = _check(
        catalog,
        [{"step": 4, "train/global_step": 0, "train/loss": 0.5, "train/kl": 0.1, "train/x": 1.0}],
    )
    (finding,) = report.findings
    assert (finding.kind, finding.step) == ("undeclared", 0)
    assert "first at step 0" in finding.message()


def test_an_undeclared_key_with_no_step_key_keeps_the_records_step(tmp_path: Path) -> None:
    """Non-firing side: no step key in the record, the record's step."""
    catalog = loaded_catalog(tmp_path, EVAL)
    report = _check(catalog, [{"step": 4, "train/loss": 0.5, "train/kl": 0.1, "other": 1.0}])
    (finding,) = report.findings
    assert (finding.kind, finding.step) == ("undeclared", 4)
