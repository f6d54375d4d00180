"""Live-check's budget of attempts on families no literal head, tail or segment indexes."""

from __future__ import annotations

import io
import json

import pytest

from codegen import live_check
from codegen.catalog.model import Catalog
from codegen.live_check import LiveCheckReport, check_stream
from metric_catalog import series_rules
from tests.catalog_projects import loaded_catalog

CATALOG = """\
owner: hostile.families
module: families
description: Families whose keys start and end with a placeholder.
prefix: train
attributes:
  - name: rl.part
    type: string
    description: The key's first part.
    max_cardinality: "64"
  - name: rl.stat
    type: string
    description: The key's second part.
    max_cardinality: "64"
teed:
  - logger_key: "{rl.part}_{rl.stat}"
    name: rl.parts
    kind: gauge
    unit: "1"
    description: A value per part and statistic.
    requirement_level: required
    attributes: [{ref: rl.part}, {ref: rl.stat}]
  - logger_key: loss
    name: rl.loss
    kind: gauge
    unit: "1"
    description: The training loss.
"""

KEYS = 12


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    return loaded_catalog(tmp_path_factory.mktemp("budget"), CATALOG, "families.yaml")


def check(catalog: Catalog) -> LiveCheckReport:
    docs = [{"step": 1, "prefix": "train", "metrics": {"loss": 0.5}}]
    docs += [
        {"step": 1, "prefix": "train", "metrics": {f"k{index}_mean": 1.0}} for index in range(KEYS)
    ]
    raw = "".join(json.dumps(doc) + "\n" for doc in docs).encode()
    return check_stream(io.BytesIO(raw), catalog, source="mem.jsonl")


def test_a_spent_budget_leaves_keys_unjudged_with_one_positioned_notice(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live_check, "MAX_UNINDEXED_ATTEMPTS", 3)
    made: list[series_rules.MatchBudget] = []

    class Counted(series_rules.MatchBudget):
        """The check's budget, kept to count the attempts it made."""

        def __init__(self, limit: int) -> None:
            super().__init__(limit)
            made.append(self)

    monkeypatch.setattr("codegen.live_check.checker.MatchBudget", Counted)
    report = check(catalog)
    notices = [n for n in report.notices if n.kind == "unjudged_keys"]
    assert len(notices) == 1
    assert "after 3 attempts" in notices[0].message
    assert "literal head, tail or '/'-segment" in notices[0].message
    # Lines 2-4 took one attempt each; line 5's key is the first left unjudged.
    assert notices[0].position is not None
    assert notices[0].position.line == 5
    assert "the first was 'train/k3_mean'" in notices[0].message
    # Never a wrong finding: no key is undeclared, the family is not missing.
    assert not [f for f in report.findings if f.kind in {"undeclared", "missing"}]
    assert [(budget.spent, budget.exhausted) for budget in made] == [(3, True)]
    logged = {summary.row.name: summary.logged for summary in report.rows}
    assert logged == {"rl.loss": 1, "rl.parts": 3}


def test_a_required_family_no_key_reached_is_not_called_missing(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no attempt allowed, the family logs nothing judged, yet it is not reported
    missing: an unjudged key may have been its."""
    monkeypatch.setattr(live_check, "MAX_UNINDEXED_ATTEMPTS", 0)
    report = check(catalog)
    assert [n.position.line for n in report.notices if n.kind == "unjudged_keys" if n.position]
    assert not [f for f in report.findings if f.kind in {"undeclared", "missing"}]
    logged = {summary.row.name: summary.logged for summary in report.rows}
    assert logged == {"rl.loss": 1, "rl.parts": 0}
    presence = {summary.row.name: summary.presence for summary in report.rows}
    assert presence == {"rl.loss": "logged", "rl.parts": "not_logged"}


def test_a_check_within_the_budget_routes_every_key_and_says_nothing(catalog: Catalog) -> None:
    report = check(catalog)
    assert not [n for n in report.notices if n.kind == "unjudged_keys"]
    assert not [f for f in report.findings if f.kind in {"undeclared", "missing"}]
    logged = {summary.row.name: summary.logged for summary in report.rows}
    assert logged == {"rl.loss": 1, "rl.parts": KEYS}
