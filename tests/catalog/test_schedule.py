"""Schedules with a phase: ``every`` with ``phase`` and ``at_last_step``, from YAML to live-check.

The schedule rule (:mod:`codegen.catalog.schedule`) is checked as an invariant;
each field has firing and non-firing cases at validate and in live-check.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.catalog.schedule import describe
from codegen.live_check import check_file
from metric_catalog.loggers import JsonlLogger
from metric_catalog.series_rules import is_scheduled, next_scheduled


@settings(max_examples=300, derandomize=True, deadline=None)
@given(
    every=st.integers(min_value=1, max_value=50),
    phase=st.integers(min_value=-120, max_value=120),
    start=st.integers(min_value=-10, max_value=500),
)
def test_the_next_scheduled_step_is_the_first_one_at_or_after_the_start(
    every: int, phase: int, start: int
) -> None:
    due = next_scheduled(every, phase, start)
    assert due is not None
    assert start <= due < start + every
    assert is_scheduled(due, every, phase)
    assert not any(is_scheduled(step, every, phase) for step in range(start, due))


@pytest.mark.parametrize(
    ("every", "phase", "start", "due"),
    [
        (10, 0, 1, 10),  # the multiples
        (10, -1, 1, 9),  # (step + 1) % 10 == 0
        (10, 9, 1, 9),  # a phase of a period or more is its remainder
        (10, -1, 105, 109),  # a run resumed between two evaluations
        (10, 1, 2, 11),  # one step late
        (4, 0, 0, 0),
        (0, -1, 1, None),  # disabled by the configuration
        (-1, 0, 1, None),
    ],
)
def test_next_scheduled_table(every: int, phase: int, start: int, due: int | None) -> None:
    assert next_scheduled(every, phase, start) == due


@pytest.mark.parametrize(
    ("every", "phase", "last", "text"),
    [
        (10, 0, False, "every 10 steps"),
        (10, -1, False, "every 10 steps (phase -1)"),
        ("config.save_steps", 0, True, "every config.save_steps steps and at the last step"),
    ],
)
def test_a_schedule_is_described_as_reports_say_it(
    every: int | str, phase: int, last: bool, text: str
) -> None:
    assert describe(every, phase, last) == text


def _write(root: Path, *fields: str) -> None:
    lines = "".join(f"    {line}\n" for line in fields)
    (root / "catalog").mkdir(exist_ok=True)
    (root / "catalog" / "periodic.yaml").write_text(
        "owner: nemo_rl.algorithms.grpo\nmodule: periodic\ndescription: Periodic keys.\n"
        'prefix: ""\nteed:\n'
        "  - logger_key: loss\n    name: rl.periodic.loss\n    kind: gauge\n"
        '    unit: "1"\n    description: Training loss of the step.\n'
        "    requirement_level: required\n"
        "  - logger_key: val/accuracy\n    name: rl.periodic.val_accuracy\n    kind: gauge\n"
        '    unit: "1"\n    description: Validation accuracy.\n    requirement_level: required\n'
        + lines,
        encoding="utf-8",
    )


def _codes(root: Path) -> list[str]:
    result = load_and_check(root=root, lint=False)
    return [
        f"{d.code} {d.position.line}:{d.position.column}" if d.position else d.code
        for d in result.diagnostics
    ]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        pytest.param(['every: "10"', 'phase: "-1"'], [], id="phase-ok"),
        pytest.param(['every: "10"', 'phase: "0"'], [], id="phase-zero-ok"),
        pytest.param(
            ["every: config.save_steps", 'at_last_step: "true"'], [], id="at-last-step-ok"
        ),
        pytest.param(['phase: "-1"'], ["SCHEDULE_WITHOUT_EVERY 18:12"], id="phase-alone"),
        pytest.param(
            ['first_step: "3"', 'at_last_step: "true"'],
            ["SCHEDULE_WITHOUT_EVERY 19:19"],
            id="at-last-step-alone",
        ),
        pytest.param(
            ['phase: "1"', 'at_last_step: "false"'],
            ["SCHEDULE_WITHOUT_EVERY 18:12", "SCHEDULE_WITHOUT_EVERY 19:19"],
            id="both-alone",
        ),
        pytest.param(['every: "10"', 'phase: "-01"'], ["INVALID_FORMAT 19:12"], id="phase-0-lead"),
        pytest.param(['every: "10"', "phase: -1"], ["IMPLICIT_NON_STRING 19:12"], id="unquoted"),
        pytest.param(['every: "10"', "at_last_step: yes"], ["INVALID_VALUE 19:19"], id="yes"),
    ],
)
def test_phase_and_at_last_step_are_checked_at_their_position(
    tmp_path: Path, fields: list[str], expected: list[str]
) -> None:
    _write(tmp_path, *fields)
    assert _codes(tmp_path) == expected


def test_phase_and_at_last_step_are_built(tmp_path: Path) -> None:
    _write(tmp_path, "every: config.save_steps", 'phase: "-1"', 'at_last_step: "true"')
    result = load_and_check(root=tmp_path, lint=False)
    assert result.catalog is not None
    rows = {row.name: row for _f, row in result.catalog.rows()}
    built = rows["rl.periodic.val_accuracy"]
    assert (built.every_config, built.phase, built.at_last_step) == ("config.save_steps", -1, True)
    assert (rows["rl.periodic.loss"].phase, rows["rl.periodic.loss"].at_last_step) == (0, False)


def _catalog(root: Path, *fields: str) -> Catalog:
    _write(root, *fields)
    result = load_and_check(root=root, lint=False)
    assert result.catalog is not None, result.diagnostics
    return result.catalog


def _presence(catalog: Catalog, path: Path, first: int, last: int) -> tuple[str, list[str]]:
    """The validation row's presence and the not_due notices of a run of steps
    ``first..last`` logging only the training loss (val_period 10 in its config)."""
    with JsonlLogger(path, config={"grpo": {"val_period": 10}}) as log:
        for step in range(first, last + 1):
            log.log_metrics({"loss": 0.5}, step, "")
    report = check_file(str(path), catalog)
    states = {summary.row.name: summary.presence for summary in report.rows}
    notes = [n.message for n in report.notices if n.kind == "not_due"]
    return states["rl.periodic.val_accuracy"], notes


@pytest.mark.parametrize(
    ("fields", "first", "last", "state"),
    [
        # 0-based loop validating when (step + 1) % val_period == 0: steps 9, 19, ...
        (["every: config.grpo.val_period", 'phase: "-1"'], 1, 8, "not_due"),
        (["every: config.grpo.val_period", 'phase: "-1"'], 1, 9, "missing"),
        # resumed at 105: 109 is the first due step, not 110 nor 100
        (["every: config.grpo.val_period", 'phase: "-1"'], 105, 108, "not_due"),
        (["every: config.grpo.val_period", 'phase: "-1"'], 105, 109, "missing"),
        # one step late, the first value at step 11
        (['every: "10"', 'phase: "1"', 'first_step: "11"'], 2, 10, "not_due"),
        (['every: "10"', 'phase: "1"', 'first_step: "11"'], 2, 11, "missing"),
        # without a phase the multiples, as before
        (["every: config.grpo.val_period"], 1, 9, "not_due"),
        (["every: config.grpo.val_period"], 1, 10, "missing"),
        # at_last_step adds no due step: the log does not say whether the run finished
        (["every: config.grpo.val_period", 'at_last_step: "true"'], 1, 9, "not_due"),
        (["every: config.grpo.val_period", 'at_last_step: "true"'], 1, 10, "missing"),
    ],
)
def test_a_phased_row_is_due_at_the_steps_of_its_schedule(
    tmp_path: Path, fields: list[str], first: int, last: int, state: str
) -> None:
    catalog = _catalog(tmp_path, *fields)
    got, _notes = _presence(catalog, tmp_path / "run.jsonl", first, last)
    assert got == state


def test_a_not_due_notice_names_the_phase_and_the_last_step(tmp_path: Path) -> None:
    catalog = _catalog(
        tmp_path, "every: config.grpo.val_period", 'phase: "-1"', 'at_last_step: "true"'
    )
    state, notes = _presence(catalog, tmp_path / "run.jsonl", 100, 107)
    assert state == "not_due"
    assert notes == [
        "val/accuracy (rl.periodic.val_accuracy) was not logged; it is logged every 10 steps "
        "(phase -1) and at the last step, next at step 109, and the run logged steps 100 to 107"
    ]


def test_a_run_logging_at_the_phased_steps_is_clean(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path, "every: config.grpo.val_period", 'phase: "-1"')
    path = tmp_path / "run.jsonl"
    with JsonlLogger(path, config={"grpo": {"val_period": 10}}) as log:
        for step in range(0, 30):
            metrics = {"loss": 0.5}
            if (step + 1) % 10 == 0:
                metrics["val/accuracy"] = 0.75
            log.log_metrics(metrics, step, "")
    report = check_file(str(path), catalog)
    assert report.findings == []


def test_every_reader_shows_the_schedule(tmp_path: Path) -> None:
    """resolve's JSON, the docs page and the dashboard panel say when the row comes."""
    import json

    from codegen.generate.dashboards import render_dashboards
    from codegen.generate.docs import render_catalog_data
    from metric_catalog.sphinx import _data, _html

    catalog = _catalog(
        tmp_path, "every: config.grpo.val_period", 'phase: "-1"', 'at_last_step: "true"'
    )
    data_path = tmp_path / "catalog.json"
    data_path.write_text(render_catalog_data(catalog), encoding="utf-8")
    resolved = json.loads(data_path.read_text(encoding="utf-8"))
    rows = {row["name"]: row for row in resolved["rows"]}
    phased, plain = rows["rl.periodic.val_accuracy"], rows["rl.periodic.loss"]
    assert (phased["phase"], phased["at_last_step"]) == (-1, True)
    assert (plain["phase"], plain["at_last_step"]) == (0, False)

    data = _data.load(data_path)
    (path,) = data.files
    page = _html.owner_page_html(data, path, lambda target: target)
    assert "every config.grpo.val_period steps (phase -1) and at the last step" in page
    assert page.count("(phase ") == 1  # the every-step row says nothing of one

    (dashboard,) = (json.loads(text) for text in render_dashboards(catalog).values())
    descriptions = {
        panel["title"]: panel["description"]
        for panel in dashboard["panels"]
        if "description" in panel
    }
    assert descriptions["rl.periodic.val_accuracy"].endswith(
        "Logged every config.grpo.val_period steps (phase -1) and at the last step."
    )
    assert descriptions["rl.periodic.loss"] == "Training loss of the step."
