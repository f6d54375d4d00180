"""Opaque ``annotations`` on rows and attributes: any YAML data, bounded, carried to resolve."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.catalog.annotations import (
    MAX_DEPTH,
    MAX_NODES,
    MAX_TEXT,
    annotation_problem,
    annotations_from,
)
from codegen.catalog.pipeline import CheckResult, load_and_check
from codegen.generate.resolve import resolve_catalog

CATALOG = """\
owner: pkg.train
module: train
description: Training metrics.
attributes:
  - name: rl.dataset
    type: string
    description: Validation dataset.
    max_cardinality: "32"
    annotations: {ui: {color: blue}}
recorded:
  - name: rl.loss
    kind: gauge
    unit: "1"
    description: Loss.
    annotations:
{row}
"""

GOOD_ROW = """\
      dashboard: {folder: training, pinned: true, order: 3, weight: 0.5}
      code_generation: {exclude: false}
      owners: [ml-platform, null]
      since: 2024-01-01
"""


def _load(tmp_path: Path, row_annotations: str) -> CheckResult:
    (tmp_path / "catalog").mkdir(exist_ok=True)
    text = CATALOG.replace("{row}\n", row_annotations)
    (tmp_path / "catalog" / "train.yaml").write_text(text, encoding="utf-8")
    return load_and_check(root=tmp_path, lint=False)


def test_annotations_reach_the_model_and_the_resolved_catalog_as_yaml_data(
    tmp_path: Path,
) -> None:
    result = _load(tmp_path, GOOD_ROW)
    assert result.ok, [d.format() for d in result.diagnostics]
    document = resolve_catalog(result.catalog)
    (row,) = document["rows"]
    assert row["annotations"] == {
        "dashboard": {"folder": "training", "pinned": True, "order": 3, "weight": 0.5},
        "code_generation": {"exclude": False},
        "owners": ["ml-platform", None],
        "since": "2024-01-01",  # a date stays its text: JSON has none
    }
    (attribute,) = document["attributes"]
    assert attribute["annotations"] == {"ui": {"color": "blue"}}


def test_annotations_that_are_no_mapping_are_the_schemas_wrong_type(tmp_path: Path) -> None:
    (finding,) = _load(tmp_path, "      - a list\n").diagnostics
    assert (finding.code, str(finding.position)) == ("WRONG_TYPE", "catalog/train.yaml:16:7")


def test_a_row_without_annotations_resolves_to_an_empty_mapping(tmp_path: Path) -> None:
    text = CATALOG.replace("    annotations:\n{row}\n", "")
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "train.yaml").write_text(text, encoding="utf-8")
    result = load_and_check(root=tmp_path, lint=False)
    assert result.ok
    assert [row["annotations"] for row in resolve_catalog(result.catalog)["rows"]] == [{}]


def _nested(depth: int) -> str:
    """``a: {a: ... {a: 1}}``: ``depth`` mappings, ``annotations`` itself included."""
    return "      " + "a: {" * (depth - 1) + "a: 1" + "}" * (depth - 1) + "\n"


@pytest.mark.parametrize(
    ("row_annotations", "said"),
    [
        ("      metric_catalog: {owner: x}\n", "uses the key 'metric_catalog'"),
        ("      code_generation: {metric_value_type: int}\n", "'metric_value_type'"),
        ("      code_generation: yes please\n", "no mapping"),
        (_nested(MAX_DEPTH + 1), f"nests deeper than {MAX_DEPTH} levels"),
        ("      a: [" + ", ".join(["1"] * MAX_NODES) + "]\n", f"more than {MAX_NODES}"),
        (f"      a: {'x' * (MAX_TEXT + 1)}\n", f"longer than {MAX_TEXT}"),
        ("      a: .nan\n", "NaN or infinite"),
        ("      a: -.inf\n", "NaN or infinite"),
    ],
)
def test_unusable_annotations_are_reported_at_the_field_and_the_row_is_left_out(
    tmp_path: Path, row_annotations: str, said: str
) -> None:
    result = _load(tmp_path, row_annotations)
    (finding,) = result.diagnostics
    assert finding.code == "ANNOTATIONS_INVALID"
    assert said in finding.message
    assert "'rl.loss'" in finding.message
    assert str(finding.position).startswith("catalog/train.yaml:16:")
    assert [row.name for _f, row in result.catalog.rows()] == []


@pytest.mark.parametrize(
    "row_annotations",
    [
        _nested(MAX_DEPTH),
        # The mapping, the list and its items: MAX_NODES nodes in all.
        "      b: [" + ", ".join(["1"] * (MAX_NODES - 2)) + "]\n",
        f"      c: {'x' * MAX_TEXT}\n",
    ],
    ids=["deepest", "most nodes", "longest string"],
)
def test_annotations_at_the_bounds_are_accepted(tmp_path: Path, row_annotations: str) -> None:
    result = _load(tmp_path, row_annotations)
    assert result.ok, [d.format() for d in result.diagnostics]


def test_an_attributes_unusable_annotations_are_reported_at_the_attribute(
    tmp_path: Path,
) -> None:
    text = CATALOG.replace("annotations: {ui: {color: blue}}", "annotations: {metric_catalog: 1}")
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "train.yaml").write_text(text.replace("{row}\n", GOOD_ROW), "utf-8")
    result = load_and_check(root=tmp_path, lint=False)
    assert "ANNOTATIONS_INVALID" in [d.code for d in result.diagnostics]
    (finding,) = [d for d in result.diagnostics if d.code == "ANNOTATIONS_INVALID"]
    assert "attribute 'rl.dataset'" in finding.message
    assert str(finding.position) == "catalog/train.yaml:9:18"


json_data = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=30,
)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(data=st.dictionaries(st.sampled_from(["ui", "team", "links"]), json_data, max_size=3))
def test_any_bounded_json_data_is_kept_exactly(data: dict[str, Any]) -> None:
    if annotation_problem(data) is not None:  # past a bound: nesting is the only one drawn
        return
    kept = annotations_from(data)
    assert kept.data() == json.loads(json.dumps(data))
    assert hash(kept) == hash(annotations_from(data))
