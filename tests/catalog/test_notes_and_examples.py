"""Weaver's fields: ``note`` on rows and attributes, ``examples`` on open strings, and a
``deprecated`` without ``since``."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.catalog.pipeline import CheckResult, load_and_check
from codegen.diff import _deprecation_text
from codegen.generate.resolve import resolve_catalog

CATALOG = """\
owner: pkg.train
module: train
description: Training metrics.
attributes:
  - name: rl.dataset
    type: string
    description: Validation dataset.
    max_cardinality: "32"
    examples: [openai/gsm8k, math500]
    note: The dataset's name as the config names it.
teed:
  - logger_key: reward
    name: rl.reward.mean
    kind: gauge
    unit: "1"
    description: Mean reward.
    note: |
      Averaged over the batch before the KL penalty.
      See the GRPO paper.
    attributes: [{ref: rl.dataset}]
recorded:
  - name: rl.loss
    kind: gauge
    unit: "1"
    description: Loss.
"""


def _load(tmp_path: Path, text: str) -> CheckResult:
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "train.yaml").write_text(text, encoding="utf-8")
    return load_and_check(root=tmp_path, lint=False)


def test_notes_and_examples_reach_the_model_and_the_resolved_catalog(tmp_path: Path) -> None:
    result = _load(tmp_path, CATALOG)
    assert result.ok, result.diagnostics
    document = resolve_catalog(result.catalog)
    rows = {row["name"]: row for row in document["rows"]}
    assert rows["rl.reward.mean"]["note"] == (
        "Averaged over the batch before the KL penalty.\nSee the GRPO paper.\n"
    )
    assert rows["rl.loss"]["note"] is None
    (attribute,) = document["attributes"]
    assert attribute["examples"] == ["openai/gsm8k", "math500"]
    assert attribute["note"] == "The dataset's name as the config names it."


@pytest.mark.parametrize(
    ("declaration", "said"),
    [
        (
            "    type: string\n    values: [{value: a, description: A.}]\n    examples: [a]\n",
            "only an open string attribute",
        ),
        ('    type: int\n    max_cardinality: "8"\n    examples: ["1"]\n', "only an open string"),
        ('    type: string\n    max_cardinality: "8"\n    examples: []\n', "examples"),
        ('    type: string\n    max_cardinality: "8"\n    note: ""\n', "note"),
    ],
    ids=["enum", "int", "empty-examples", "empty-note"],
)
def test_examples_only_on_an_open_string_and_no_empty_note(
    tmp_path: Path, declaration: str, said: str
) -> None:
    text = (
        "owner: pkg.a\nmodule: a\ndescription: A.\nattributes:\n"
        "  - name: rl.x\n    description: X.\n" + declaration
    )
    result = _load(tmp_path, text)
    assert not result.ok
    assert any(said in d.message for d in result.diagnostics), result.diagnostics


def test_a_deprecation_may_leave_out_its_release(tmp_path: Path) -> None:
    text = CATALOG.replace(
        "    description: Loss.\n",
        "    description: Loss.\n    deprecated: {note: Use the other.}\n",
    )
    result = _load(tmp_path, text)
    assert result.ok, result.diagnostics
    rows = {row["name"]: row for row in resolve_catalog(result.catalog)["rows"]}
    assert rows["rl.loss"]["deprecated"] == {
        "note": "Use the other.",
        "replaced_by": None,
        "since": None,
    }
    (row,) = [row for _f, row in result.catalog.rows() if row.name == "rl.loss"]
    assert _deprecation_text(row.deprecated) == "deprecated: Use the other."
