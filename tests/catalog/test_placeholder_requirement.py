"""A placeholder that only some of a row's prefixes hold is not on every point.

``prefixes: [train, "validation-{rl.dataset}"]``: a value logged under ``train`` captures no
dataset, so the attribute cannot be ``required`` of every point; it defaults to
``recommended`` and may be written so (it was refused with ``PLACEHOLDER_NOT_REQUIRED``,
and defaulted to ``required``, which made live-check report ``missing_attribute`` on every
``train`` point). A placeholder of the key, or of every prefix, stays required.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.catalog.pipeline import CheckResult, load_and_check
from codegen.live_check import check_file

CATALOG = """\
owner: dpo
module: dpo
description: DPO's loss, in training and per validation set.
attributes:
  - name: rl.dataset
    type: string
    description: Validation set.
    max_cardinality: "8"
teed:
  - logger_key: loss
    prefixes: {prefixes}
    name: rl.dpo.loss
    kind: gauge
    unit: ""
    description: DPO loss.
    attributes:
      - ref: rl.dataset{level}
"""


def _load(tmp_path: Path, prefixes: str, level: str) -> CheckResult:
    (tmp_path / "catalog").mkdir(exist_ok=True)
    text = CATALOG.format(prefixes=prefixes, level=level)
    (tmp_path / "catalog" / "dpo.yaml").write_text(text, encoding="utf-8")
    return load_and_check(root=tmp_path, lint=False)


@pytest.mark.parametrize(
    ("prefixes", "level", "expected"),
    [
        ('[train, "validation-{rl.dataset}"]', "", "recommended"),
        (
            '[train, "validation-{rl.dataset}"]',
            "\n        requirement_level: recommended",
            "recommended",
        ),
        ('[train, "validation-{rl.dataset}"]', "\n        requirement_level: required", "required"),
        ('["validation-{rl.dataset}", "val/{rl.dataset}"]', "", "required"),
    ],
)
def test_a_placeholder_of_some_prefixes_defaults_to_recommended(
    tmp_path: Path, prefixes: str, level: str, expected: str
) -> None:
    result = _load(tmp_path, prefixes, level)
    assert result.ok, [str(d) for d in result.diagnostics]
    assert result.catalog is not None
    ((_file, row),) = result.catalog.rows()
    assert [(ref.name, ref.requirement_level) for ref in row.attributes] == [
        ("rl.dataset", expected)
    ]


def test_a_placeholder_of_every_prefix_must_still_be_required(tmp_path: Path) -> None:
    result = _load(
        tmp_path,
        '["validation-{rl.dataset}", "val/{rl.dataset}"]',
        "\n        requirement_level: recommended",
    )
    assert [d.code for d in result.diagnostics] == ["PLACEHOLDER_NOT_REQUIRED"]


def test_live_check_does_not_want_the_attribute_on_points_of_the_other_prefixes(
    tmp_path: Path,
) -> None:
    result = _load(tmp_path, '[train, "validation-{rl.dataset}"]', "")
    assert result.catalog is not None
    log = tmp_path / "run.jsonl"
    log.write_text(
        '{"step": 1, "prefix": "train", "metrics": {"loss": 0.5}}\n'
        '{"step": 1, "prefix": "validation-gsm8k", "metrics": {"loss": 0.25}}\n',
        encoding="utf-8",
    )
    report = check_file(str(log), result.catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
