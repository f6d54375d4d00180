"""The repository's own generated files: current, importable, and used by the example owner."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.cli import main

ROOT = Path(__file__).resolve().parents[2]
OWNER_MODULES = ("attributes", "common", "dpo", "grpo", "ppo", "sft", "telemetry", "timing", "vllm")
# Rows of the modules the sync GRPO example imports that another loop logs.
OTHER_LOOPS = {
    ("train", "buffer_size"),  # async GRPO
    ("train", "avg_trajectory_age"),  # async GRPO
    ("timing/train", "weight_sync"),  # async GRPO
    ("timing/train", "value_training"),  # PPO
}


def _python(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_committed_generated_files_are_current(capsys: pytest.CaptureFixture[str]) -> None:
    """check on the repository itself passes: run `make generate` when this fails."""
    code = main(["check", "--root", str(ROOT)])
    assert code == 0, capsys.readouterr().out


def test_repo_catalog_passes_validation_and_lints_without_errors() -> None:
    """The shipped catalog loads, validates and lints with no errors."""
    result = load_and_check(root=ROOT)
    assert result.ok, [d.format() for d in result.diagnostics]
    assert sorted(f.module for f in result.catalog.files) == sorted(OWNER_MODULES)


def test_repo_catalog_covers_kinds_families_and_several_prefixes(repo_catalog: Catalog) -> None:
    """The real catalog exercises gauges, counters, a histogram, stable rows and key families.

    Upstream declares no up-down counter and nothing deprecated, so neither does the
    catalog; any deprecation must still name a declared series.
    """
    rows = [row for _, row in repo_catalog.rows()]
    assert {row.kind for row in rows} >= {"gauge", "counter", "histogram"}
    assert {row.section for row in rows} == {"teed", "recorded"}
    assert any(row.stability == "stable" for row in rows)
    assert any(row.is_family and row.attributes for row in rows)
    assert any(row.other_prefixes for row in rows)
    names = {row.name for row in rows}
    deprecated = [row for row in rows if row.deprecated is not None]
    assert all(row.deprecated and row.deprecated.replaced_by in names for row in deprecated)
    assert 50 <= len(rows) <= 90


def test_generated_package_imports_no_owner_module() -> None:
    """Importing metric_catalog.generated declares nothing: owners opt in by importing theirs."""
    out = _python(
        "import sys, metric_catalog.generated\n"
        "from metric_catalog.vocabulary import teed_metrics, recorded_metrics\n"
        "print(sorted(m for m in sys.modules if m.startswith('metric_catalog.generated.')))\n"
        "print(len(teed_metrics()), len(recorded_metrics()))\n"
    )
    assert out.splitlines() == ["[]", "0 0"]


def test_all_owner_modules_import_together_and_register_every_row(repo_catalog: Catalog) -> None:
    """Every owner module imports in one process without a clash and registers all its rows."""
    imports = "; ".join(f"import metric_catalog.generated.{m}" for m in OWNER_MODULES)
    out = _python(
        f"{imports}\n"
        "from metric_catalog.vocabulary import teed_metrics, recorded_metrics\n"
        "print(len(teed_metrics()) + len(recorded_metrics()))\n"
    )
    rows = sum(len(f.rows) for f in repo_catalog.files)
    assert int(out) == rows


def test_example_owner_logs_only_declared_keys_and_all_of_its_rows() -> None:
    """Every (prefix, key) the GRPO example logs is a declared teed row, and none is missed."""
    from examples.grpo_owner import grpo_step_metrics
    from metric_catalog.generated import common, grpo, timing, vllm

    declared = {(r.prefix, r.logger_key) for m in (common, grpo, timing, vllm) for r in m.TEED}
    logged = {
        (prefix, key)
        for prefix, metrics in grpo_step_metrics(0, random.Random(7)).items()
        for key in metrics
    }
    assert declared >= OTHER_LOOPS
    assert logged == declared - OTHER_LOOPS
    later = grpo_step_metrics(3, random.Random(7))
    assert "validation" not in later
    assert all(isinstance(v, float) for m in later.values() for v in m.values())


def test_example_owner_is_deterministic_for_a_seed() -> None:
    """The same seed gives the same simulated step."""
    from examples.grpo_owner import grpo_step_metrics

    assert grpo_step_metrics(5, random.Random(1)) == grpo_step_metrics(5, random.Random(1))


def test_example_owner_runs_as_a_script() -> None:
    """``python -m examples.grpo_owner`` prints one step as JSON, prefix -> metrics."""
    printed = json.loads(
        _python("import runpy; runpy.run_module('examples.grpo_owner', run_name='__main__')")
    )
    assert 0.0 < printed["train"]["reward"] < 1.0
    assert {"train", "timing/train", "performance"} <= set(printed)
