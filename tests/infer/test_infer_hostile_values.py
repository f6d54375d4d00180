"""``infer`` on hostile values (issue #37): no traceback, whatever a run logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.cli import main
from codegen.infer import infer

HUGE = 10**400
"""A 401-digit integer: ``float()`` of it raises ``OverflowError``."""


@pytest.mark.parametrize("key", ["train/clip_frac", "train/num_samples", "train/step"])
@pytest.mark.parametrize("value", [HUGE, -HUGE], ids=["huge", "minus_huge"])
def test_infer_drafts_a_key_holding_a_401_digit_integer_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, value: int
) -> None:
    lines = [
        json.dumps({"step": s, "prefix": "", "metrics": {key: value if s == 2 else s}})
        for s in range(1, 5)
    ]
    run = tmp_path / "run.jsonl"
    run.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["infer", "--root", str(tmp_path), str(run)]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert "OverflowError" not in captured.err
    draft = infer([[str(run)]], Catalog(()))
    rows = [row for f in draft.files for row in f.rows if row.logger_key == key]
    if rows:
        assert any("too large for a float" in note for note in rows[0].notes)


@pytest.mark.parametrize(
    "value",
    [
        float("nan"),
        float("inf"),
        -0.0,
        True,
        "1e400",
        [1, 2],
        {"a": HUGE},
        None,
        2**53 + 1,
    ],
)
def test_infer_drafts_a_key_of_any_json_value_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: object
) -> None:
    lines = [
        json.dumps({"step": s, "prefix": "", "metrics": {"gpu/util": value, "train/step": value}})
        for s in range(1, 4)
    ]
    run = tmp_path / "run.jsonl"
    run.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["infer", "--root", str(tmp_path), str(run)]) == 0
    assert "Traceback" not in capsys.readouterr().err


def test_infer_says_nothing_of_huge_values_for_a_key_that_logged_none(tmp_path: Path) -> None:
    lines = [json.dumps({"step": s, "prefix": "", "metrics": {"loss": 0.5}}) for s in (1, 2)]
    run = tmp_path / "run.jsonl"
    run.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (row,) = [row for f in infer([[str(run)]], Catalog(())).files for row in f.rows]
    assert not any("too large" in note for note in row.notes)
