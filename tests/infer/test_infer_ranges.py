"""``infer`` proposes a ``range`` where the observed values and the name agree.

A share by its name in unit ``1`` with every value in [0, 1] gets ``{min: "0", max: "1"}``;
a count by its name whose unit implies no bound gets ``{min: "0"}``; a unit that implies
a range (``%``, seconds, bytes, ``{token}``) needs none.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.infer import infer, render

EMPTY = Catalog(())


def _rows(tmp_path: Path, values: dict[str, list[object]]) -> dict[str, str]:
    """Logger key -> its drafted row's text, from a run logging ``values`` step by step."""
    steps = max(len(v) for v in values.values())
    lines = [
        json.dumps(
            {
                "step": step + 1,
                "prefix": "train",
                "metrics": {k: v[step % len(v)] for k, v in values.items()},
            }
        )
        for step in range(steps)
    ]
    run = tmp_path / "run.jsonl"
    run.write_text("\n".join(lines) + "\n", encoding="utf-8")
    draft = infer([[str(run)]], EMPTY)
    text = "\n".join(render(f, draft.observations.runs) for f in draft.files)
    rows = re.split(r"\n(?=  - logger_key: )", text)
    found = {}
    for row in rows[1:]:
        key = row.split("logger_key: ", 1)[1].split("\n", 1)[0].strip('"')
        found[key] = row
    return found


@pytest.mark.parametrize(
    ("key", "values", "proposed"),
    [
        pytest.param("perf/mfu", [0.31, 0.38, 0.4], 'range: {min: "0", max: "1"}', id="mfu"),
        pytest.param(
            "actor/pg_clipfrac", [0.0, 0.02, 0.05], 'range: {min: "0", max: "1"}', id="clipfrac"
        ),
        pytest.param(
            "eval/accuracy", [0.5, 0.75, 1.0], 'range: {min: "0", max: "1"}', id="accuracy"
        ),
        pytest.param(
            "batch/num_prompts", [64.0, 62.5, 63.5], 'range: {min: "0"}', id="a-mean-count"
        ),
        # a whole count per step is drafted a counter: a step's change has no range
        pytest.param("batch/num_prompts", [64, 64, 60], None, id="a-counter"),
        # the name says share, the values do not: no range, the unit note says why
        pytest.param("eval/stop_rate", [0.5, 1.5, 0.2], None, id="values-above-1"),
        pytest.param("eval/stop_rate", [-0.5, 0.5], None, id="values-below-0"),
        # the unit implies a range: nothing to add
        pytest.param("perf/mfu", [31.5, 38.2], None, id="mfu-in-percent"),
        pytest.param("perf/throughput", [51000.5, 52000.1], None, id="a-rate-of-tokens"),
        pytest.param("timing_s/gen", [1.5, 2.5], None, id="a-duration"),
        # no share word, a quotient, a learning rate: no range
        pytest.param("actor/entropy", [0.1, 0.5], None, id="no-share-word"),
        pytest.param("actor/importance_ratio", [0.9, 1.0], None, id="a-quotient"),
        pytest.param("optim/lr", [0.1, 0.2], None, id="a-learning-rate"),
        pytest.param("batch/num_prompts", [64.5, -1.5], None, id="a-negative-count"),
    ],
)
def test_infer_proposes_a_range_where_values_and_name_agree(
    tmp_path: Path, key: str, values: list[object], proposed: str | None
) -> None:
    row = _rows(tmp_path, {key: values})[key]
    ranges = [line.strip() for line in row.splitlines() if line.strip().startswith("range:")]
    assert ranges == ([proposed] if proposed else [])


def test_a_drafted_range_validates_and_silences_range_suggested(tmp_path: Path) -> None:
    run_rows = _rows(tmp_path, {"perf/mfu": [0.31, 0.4], "eval/accuracy": [0.5, 0.7]})
    assert all('range: {min: "0", max: "1"}' in row for row in run_rows.values())
    draft = infer([[str(tmp_path / "run.jsonl")]], EMPTY)
    root = tmp_path / "project"
    (root / "catalog").mkdir(parents=True)
    for draft_file in draft.files:
        text = render(draft_file, draft.observations.runs)
        text = text.replace("owner: TODO.owner", f"owner: myrl.{draft_file.module}")
        (root / "catalog" / draft_file.file_name).write_text(text, encoding="utf-8")
    result = load_and_check(root=root)
    assert result.catalog is not None
    ranges = {row.logger_key: row.declared_range for _f, row in result.catalog.rows()}
    assert {k: (r.low, r.high) if r else None for k, r in ranges.items()} == {
        "perf/mfu": (0.0, 1.0),
        "eval/accuracy": (0.0, 1.0),
    }
    assert "RANGE_SUGGESTED" not in {d.code for d in result.diagnostics}


@pytest.mark.parametrize(
    ("values", "noted"),
    [([1.0, float("inf"), 2.0], True), ([1.0, 1.5, 2.0], False)],
    ids=["an-inf", "finite"],
)
def test_a_key_logged_as_nan_or_inf_is_told_about_non_finite_allowed(
    tmp_path: Path, values: list[object], noted: bool
) -> None:
    lines = [
        json.dumps({"step": step + 1, "prefix": "train", "metrics": {"grad_norm": value}})
        for step, value in enumerate(values)
    ]
    run = tmp_path / "run.jsonl"
    run.write_text("\n".join(lines) + "\n", encoding="utf-8")
    draft = infer([[str(run)]], EMPTY)
    (row,) = [row for f in draft.files for row in f.rows if row.logger_key == "grad_norm"]
    said = [note for note in row.notes if "non_finite: allowed" in note]
    assert len(said) == (1 if noted else 0)
    assert all("NaN or an infinity 1 time(s)" in note for note in said)
    text = "\n".join(render(f, draft.observations.runs) for f in draft.files)
    assert ("non_finite: allowed" in text) is noted  # a comment above the drafted row


@pytest.mark.parametrize(
    ("steps", "note"),
    [
        ([9, 19, 29], 'every: "10" with phase: "-1"'),
        ([11, 21, 31], 'every: "10" with phase: "1"'),
        ([10, 20, 30], None),
    ],
    ids=["zero-based", "one-late", "multiples"],
)
def test_a_periodic_key_off_the_multiples_is_told_its_phase(
    tmp_path: Path, steps: list[int], note: str | None
) -> None:
    lines = []
    for step in range(1, 32):
        metrics: dict[str, float] = {"loss": 0.5}
        if step in steps:
            metrics["val/accuracy"] = 0.75
        lines.append(json.dumps({"step": step, "prefix": "train", "metrics": metrics}))
    run = tmp_path / "run.jsonl"
    run.write_text("\n".join(lines) + "\n", encoding="utf-8")
    draft = infer([[str(run)]], EMPTY)
    (row,) = [r for f in draft.files for r in f.rows if r.logger_key == "val/accuracy"]
    phased = [n for n in row.notes if "phase:" in n]
    assert phased == ([] if note is None else [f"its steps are not multiples of 10: {note}"])
