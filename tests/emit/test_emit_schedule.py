"""``emit`` follows a row's schedule: ``every`` with ``phase``, ``first_step``, ``at_last_step``."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.emit import plan_steps

CATALOG = """\
owner: nemo_rl.algorithms.grpo
module: periodic
description: Periodic keys.
prefix: ""
teed:
  - logger_key: val/accuracy
    name: rl.periodic.val_accuracy
    kind: gauge
    unit: "1"
    description: Validation accuracy, after every 4 steps of a 0-based loop.
    every: "4"
    phase: "-1"
  - logger_key: timing/save
    name: rl.periodic.save_duration
    kind: gauge
    unit: s
    description: Checkpoint time, every 4 steps and at the end.
    every: "4"
    at_last_step: "true"
  - logger_key: timing/late
    name: rl.periodic.late_duration
    kind: gauge
    unit: s
    description: A duration logged one step late, from step 5.
    every: "4"
    phase: "1"
    first_step: "5"
  - logger_key: time_per_save
    name: rl.periodic.time_per_save
    kind: gauge
    unit: s
    description: Checkpoint time every 8 steps, or at the end.
    every: "8"
    at_last_step: "true"
"""


@pytest.fixture(scope="module")
def periodic(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    root: Path = tmp_path_factory.mktemp("periodic")
    (root / "catalog").mkdir()
    (root / "catalog" / "periodic.yaml").write_text(CATALOG, encoding="utf-8")
    result = load_and_check(root=root, lint=False)
    assert result.catalog is not None, result.diagnostics
    return result.catalog


@pytest.mark.parametrize(
    ("steps", "key", "expected"),
    [
        (10, "val/accuracy", [3, 7]),
        (10, "timing/save", [4, 8, 10]),
        (8, "timing/save", [4, 8]),  # the last step is on the schedule: logged once
        (10, "timing/late", [5, 9]),
        (5, "time_per_save", [5]),  # a run shorter than the period logs it at its end
        (3, "timing/late", []),
    ],
)
def test_emit_logs_a_row_at_the_steps_of_its_schedule(
    periodic: Catalog, steps: int, key: str, expected: list[int]
) -> None:
    got = [
        step.step
        for step in plan_steps(periodic, None, steps)
        if any(key in call.metrics for call in step.logged)
    ]
    assert got == expected
