"""Keys logged against another step axis: Megatron-LM's ``... vs samples`` TensorBoard tags.

Megatron-LM's ``training_log`` writes each value twice, ``add_scalar("lm loss", v, iteration)``
and ``add_scalar("lm loss vs samples", v, consumed_train_samples)``. Read as one run, the
sample counts made the run look 512 times longer than it was, so a row first due at a
later iteration (validation every ``eval_interval``) was reported missing. A row's
``step_axis`` says what its step counts; such records do not move the run's last step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.live_check import check_file
from metric_catalog.loggers import JsonlLogger

CATALOG = """\
owner: megatron.training.training
module: training
description: What Megatron-LM's training_log writes to TensorBoard.
prefix: ""
teed:
  - logger_key: lm loss
    name: rl.megatron.lm_loss
    kind: gauge
    unit: ""
    description: Language-model loss of the iteration.
    requirement_level: required
    no_lint: [LOGGER_KEY_BACKEND_UNSAFE]
  - logger_key: lm loss vs samples
    name: rl.megatron.lm_loss_vs_samples
    kind: gauge
    unit: ""
    description: Language-model loss of the iteration, logged at the consumed sample count.
    requirement_level: required
    step_axis: samples
    no_lint: [LOGGER_KEY_BACKEND_UNSAFE]
  - logger_key: lm loss validation
    name: rl.megatron.lm_loss_validation
    kind: gauge
    unit: ""
    description: Language-model loss over the validation set.
    requirement_level: conditionally_required
    condition: config.eval_interval > 0
    first_step: config.eval_interval
    no_lint: [LOGGER_KEY_BACKEND_UNSAFE]
  - logger_key: lm loss validation vs samples
    name: rl.megatron.lm_loss_validation_vs_samples
    kind: gauge
    unit: ""
    description: Language-model loss over the validation set, at the consumed sample count.
    requirement_level: conditionally_required
    condition: config.eval_interval > 0
    step_axis: samples
    first_step: config.eval_interval
    no_lint: [LOGGER_KEY_BACKEND_UNSAFE]
"""

GLOBAL_BATCH = 512


@pytest.fixture(scope="module")
def megatron_catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """Megatron-LM's rows of :data:`CATALOG`, some on the consumed-samples axis, linted clean."""
    root = tmp_path_factory.mktemp("megatron")
    (root / "catalog").mkdir()
    (root / "catalog" / "training.yaml").write_text(CATALOG, encoding="utf-8")
    result = load_and_check(root=root)
    assert result.catalog is not None, result.diagnostics
    assert [str(d) for d in result.diagnostics] == []
    return result.catalog


def _run(path: Path, iterations: int, *, vs_samples: bool = True) -> Path:
    """One record per add_scalar call, as a SummaryWriter-shaped logger writes them."""
    with JsonlLogger(path, config={"eval_interval": 1000}) as log:
        for iteration in range(10, iterations + 1, 10):
            samples = iteration * GLOBAL_BATCH
            log.log_metrics({"lm loss": 2.0}, iteration)
            if vs_samples:
                log.log_metrics({"lm loss vs samples": 2.0}, samples)
    return path


def _states(catalog: Catalog, path: Path) -> tuple[dict[str, str], list[Any], int | None]:
    report = check_file(str(path), catalog)
    states = {summary.row.name: summary.presence for summary in report.rows}
    return states, [(f.kind, f.series) for f in report.findings], report.last_step


def test_vs_samples_steps_do_not_make_the_run_look_longer(
    megatron_catalog: Catalog, tmp_path: Path
) -> None:
    """100 iterations (51,200 samples): validation every 1000 iterations is not due yet."""
    states, findings, last_step = _states(megatron_catalog, _run(tmp_path / "run.jsonl", 100))
    assert findings == []
    assert last_step == 100
    assert states["rl.megatron.lm_loss_validation"] == "not_due"
    # Its first step is a training step too: due when validation is.
    assert states["rl.megatron.lm_loss_validation_vs_samples"] == "not_due"


def test_a_row_on_another_axis_is_due_by_that_axis(
    megatron_catalog: Catalog, tmp_path: Path
) -> None:
    """1,000 iterations (512,000 samples): both validation rows are due, and missing."""
    _seen, findings, _last = _states(megatron_catalog, _run(tmp_path / "run.jsonl", 1000))
    assert sorted(findings) == [
        ("missing", "rl.megatron.lm_loss_validation"),
        ("missing", "rl.megatron.lm_loss_validation_vs_samples"),
    ]


def test_a_required_row_on_another_axis_is_still_missing(
    megatron_catalog: Catalog, tmp_path: Path
) -> None:
    """The axis changes when a row is due, not whether it is judged."""
    _seen, findings, _last = _states(
        megatron_catalog, _run(tmp_path / "run.jsonl", 100, vs_samples=False)
    )
    assert findings == [("missing", "rl.megatron.lm_loss_vs_samples")]


@pytest.mark.parametrize(("written", "loaded"), [("samples", "samples"), ("step", "")])
def test_step_axis_is_loaded_and_step_is_the_default(
    tmp_path: Path, written: str, loaded: str
) -> None:
    (tmp_path / "catalog").mkdir()
    text = CATALOG.replace("step_axis: samples", f"step_axis: {written}", 1)
    (tmp_path / "catalog" / "training.yaml").write_text(text, encoding="utf-8")
    result = load_and_check(root=tmp_path)
    assert result.catalog is not None
    axes = {row.name: row.step_axis for _f, row in result.catalog.rows()}
    assert axes["rl.megatron.lm_loss_vs_samples"] == loaded
    assert axes["rl.megatron.lm_loss"] == ""


def test_resolve_shows_each_rows_step_axis(megatron_catalog: Catalog) -> None:
    """``resolve`` names the axis live-check judges a row's steps by (``step`` by default)."""
    from codegen.generate.resolve import resolve_catalog

    resolved = resolve_catalog(megatron_catalog)
    axes = {row["name"]: row["step_axis"] for row in resolved["rows"]}  # type: ignore[index]
    assert axes["rl.megatron.lm_loss"] == "step"
    assert axes["rl.megatron.lm_loss_vs_samples"] == "samples"
