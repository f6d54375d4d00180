"""``temporality: cumulative`` in the catalog: built, generated, resolved, diffed, live-checked."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.cli import main
from codegen.diff import diff_catalogs
from codegen.generate.python import render_python_modules
from metric_catalog import vocabulary
from tests.catalog.test_presence import check, diagnostics, load, record, write

STEP = """\
  - logger_key: global_step
    name: rl.train.global_step
    kind: counter
    unit: "{step}"
    description: Steps taken since the run started.
    stability: STABILITY
"""
TOKENS = """\
  - logger_key: tokens
    name: rl.train.tokens
    kind: counter
    unit: "{token}"
    description: Tokens trained on this step.
"""


def _catalog(root: Path, temporality: str | None, stability: str = "development") -> Catalog:
    step = STEP.replace("STABILITY", stability)
    if temporality is not None:
        step += f"    temporality: {temporality}\n"
    root.mkdir(parents=True, exist_ok=True)
    write(root, "grpo", "teed:\n" + step + TOKENS)
    return load(root)


def _rows(catalog: Catalog) -> dict[str, str]:
    return {row.name: row.temporality for _, row in catalog.rows()}


def test_temporality_is_built_with_delta_as_the_default(tmp_path: Path) -> None:
    """A counter row may say cumulative; a row that says nothing is delta."""
    catalog = _catalog(tmp_path, "cumulative")
    assert _rows(catalog) == {"rl.train.global_step": "cumulative", "rl.train.tokens": "delta"}


@pytest.mark.parametrize("kind", ["gauge", "histogram", "up_down_counter"])
def test_cumulative_on_a_row_that_is_not_a_counter_is_refused_where_it_is_written(
    tmp_path: Path, kind: str
) -> None:
    """TEMPORALITY_NOT_COUNTER points at the temporality value."""
    write(
        tmp_path,
        "grpo",
        "teed:\n"
        + STEP.replace("kind: counter", f"kind: {kind}").replace("STABILITY", "development")
        + "    temporality: cumulative\n",
    )
    assert diagnostics(tmp_path) == ["TEMPORALITY_NOT_COUNTER 12:18"]


def test_the_generated_row_carries_temporality_only_when_not_the_default(tmp_path: Path) -> None:
    """cumulative is written (and imports into a TeedMetric that has it); delta is not written."""
    modules = render_python_modules(_catalog(tmp_path, "cumulative"))
    (text,) = [source for path, source in modules.items() if path.endswith("grpo.py")]
    assert text.count("temporality=") == 1
    assert '    temporality="cumulative",\n' in text
    namespace: dict[str, object] = {}
    saved = (vocabulary._REGISTERED, vocabulary._RECORDED, vocabulary._FROZEN)
    try:
        vocabulary._REGISTERED, vocabulary._RECORDED, vocabulary._FROZEN = {}, {}, False
        exec(compile(text, "grpo.py", "exec"), namespace)  # the module as generated
        rows = {row.name: row.temporality for row in vocabulary.teed_metrics()}
    finally:
        vocabulary._REGISTERED, vocabulary._RECORDED, vocabulary._FROZEN = saved
    assert rows == {"rl.train.global_step": "cumulative", "rl.train.tokens": "delta"}
    plain = render_python_modules(_catalog(tmp_path, None))
    assert not any("temporality" in source for source in plain.values())


def test_resolve_carries_temporality(tmp_path: Path) -> None:
    """The resolved JSON has each teed row's temporality."""
    _catalog(tmp_path, "cumulative")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["resolve", "--root", str(tmp_path), "--format", "json"]) == 0
    rows = {row["name"]: row["temporality"] for row in json.loads(out.getvalue())["rows"]}
    assert rows == {"rl.train.global_step": "cumulative", "rl.train.tokens": "delta"}


@pytest.mark.parametrize(
    ("stability", "code"),
    [
        ("stable", "STABLE_TEMPORALITY_CHANGED"),
        ("beta", "BETA_TEMPORALITY_CHANGED"),
        ("alpha", None),
    ],
)
@pytest.mark.parametrize(("before", "after"), [(None, "cumulative"), ("cumulative", "delta")])
def test_a_temporality_change_breaks_stable_and_beta_rows(
    tmp_path: Path, stability: str, code: str | None, before: str | None, after: str
) -> None:
    """Reading a running total as deltas (or back) changes what the counter means."""
    old = _catalog(tmp_path / "old", before, stability)
    new = _catalog(tmp_path / "new", after, stability)
    report = diff_catalogs(old, new)
    codes = [diagnostic.code for diagnostic in report.diagnostics]
    assert codes == ([code] if code else [])


def test_live_check_counts_a_decrease_of_a_running_total_as_a_reset(tmp_path: Path) -> None:
    """1, 2, 3, then 1 (a restart), 2: one reset, no finding; a delta counter reports no resets."""
    catalog = _catalog(tmp_path, "cumulative")
    lines = [
        record(step, global_step=total, tokens=5) for step, total in enumerate([1, 2, 3, 1, 2])
    ]
    report = check(catalog, *lines)
    assert [f.kind for f in report.findings if f.series == "rl.train.global_step"] == []
    rows = {row["series"]: row for row in json.loads(report.to_json())["rows"]}
    assert rows["rl.train.global_step"]["resets"] == 1
    assert "resets" not in rows["rl.train.tokens"]
