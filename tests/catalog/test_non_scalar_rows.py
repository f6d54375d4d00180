"""A non-scalar row (a W&B table, a text) creates no instrument, so it need not write
``kind`` and ``unit``; a row of numbers still must, with a positioned error."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.catalog.pipeline import load_and_check
from tests.catalog_projects import loaded_catalog, write_catalog

HEAD = """\
owner: openrlhf.trainer
module: sft
description: The SFT trainer.
prefix: train
teed:
  - logger_key: generated_samples
    name: rl.sft.generated_samples
    description: Samples of the run.
"""


@pytest.mark.parametrize("value_type", ["table", "text", "image", "histogram", "media", "object"])
def test_a_non_scalar_row_may_leave_out_kind_and_unit(tmp_path: Path, value_type: str) -> None:
    catalog = loaded_catalog(tmp_path, HEAD + f"    value_type: {value_type}\n")
    row = catalog.by_name()["rl.sft.generated_samples"][1]
    assert (row.kind, row.unit, row.value_type) == ("gauge", "", value_type)


@pytest.mark.parametrize(
    ("extra", "missing"),
    [
        pytest.param("", ["kind", "unit"], id="no-value-type"),
        pytest.param("    value_type: number\n", ["kind", "unit"], id="number"),
        pytest.param("    value_type: int\n    unit: '1'\n", ["kind"], id="int-no-kind"),
        pytest.param("    kind: gauge\n", ["unit"], id="no-unit"),
    ],
)
def test_a_row_of_numbers_without_kind_or_unit_is_a_positioned_error(
    tmp_path: Path, extra: str, missing: list[str]
) -> None:
    write_catalog(tmp_path, HEAD + extra)
    result = load_and_check(root=tmp_path, lint=False)
    found = [d for d in result.diagnostics if d.code == "MISSING_FIELD"]
    assert [m for m in ("kind", "unit") if any(f"no {m!r}" in d.message for d in found)] == missing
    for diagnostic in found:
        assert diagnostic.position is not None
        assert (diagnostic.position.line, diagnostic.position.column) == (6, 5)
        assert "rl.sft.generated_samples" in diagnostic.message
    assert not result.ok


def test_a_misspelt_kind_is_one_unknown_field_not_also_missing(tmp_path: Path) -> None:
    write_catalog(tmp_path, HEAD + "    kidn: gauge\n    unit: ''\n")
    result = load_and_check(root=tmp_path, lint=False)
    assert [d.code for d in result.diagnostics] == ["UNKNOWN_FIELD"]
