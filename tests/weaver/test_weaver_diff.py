"""``diff --against`` a Weaver registry folder: the registry imported on the fly as the baseline."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CATALOG = """\
owner: pkg.train
module: train
description: Training metrics.
teed:
  - logger_key: loss
    name: rl.loss
    kind: gauge
    unit: "1"
    description: Training loss.
    stability: stable
  - logger_key: reward
    name: rl.reward.mean
    kind: gauge
    unit: "1"
    description: Mean reward.
"""


BROKEN_REGISTRY_FILE = """\
groups:
  - id: metric.x
    type: metric
    metric_name: rl.x
    instrument: gauge
    unit: "1"
    stability: stable
    brief: X.
    attributes: [{ref: rl.nothing}]
"""


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codegen", *args, "--root", str(root)],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        check=False,
    )


def _project(root: Path, catalog: str) -> Path:
    (root / "catalog").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[tool.metric-catalog]\ncatalog = ["catalog/*.yaml"]\n', encoding="utf-8"
    )
    (root / "catalog" / "train.yaml").write_text(catalog, encoding="utf-8")
    return root


def test_a_catalog_diffs_clean_against_its_own_export(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", CATALOG)
    assert _cli(root, "export", "weaver", "--out", str(tmp_path / "reg")).returncode == 0
    proc = _cli(root, "diff", "--against", str(tmp_path / "reg"))
    assert proc.returncode == 0, proc.stderr
    assert "0 added, 0 removed, 0 renamed, 0 changed" in proc.stdout


def test_removing_a_stable_series_the_registry_publishes_is_breaking(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", CATALOG)
    assert _cli(root, "export", "weaver", "--out", str(tmp_path / "reg")).returncode == 0
    kept = (
        CATALOG[: CATALOG.index("  - logger_key: loss")]
        + CATALOG[CATALOG.index("  - logger_key: reward") :]
    )
    (root / "catalog" / "train.yaml").write_text(kept, encoding="utf-8")
    proc = _cli(root, "diff", "--against", str(tmp_path / "reg"))
    assert proc.returncode == 1
    assert "STABLE_REMOVED" in proc.stdout
    assert "rl.loss" in proc.stdout


def test_a_catalog_imported_from_semconv_diffs_clean_against_it(
    semconv_registry: Path, tmp_path: Path
) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "pyproject.toml").write_text(
        '[tool.metric-catalog]\ncatalog = ["catalog/*.yaml"]\n', encoding="utf-8"
    )
    proc = _cli(
        root,
        "import",
        "weaver",
        str(semconv_registry),
        "--out",
        str(root / "catalog"),
        "--prefix",
        "rl.",
    )
    assert proc.returncode == 0, proc.stderr
    diff = _cli(root, "diff", "--against", str(semconv_registry))
    assert diff.returncode == 0, diff.stdout + diff.stderr
    assert "0 added, 0 removed, 0 renamed, 0 changed" in diff.stdout


def test_a_registry_that_does_not_import_is_a_bad_baseline(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", CATALOG)
    registry = tmp_path / "reg"
    registry.mkdir()
    (registry / "manifest.yaml").write_text("schema_url: https://e.com/s/1.0.0\n", encoding="utf-8")
    (registry / "m.yaml").write_text(BROKEN_REGISTRY_FILE, encoding="utf-8")
    proc = _cli(root, "diff", "--against", str(registry))
    assert proc.returncode == 2
    assert "WEAVER_REF_UNKNOWN" in proc.stderr
    assert "does not import cleanly" in proc.stderr
