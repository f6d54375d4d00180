"""Rows scoped to disjoint loops may share a logger key; rows one loop could both log may not."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.catalog.pipeline import load_and_check
from codegen.catalog.precedence import shadowed_by
from tests.catalog_projects import loaded_catalog, write_catalog

LOOPS = """\
loops:
  - name: sft
    description: Supervised fine-tuning.
    signature: [train/gpt_loss]
  - name: dpo
    description: Direct preference optimisation.
    signature: [train/chosen_reward]
  - name: rm
    description: Reward-model training.
    signature: [train/reward_gap]
"""


def _catalog(rows: str) -> str:
    head = "owner: openrlhf.trainer\nmodule: trainers\ndescription: Trainer metrics.\n"
    return head + LOOPS + "attributes:\n" + ATTRIBUTES + "teed:\n" + rows


ATTRIBUTES = """\
  - name: rl.extra
    type: string
    description: Any further logged value.
    max_cardinality: "32"
"""


def _row(key: str, name: str, loops: str | None, unit: str = '""') -> str:
    scope = f"    emitted_by: [{loops}]\n" if loops is not None else ""
    return (
        f'  - logger_key: "{key}"\n    name: {name}\n    kind: gauge\n    unit: {unit}\n'
        f"    description: Value of {key}.\n{scope}"
    )


def _family(name: str, loops: str | None) -> str:
    return _row("{rl.extra}", name, loops) + "    attributes:\n      - ref: rl.extra\n"


def test_three_trainer_loops_share_keys_with_different_units(tmp_path: Path) -> None:
    """OpenRLHF-shaped: loss_mean in each trainer, chosen_reward in DPO (nats) and RM (score)."""
    rows = (
        _row("loss_mean", "rl.sft.nll.mean", "sft")
        + _row("loss_mean", "rl.dpo.preference_loss.mean", "dpo")
        + _row("loss_mean", "rl.rm.ranking_loss.mean", "rm")
        + _row("chosen_reward", "rl.dpo.implicit_reward.chosen", "dpo")
        + _row("chosen_reward", "rl.rm.score.chosen", "rm", unit='"1"')
    )
    catalog = loaded_catalog(tmp_path, _catalog(rows))
    scopes = {row.name: row.emitted_by for _f, row in catalog.rows()}
    assert scopes["rl.rm.score.chosen"] == ("rm",)


@pytest.mark.parametrize(
    ("first", "second", "shared"),
    [
        pytest.param("sft, dpo", "dpo, rm", "loop 'dpo'", id="one-loop-in-common"),
        pytest.param("dpo, rm", "rm, dpo", "loops 'dpo', 'rm'", id="same-loops"),
        pytest.param(None, "rm", "loop 'rm'", id="unscoped-and-scoped"),
        pytest.param(None, None, "every loop", id="both-unscoped"),
    ],
)
def test_a_key_two_rows_share_in_one_loop_is_refused_naming_the_loop(
    tmp_path: Path, first: str | None, second: str | None, shared: str
) -> None:
    """DUPLICATE_LOGGER_KEY names both rows and the loop they share."""
    rows = _row("loss", "rl.a.loss", first) + _row("loss", "rl.b.loss", second)
    write_catalog(tmp_path, _catalog(rows))
    result = load_and_check(root=tmp_path, lint=False)
    messages = [d.message for d in result.diagnostics if d.code == "DUPLICATE_LOGGER_KEY"]
    assert len(messages) == 1
    assert "'rl.a.loss'" in messages[0]
    assert "'rl.b.loss'" in messages[0]
    assert f"in {shared}" in messages[0]


def test_families_of_disjoint_loops_may_overlap(tmp_path: Path) -> None:
    """prime-rl-shaped: the trainer's and the orchestrator's open families under one prefix."""
    loaded_catalog(
        tmp_path, _catalog(_family("rl.sft.extra", "sft") + _family("rl.rm.extra", "rm"))
    )


def test_families_one_loop_could_both_log_are_refused_naming_the_loop(tmp_path: Path) -> None:
    """KEY_PATTERN_OVERLAP keeps firing where the scopes meet."""
    rows = _family("rl.sft.extra", "sft, rm") + _family("rl.rm.extra", "rm")
    write_catalog(tmp_path, _catalog(rows))
    result = load_and_check(root=tmp_path, lint=False)
    messages = [d.message for d in result.diagnostics if d.code == "KEY_PATTERN_OVERLAP"]
    assert len(messages) == 1
    assert "in loop 'rm'" in messages[0]


def test_a_literal_of_one_loop_does_not_shadow_a_family_of_another(tmp_path: Path) -> None:
    """Rows of disjoint loops never meet, so the docs list no shadowing between them."""
    rows = _row("step", "rl.rm.step", "rm") + _family("rl.sft.extra", "sft")
    assert shadowed_by(loaded_catalog(tmp_path, _catalog(rows))) == {}
    rows = _row("step", "rl.rm.step", "rm") + _family("rl.any.extra", None)
    assert shadowed_by(loaded_catalog(tmp_path, _catalog(rows))) == {
        "rl.any.extra": ("rl.rm.step",)
    }
