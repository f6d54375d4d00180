"""``non_finite: allowed``: from YAML to the generated row, live-check, alerts, docs and diff."""

from __future__ import annotations

import json
import types
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.diff import diff_catalogs
from codegen.generate.alerts import render_alerts
from codegen.generate.docs import render_catalog_data
from codegen.generate.python import render_python_modules
from codegen.live_check import check_file
from metric_catalog.loggers import JsonlLogger

ROWS = """\
owner: nemo_rl.algorithms.grpo
module: grads
description: Gradient statistics.
prefix: train
teed:
  - logger_key: grad_norm
    name: rl.grad.norm
    kind: gauge
    unit: "1"
    description: Global gradient norm before clipping; inf when the update was skipped.
    range: {min: "0"}
    non_finite: {setting}
  - logger_key: loss
    name: rl.policy.loss
    kind: gauge
    unit: "1"
    description: Training loss.
"""


def _catalog(root: Path, setting: str = "allowed") -> Catalog:
    (root / "catalog").mkdir(exist_ok=True)
    (root / "catalog" / "grads.yaml").write_text(
        ROWS.replace("{setting}", setting), encoding="utf-8"
    )
    result = load_and_check(root=root, lint=False)
    assert result.catalog is not None, [d.format() for d in result.diagnostics]
    return result.catalog


def _row(catalog: Catalog, name: str = "rl.grad.norm") -> Any:
    return {row.name: row for _f, row in catalog.rows()}[name]


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ("allowed", []),
        ("reported", []),
        ("sometimes", ["INVALID_VALUE 12:17"]),
        ('"yes"', ["INVALID_VALUE 12:17"]),
    ],
)
def test_non_finite_is_checked_at_its_position(
    tmp_path: Path, setting: str, expected: list[str]
) -> None:
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "grads.yaml").write_text(
        ROWS.replace("{setting}", setting), encoding="utf-8"
    )
    result = load_and_check(root=tmp_path, lint=False)
    got = [f"{d.code} {d.position.line}:{d.position.column}" for d in result.diagnostics]
    assert got == expected


def test_non_finite_is_built_and_defaults_to_reported(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    assert _row(catalog).non_finite == "allowed"
    assert _row(catalog, "rl.policy.loss").non_finite == "reported"


def _check(catalog: Catalog, path: Path) -> tuple[list[tuple[str, str]], dict[str, int]]:
    with JsonlLogger(path) as log:
        log.log_metrics({"grad_norm": 1.5, "loss": 0.5}, 1, "train")
        log.log_metrics({"grad_norm": float("inf"), "loss": float("nan")}, 2, "train")
        log.log_metrics({"grad_norm": float("nan"), "loss": 0.4}, 3, "train")
    report = check_file(str(path), catalog)
    found = sorted((f.kind, f.series or "") for f in report.findings)
    counts = {summary.row.name: summary.non_finite for summary in report.rows}
    return found, counts


def test_live_check_counts_allowed_non_finite_values_without_a_finding(tmp_path: Path) -> None:
    found, counts = _check(_catalog(tmp_path), tmp_path / "run.jsonl")
    assert found == [("non_finite", "rl.policy.loss")]
    assert counts == {"rl.grad.norm": 2, "rl.policy.loss": 1}


def test_live_check_reports_non_finite_values_of_a_reported_row(tmp_path: Path) -> None:
    found, _counts = _check(_catalog(tmp_path, "reported"), tmp_path / "run.jsonl")
    assert found == [("non_finite", "rl.grad.norm"), ("non_finite", "rl.policy.loss")]


def _alerts(catalog: Catalog) -> dict[str, dict[str, Any]]:
    ((_path, text),) = render_alerts(catalog).items()
    doc = yaml.safe_load(text)
    return {
        rule.get("alert") or rule["record"]: rule
        for group in doc["groups"]
        for rule in group["rules"]
    }


def test_an_allowed_gauge_gets_no_non_finite_alert_and_its_range_leaves_infinities_out(
    tmp_path: Path,
) -> None:
    rules = _alerts(_catalog(tmp_path))
    assert "RlGradNormNonFinite" not in rules
    assert rules["RlGradNormOutOfRange"]["expr"] == "(rl_grad_norm < 0) < +Inf > -Inf"
    assert "RlPolicyLossNonFinite" in rules


def test_a_reported_gauge_keeps_its_non_finite_alert(tmp_path: Path) -> None:
    rules = _alerts(_catalog(tmp_path, "reported"))
    assert rules["RlGradNormNonFinite"]["expr"] == (
        "(rl_grad_norm != rl_grad_norm) or (abs(rl_grad_norm) == +Inf)"
    )
    assert rules["RlGradNormOutOfRange"]["expr"] == "rl_grad_norm < 0"


def test_the_generated_row_says_non_finite_allowed_and_only_then(tmp_path: Path) -> None:
    text = render_python_modules(_catalog(tmp_path))["src/metric_catalog/generated/grads.py"]
    assert text.count("non_finite=") == 1
    module = types.ModuleType("grads_under_test")
    exec(compile(text, "grads.py", "exec"), module.__dict__)
    assert module.GRAD_NORM.non_finite == "allowed"
    assert module.POLICY_LOSS.non_finite == "reported"


def test_resolve_and_the_docs_page_carry_the_setting(tmp_path: Path) -> None:
    from metric_catalog.sphinx import _data, _html

    data_path = tmp_path / "catalog.json"
    data_path.write_text(render_catalog_data(_catalog(tmp_path)), encoding="utf-8")
    rows = {row["name"]: row for row in json.loads(data_path.read_text())["rows"]}
    assert (rows["rl.grad.norm"]["non_finite"], rows["rl.policy.loss"]["non_finite"]) == (
        "allowed",
        "reported",
    )
    data = _data.load(data_path)
    (path,) = data.files
    page = _html.owner_page_html(data, path, lambda target: target)
    assert page.count("NaN and infinities are legitimate values") == 1


@pytest.mark.parametrize(
    ("before", "after", "codes"),
    [
        ("allowed", "reported", ["STABLE_RANGE_NARROWED"]),
        ("reported", "allowed", []),
        ("allowed", "allowed", []),
    ],
)
def test_a_stable_row_never_stops_allowing_non_finite_values(
    tmp_path: Path, before: str, after: str, codes: list[str]
) -> None:
    def stable(setting: str, where: str) -> Catalog:
        catalog = _catalog(tmp_path / where, setting)
        (file,) = catalog.files
        teed = tuple(replace(row, stability="stable") for row in file.teed)
        return Catalog((replace(file, teed=teed),))

    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    report = diff_catalogs(stable(before, "old"), stable(after, "new"))
    assert [d.code for d in report.diagnostics] == codes
    changed = [(c.field, c.old, c.new) for c in report.changed]
    assert changed == ([] if before == after else [("non_finite", before, after)])
