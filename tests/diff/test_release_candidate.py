"""A ``release_candidate`` series (OpenTelemetry's level before stable) keeps beta's promises."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.diff import diff_catalogs

ROW = """\
owner: pkg.train
module: train
description: Training metrics.
teed:
  - logger_key: loss
    name: rl.loss
    kind: gauge
    unit: "{unit}"
    description: Training loss.
    stability: {stability}
"""


def _catalog(root: Path, *, stability: str, unit: str = "1") -> Catalog:
    (root / "catalog").mkdir(parents=True)
    text = ROW.replace("{unit}", unit).replace("{stability}", stability)
    (root / "catalog" / "train.yaml").write_text(text, encoding="utf-8")
    result = load_and_check(root=root, lint=False)
    assert result.ok, result.diagnostics
    return result.catalog


@pytest.mark.parametrize(
    ("before", "after", "unit", "code"),
    [
        ("release_candidate", "release_candidate", "s", "BETA_UNIT_CHANGED"),
        ("release_candidate", "beta", "1", "STABILITY_LOWERED"),
        ("stable", "release_candidate", "1", "STABILITY_DOWNGRADED"),
    ],
)
def test_a_release_candidate_is_held_to_betas_rules(
    tmp_path: Path, before: str, after: str, unit: str, code: str
) -> None:
    baseline = _catalog(tmp_path / "a", stability=before)
    catalog = _catalog(tmp_path / "b", stability=after, unit=unit)
    report = diff_catalogs(baseline, catalog)
    codes = [d.code for d in report.diagnostics]
    assert code in codes, codes


def test_a_beta_series_may_become_a_release_candidate(tmp_path: Path) -> None:
    report = diff_catalogs(
        _catalog(tmp_path / "a", stability="beta"),
        _catalog(tmp_path / "b", stability="release_candidate"),
    )
    assert not report.breaking
