"""live-check's JSON report keeps every field and value it had (users pipe it into CI).

The goldens (:mod:`tests.live_check_golden`) were written by the code before
live-check became a package; a report may gain fields, never lose or change one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.live_check_golden import CASES, GOLDEN, REPO, contains, render


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_json_report_keeps_every_golden_field(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    golden = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    assert contains(render(name, tmp_path), golden) == []


def test_contains_accepts_added_fields_and_refuses_changed_ones() -> None:
    golden = {"a": 1, "b": [{"c": 2}]}
    assert contains({"a": 1, "b": [{"c": 2, "d": 3}], "e": 4}, golden) == []
    assert contains({"a": 1, "b": [{"c": 3}]}, golden) == ["$.b[0].c: expected 2, got 3"]
    assert contains({"b": [{"c": 2}]}, golden) == ["$.a: missing"]
