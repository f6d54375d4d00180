"""``--key-rewrite`` applied segment by segment: a mangled and a genuine spelling in one key."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from codegen.live_check import check_stream
from codegen.runs.rewrites import key_readings
from tests.catalog_projects import POLICY_LOSS_FAMILY as OPEN
from tests.catalog_projects import loaded_catalog

CATALOG = """\
owner: evals
module: evals
description: Evaluation metrics, logged to MLflow (which spells '@' as '_at_').
prefix: eval
attributes:
  - name: rl.source
    type: string
    description: The evaluation data source.
    values:
      - value: aime_at_2024
        description: AIME 2024, as the data set is named.
      - value: math
        description: The MATH test set.
teed:
  - logger_key: "{rl.source}/pass@1"
    name: rl.eval.pass_at_1
    kind: gauge
    unit: "1"
    description: Share of problems solved at the first attempt.
    attributes:
      - ref: rl.source
"""

AT = (("_at_", "@"),)


def test_a_key_with_a_mangled_and_a_genuine_spelling_routes_right(tmp_path: Path) -> None:
    """``aime_at_2024`` is the data source's name; ``pass_at_1`` is MLflow's ``pass@1``."""
    catalog = loaded_catalog(tmp_path / "project", CATALOG)
    line = {"step": 1, "prefix": "eval", "metrics": {"aime_at_2024/pass_at_1": 0.3}}
    stream = io.BytesIO(json.dumps(line).encode() + b"\n")
    report = check_stream(stream, catalog, key_rewrites=AT)
    assert [(f.kind, f.key) for f in report.findings] == []
    assert {s.row.name: s.logged for s in report.rows} == {"rl.eval.pass_at_1": 1}


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("a_at_b", ["a@b", "a_at_b"]),
        ("x/y", ["x/y"]),
        (
            "p_at_1/q_at_2",
            ["p@1/q@2", "p@1/q_at_2", "p_at_1/q@2", "p_at_1/q_at_2"],
        ),
    ],
)
def test_the_readings_of_a_key_go_from_most_rewritten_to_as_read(
    key: str, expected: list[str]
) -> None:
    """The whole key rewritten first, the key as read last, each reading once."""
    assert key_readings(key, AT) == expected


def test_the_values_an_open_placeholder_took_are_listed_so_a_misspelling_shows(
    tmp_path: Path,
) -> None:
    """``policy/entropy_los`` is swallowed by the family, but the report lists it."""
    catalog = loaded_catalog(tmp_path / "project", OPEN)
    lines = [
        {"step": s, "prefix": "", "metrics": {"policy/kl": 0.1, "policy/entropy_los": 0.2}}
        for s in (1, 2)
    ]
    stream = io.BytesIO(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    report = check_stream(stream, catalog)
    assert report.findings == []
    document = json.loads(report.to_json())
    assert document["coverage"]["open_values"] == {
        "rl.policy.loss_term": {"rl.loss_name": {"seen": ["entropy_los", "kl"], "capped": False}}
    }


TWO_ROWS = """\
owner: evals
module: evals
description: Two rows whose keys differ only by '@' and '_at_'.
prefix: eval
teed:
  - logger_key: pass@1
    name: rl.eval.pass_at_1
    kind: gauge
    unit: "1"
    description: Share of problems solved at the first attempt.
  - logger_key: pass_at_1
    name: rl.eval.pass_at_1_legacy
    kind: gauge
    unit: "1"
    description: The same share under the legacy name.
  - logger_key: entropy_at_end
    name: rl.eval.entropy_at_end
    kind: gauge
    unit: ""
    description: Entropy of the last token.
"""

OPEN_SOURCE = """\
owner: evals
module: evals
description: Evaluation metrics under an open data-source family.
prefix: eval
attributes:
  - name: rl.source
    type: string
    description: The evaluation data source.
    max_cardinality: "64"
teed:
  - logger_key: "{rl.source}/pass@1"
    name: rl.eval.pass_at_1
    kind: gauge
    unit: "1"
    description: Share of problems solved at the first attempt.
    attributes:
      - ref: rl.source
"""


def _one_line(metrics: dict[str, float]) -> io.BytesIO:
    line = {"step": 1, "prefix": "eval", "metrics": metrics}
    return io.BytesIO(json.dumps(line).encode() + b"\n")


@pytest.mark.parametrize(
    ("catalog_text", "key", "readings"),
    [
        pytest.param(
            TWO_ROWS,
            "pass_at_1",
            ["'pass@1' -> rl.eval.pass_at_1", "'pass_at_1' -> rl.eval.pass_at_1_legacy"],
            id="two-rows",
        ),
        pytest.param(
            OPEN_SOURCE,
            "aime_at_2024/pass_at_1",
            [
                "'aime@2024/pass@1' -> rl.eval.pass_at_1 (rl.source=aime@2024)",
                "'aime_at_2024/pass@1' -> rl.eval.pass_at_1 (rl.source=aime_at_2024)",
            ],
            id="open-family-two-values",
        ),
    ],
)
def test_a_key_whose_readings_route_apart_is_an_ambiguous_rewrite_credited_to_no_row(
    tmp_path: Path, catalog_text: str, key: str, readings: list[str]
) -> None:
    """No reading is more right than another: the finding names each, no row is credited."""
    catalog = loaded_catalog(tmp_path / "project", catalog_text)
    report = check_stream(_one_line({key: 0.3}), catalog, key_rewrites=AT)
    assert [(f.kind, f.key) for f in report.findings] == [("ambiguous_rewrite", key)]
    finding = report.findings[0]
    assert finding.example == "; ".join(readings)
    assert "credited to none" in finding.message()
    assert all(s.logged == 0 for s in report.rows)


@pytest.mark.parametrize(
    ("catalog_text", "key", "row"),
    [
        pytest.param(TWO_ROWS, "entropy_at_end", "rl.eval.entropy_at_end", id="only-as-read"),
        pytest.param(OPEN_SOURCE, "math/pass_at_1", "rl.eval.pass_at_1", id="only-rewritten"),
        pytest.param(CATALOG, "aime_at_2024/pass_at_1", "rl.eval.pass_at_1", id="enum-decides"),
    ],
)
def test_a_key_with_one_routing_reading_is_no_ambiguous_rewrite(
    tmp_path: Path, catalog_text: str, key: str, row: str
) -> None:
    """One reading routes (the others match nothing, or capture a value the enum refuses)."""
    catalog = loaded_catalog(tmp_path / "project", catalog_text)
    report = check_stream(_one_line({key: 0.3}), catalog, key_rewrites=AT)
    assert report.findings == []
    assert {s.row.name: s.logged for s in report.rows}[row] == 1
