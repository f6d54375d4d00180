"""live-check of a key two rows share under exclusive conditions (``critic/clipfrac``: a
share with value clipping on, a squared error without).

With the run's configuration (its header line, or ``--run-config``) the value is judged
by the row whose condition holds, and the other row does not apply; without one, a value
either row takes is no finding, and a value neither takes is judged by both.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.cli import main
from codegen.live_check import check_stream
from tests.catalog_projects import loaded_catalog, write_catalog

CRITIC = """\
owner: myrl.critic
module: critic
description: The critic's update.
teed:
  - logger_key: critic/clipfrac
    name: rl.critic.value_clip.fraction
    kind: gauge
    unit: "1"
    description: Share of value predictions the value clip range clipped.
    range: {min: "0", max: "1"}
    requirement_level: conditionally_required
    condition: config.critic.clip_value
  - logger_key: critic/clipfrac
    name: rl.critic.value_error.squared
    kind: gauge
    unit: "1"
    description: Mean squared error of the value predictions, without value clipping.
    range: {min: "0"}
    requirement_level: conditionally_required
    condition: not config.critic.clip_value
"""
CLIP = "rl.critic.value_clip.fraction"
ERROR = "rl.critic.value_error.squared"


@pytest.fixture(scope="module")
def critic(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """:data:`CRITIC`: two rows of one key, chosen by ``config.critic.clip_value``."""
    return loaded_catalog(tmp_path_factory.mktemp("critic"), CRITIC)


def _lines(config: object, *values: float) -> bytes:
    lines = [] if config is None else [json.dumps({"config": config})]
    lines += [
        json.dumps({"step": step, "prefix": "train", "metrics": {"critic/clipfrac": value}})
        for step, value in enumerate(values, 1)
    ]
    return ("\n".join(lines) + "\n").encode()


def _report(catalog: Catalog, raw: bytes) -> dict[str, object]:
    report = check_stream(io.BytesIO(raw), catalog, source="run.jsonl")
    found: dict[str, object] = json.loads(report.to_json())
    return found


def _rows(report: dict[str, object]) -> dict[str, tuple[object, object]]:
    rows = report["rows"]
    assert isinstance(rows, list)
    return {row["series"]: (row["presence"], row["logged"]) for row in rows}


def _kinds(report: dict[str, object]) -> dict[str, int]:
    summary = report["summary"]
    assert isinstance(summary, dict)
    kinds: dict[str, int] = summary["kinds"]
    return kinds


@pytest.mark.parametrize(
    ("clip", "judged", "idle"),
    [(True, CLIP, ERROR), (False, ERROR, CLIP)],
)
def test_the_configuration_chooses_the_row_that_judges_the_value(
    critic: Catalog, clip: bool, judged: str, idle: str
) -> None:
    report = _report(critic, _lines({"critic": {"clip_value": clip}}, 0.5, 0.25))
    rows = _rows(report)
    assert rows[judged] == ("logged", 2)
    assert rows[idle] == ("not_applicable", 0)
    assert _kinds(report) == {}


def test_a_value_only_the_other_row_takes_is_a_finding_of_the_chosen_row(
    critic: Catalog,
) -> None:
    """A squared error of 3.5 under value clipping is out of the share's range."""
    report = _report(critic, _lines({"critic": {"clip_value": True}}, 3.5))
    assert _kinds(report) == {"out_of_range": 1}
    findings = report["findings"]
    assert isinstance(findings, list)
    assert [f["series"] for f in findings] == [CLIP]


@pytest.mark.parametrize("config", [None, {}, {"critic": {}}])
def test_without_a_deciding_configuration_a_value_either_row_takes_is_no_finding(
    critic: Catalog, config: object
) -> None:
    report = _report(critic, _lines(config, 0.5, 3.5))
    assert _kinds(report) == {}
    rows = _rows(report)
    assert rows[CLIP][1] == 1  # 0.5: both take it; 3.5: only the squared error
    assert rows[ERROR][1] == 2


def test_without_a_deciding_configuration_a_value_neither_row_takes_is_judged_by_both(
    critic: Catalog,
) -> None:
    report = _report(critic, _lines(None, -1.0))
    assert _kinds(report) == {"out_of_range": 1}  # one value, one finding
    rows = report["rows"]
    assert isinstance(rows, list)
    assert {row["series"]: row["out_of_range"] for row in rows} == {CLIP: 1, ERROR: 1}


def test_run_config_decides_for_a_log_without_a_header(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_catalog(tmp_path, CRITIC)
    run = tmp_path / "run.jsonl"
    run.write_bytes(_lines(None, 3.5))
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"critic": {"clip_value": False}}), encoding="utf-8")
    args = ["live-check", str(run), "--root", str(root), "--format", "json"]
    assert main([*args, "--run-config", str(config)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert _rows(report) == {CLIP: ("not_applicable", 0), ERROR: ("logged", 1)}
    assert _kinds(report) == {}
