"""``emit`` follows a row's schedule: ``every`` with ``phase``, ``first_step``, ``at_last_step``."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.emit import plan_steps
from codegen.live_check import check_file
from metric_catalog.loggers import JsonlLogger

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


SCHEDULED = """\
owner: nemo_rl.algorithms.grpo
module: scheduled
description: One periodic key.
prefix: ""
teed:
  - logger_key: loss
    name: rl.scheduled.loss
    kind: gauge
    unit: "1"
    description: Logged every step.
    requirement_level: required
  - logger_key: val/accuracy
    name: rl.scheduled.accuracy
    kind: gauge
    unit: "1"
    description: Logged on its schedule.
    requirement_level: required
"""


@settings(max_examples=25, derandomize=True, deadline=None)
@given(
    every=st.integers(min_value=1, max_value=12),
    phase=st.integers(min_value=-12, max_value=12),
    first=st.one_of(st.none(), st.integers(min_value=0, max_value=20)),
    last=st.booleans(),
    steps=st.integers(min_value=1, max_value=40),
)
def test_a_sample_run_on_a_rows_schedule_is_never_missing_it(
    every: int, phase: int, first: int | None, last: bool, steps: int
) -> None:
    """emit and live-check read one schedule rule: what emit logs, live-check finds due."""
    fields = [f'every: "{every}"', f'phase: "{phase}"']
    fields += [] if first is None else [f'first_step: "{first}"']
    fields += ['at_last_step: "true"'] if last else []
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "catalog").mkdir()
        text = SCHEDULED + "".join(f"    {line}\n" for line in fields)
        (root / "catalog" / "scheduled.yaml").write_text(text, encoding="utf-8")
        result = load_and_check(root=root, lint=False)
        assert result.catalog is not None, result.diagnostics
        path = root / "run.jsonl"
        with JsonlLogger(path) as log:
            for step in plan_steps(result.catalog, None, steps):
                for call in step.logged:
                    log.log_metrics(call.metrics, step.step, call.prefix)
        report = check_file(str(path), result.catalog)
    assert [f.series for f in report.findings if f.kind == "missing"] == []
