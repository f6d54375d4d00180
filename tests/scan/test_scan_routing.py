"""``scan`` credits a literal key to the row the tee and live-check route it to, and reads a
renamed key as one finding: ``SCAN_UNDECLARED`` with "did you mean" (issue 40, item 9)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.scan.scanner import ScanReport, scan
from tests.catalog_projects import loaded_catalog

ROWS = """\
owner: app.train
module: app_train
description: Rows of the scan routing tests.
prefix: train
attributes:
  - name: rl.domain
    type: string
    description: Which part of the trainer logged it.
    max_cardinality: "16"
  - name: rl.x
    type: string
    description: A critic quantity.
    max_cardinality: "16"
teed:
  - logger_key: kl
    name: rl.train.kl
    kind: gauge
    unit: "1"
    description: KL divergence to the reference policy.
  - logger_key: grad_norm
    name: rl.train.grad_norm
    kind: gauge
    unit: "1"
    description: Gradient norm before clipping.
  - logger_key: "critic/{rl.x}/mean"
    prefix: "{rl.domain}"
    name: rl.critic.mean
    kind: gauge
    unit: "1"
    description: A critic quantity's mean under any domain.
    attributes: [{ref: rl.domain}, {ref: rl.x}]
  - logger_key: "time/critic/{rl.x}/mean"
    prefix: ""
    name: rl.critic.time
    kind: gauge
    unit: s
    description: Seconds of a critic operation.
    attributes: [{ref: rl.x}]
"""


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    return loaded_catalog(tmp_path / "project", ROWS)


def _scan(tmp_path: Path, catalog: Catalog, code: str) -> ScanReport:
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "train.py").write_text(textwrap.dedent(code), encoding="utf-8")
    return scan([folder], catalog, cwd=tmp_path)


def _messages(report: ScanReport, code: str) -> list[str]:
    return sorted(d.message for d in report.diagnostics if d.code == code)


@pytest.mark.parametrize(
    ("logged", "row", "key"),
    [
        ('wandb.log({"train/grad_nrom": 1.0})', "rl.train.grad_norm", "train/grad_norm"),
        ('logger.log_metrics({"kl_div": 1.0}, 0, prefix="train")', "rl.train.kl", "train/kl"),
    ],
    ids=["a misspelt flat key", "a renamed key under a prefix"],
)
def test_a_renamed_key_is_one_undeclared_finding_with_did_you_mean(
    tmp_path: Path, catalog: Catalog, logged: str, row: str, key: str
) -> None:
    report = _scan(tmp_path, catalog, f"import wandb\n\ndef log(logger):\n    {logged}\n")
    [undeclared] = _messages(report, "SCAN_UNDECLARED")
    assert f"did you mean {key!r}? Row {row} declares that key" in undeclared
    assert not any(row in message for message in _messages(report, "SCAN_UNLOGGED"))


def test_an_undeclared_key_no_row_key_is_close_to_has_no_did_you_mean(
    tmp_path: Path, catalog: Catalog
) -> None:
    report = _scan(
        tmp_path,
        catalog,
        'def log(logger):\n    logger.log_metrics({"lr": 1.0}, 0, prefix="train")\n',
    )
    [undeclared] = _messages(report, "SCAN_UNDECLARED")
    assert "did you mean" not in undeclared
    assert any("rl.train.kl" in message for message in _messages(report, "SCAN_UNLOGGED"))


def test_a_literal_key_is_credited_to_the_most_literal_row_only(
    tmp_path: Path, catalog: Catalog
) -> None:
    """``time/critic/values/mean`` is the critic timer's (more literal text), not also a
    critic mean of domain ``time``: that row is still reported unlogged."""
    report = _scan(
        tmp_path,
        catalog,
        'import wandb\n\ndef log():\n    wandb.log({"time/critic/values/mean": 0.2})\n',
    )
    assert _messages(report, "SCAN_UNDECLARED") == []
    unlogged = " ".join(_messages(report, "SCAN_UNLOGGED"))
    assert "rl.critic.mean" in unlogged
    assert "rl.critic.time" not in unlogged
