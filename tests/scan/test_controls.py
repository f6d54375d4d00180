"""The adopter's controls over scan: ``no_lint`` on rows, ``--catalog`` before the paths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codegen.catalog.pipeline import load_and_check
from codegen.cli import main
from tests.catalog_projects import write_catalog

ROWS = """\
owner: app.train
module: app_train
description: Rows of the control tests.
prefix: train
teed:
  - logger_key: loss
    name: rl.policy.loss
    kind: gauge
    unit: "1"
    description: Training loss over the step's batch.
  - logger_key: reward
    name: rl.policy.reward
    kind: gauge
    unit: "1"
    description: Mean reward of the step's batch, logged by a worker not scanned.
    no_lint: [SCAN_UNLOGGED]
"""

CODE = 'import wandb\nwandb.log({"train/loss": 1.0})\n'


def _project(tmp_path: Path) -> Path:
    write_catalog(tmp_path, ROWS)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.metric-catalog]\ncatalog = ["catalog/*.yaml"]\n', encoding="utf-8"
    )
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(CODE, encoding="utf-8")
    return tmp_path


def _findings(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    code = main(list(argv))
    report = json.loads(capsys.readouterr().out)
    return code, [f"{f['code']} {f['message'][:40]}" for f in report["findings"]]


def test_no_lint_scan_unlogged_on_a_row_silences_it_and_lint_knows_the_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path)
    code, findings = _findings(
        capsys, "scan", "--root", str(root), "--format", "json", str(root / "src")
    )
    assert code == 0
    assert findings == []  # loss is logged; reward says code outside the scan logs it
    result = load_and_check(root=root, lint=True)
    assert not [d for d in result.diagnostics if d.code in {"UNKNOWN_LINT", "UNUSED_NO_LINT"}]


def test_without_no_lint_the_unlogged_row_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path)
    text = ROWS.replace("    no_lint: [SCAN_UNLOGGED]\n", "")
    write_catalog(root, text)
    _, findings = _findings(
        capsys, "scan", "--root", str(root), "--format", "json", str(root / "src")
    )
    assert findings == ["SCAN_UNLOGGED no scanned code logs 'train/reward' (row"]


def test_catalog_flag_before_the_paths_says_it_took_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path)
    monkeypatch.chdir(root)
    code = main(["scan", "--catalog", "catalog/catalog.yaml", "src"])
    err = capsys.readouterr().err
    assert code == 2
    assert "--catalog src" in err
    assert "before --catalog" in err
    # Written the other way round, src/ is scanned against that catalog.
    assert main(["scan", "src", "--catalog", "catalog/catalog.yaml"]) == 0


def test_a_key_the_catalog_declares_as_bookkeeping_is_not_undeclared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path)
    text = ROWS.replace(
        "teed:\n",
        "bookkeeping:\n  - key: train/global_step\n"
        "    reason: The step the wrapper adds to every record.\nteed:\n",
    )
    write_catalog(root, text)
    (root / "src" / "train.py").write_text(
        CODE + 'wandb.log({"train/global_step": 3, "_timestamp": 1.0})\n', encoding="utf-8"
    )
    code, findings = _findings(
        capsys, "scan", "--root", str(root), "--format", "json", str(root / "src")
    )
    assert code == 0
    assert findings == []  # declared bookkeeping, and W&B's own _* keys built in
