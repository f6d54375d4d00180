"""Conditions naming the attribute a key family captures (``{rl.role}``), judged per value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codegen.catalog.conditions import condition_attributes, for_value
from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.live_check import check_file
from metric_catalog.loggers import JsonlLogger

CATALOG = """\
owner: verl.workers.fsdp_workers
module: offload
description: Offload timers of the FSDP workers.
prefix: ""
attributes:
  - name: rl.role
    type: string
    description: The worker role.
    values:
      - {value: actor, description: The policy being trained.}
      - {value: critic, description: The value model.}
      - {value: ref, description: The reference policy.}
  - name: rl.domain
    type: string
    description: An open attribute.
    max_cardinality: "8"
teed:
  - logger_key: timing/{rl.role}_offload
    name: rl.offload.duration
    kind: gauge
    unit: s
    description: Time spent offloading the role's parameters.
    requirement_level: conditionally_required
    condition: {condition}
    attributes:
      - ref: rl.role
  - logger_key: loss
    name: rl.policy.loss
    kind: gauge
    unit: "1"
    description: Training loss.
"""

CONDITION = '"config.{rl.role}.offload"'


def _write(root: Path, condition: str = CONDITION) -> None:
    (root / "catalog").mkdir(exist_ok=True)
    (root / "catalog" / "offload.yaml").write_text(
        CATALOG.replace("{condition}", condition), encoding="utf-8"
    )


def _catalog(root: Path, condition: str = CONDITION) -> Catalog:
    _write(root, condition)
    result = load_and_check(root=root, lint=False)
    assert result.catalog is not None, [d.format() for d in result.diagnostics]
    return result.catalog


def test_a_condition_names_its_attributes_once_each_and_is_spelled_per_value() -> None:
    text = "config.{rl.role}.offload and config.{rl.role}.enabled"
    assert condition_attributes(text) == ("rl.role",)
    assert for_value(text, "rl.role", "ref") == "config.ref.offload and config.ref.enabled"
    assert condition_attributes("when validation runs") == ()
    assert condition_attributes("when {rl.role} offloads") == ()  # prose, as before


@pytest.mark.parametrize(
    ("condition", "problem"),
    [
        pytest.param(CONDITION, None, id="identifier-path-ok"),
        pytest.param("'config.workers[\"{rl.role}\"].offload == true'", None, id="subscript-ok"),
        pytest.param('"config.{rl.domain}.offload"', "does not capture", id="not-captured"),
        pytest.param(
            '"config.{rl.role}.offload and config.{rl.other}.x"', "names 2", id="two-names"
        ),
        pytest.param('"config.{rl.role}.offload(1)"', "refused", id="refused-per-value"),
        pytest.param('"when {rl.role} offloads"', None, id="prose-stays-prose"),
        pytest.param('"config.x or {rl.role} runs"', "no expression", id="prose-per-value"),
    ],
)
def test_a_condition_naming_an_attribute_is_checked_at_the_condition(
    tmp_path: Path, condition: str, problem: str | None
) -> None:
    _write(tmp_path, condition)
    result = load_and_check(root=tmp_path, lint=False)
    found = [d for d in result.diagnostics if d.code == "CONDITION_ATTRIBUTE"]
    if problem is None:
        assert list(result.diagnostics) == []
    else:
        (diagnostic,) = found
        assert problem in diagnostic.message
        assert diagnostic.position is not None
        assert (diagnostic.position.line, diagnostic.position.column) == (24, 16)


def test_a_value_no_expression_holds_for_is_refused(tmp_path: Path) -> None:
    text = CATALOG.replace("{condition}", CONDITION).replace(
        "{value: ref, description: The reference policy.}",
        "{value: ref-model, description: The reference policy.}",
    )
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "offload.yaml").write_text(text, encoding="utf-8")
    result = load_and_check(root=tmp_path, lint=False)
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == "CONDITION_ATTRIBUTE"
    assert "'config.ref-model.offload' for rl.role='ref-model'" in diagnostic.message


CONFIG = {"actor": {"offload": True}, "critic": {"offload": False}, "ref": {"offload": True}}


def _judge(
    catalog: Catalog, path: Path, config: dict[str, Any] | None, roles: list[str]
) -> tuple[str, list[str]]:
    with JsonlLogger(path, config=config) as log:
        for step in (1, 2):
            metrics = {"loss": 0.5, **{f"timing/{role}_offload": 0.1 for role in roles}}
            log.log_metrics(metrics, step, "")
    report = check_file(str(path), catalog)
    states = {summary.row.name: summary.presence for summary in report.rows}
    missing = sorted(f"{f.prefix}|{f.key}" for f in report.findings if f.kind == "missing")
    return states["rl.offload.duration"], missing


@pytest.mark.parametrize(
    ("config", "roles", "state", "missing"),
    [
        pytest.param(CONFIG, ["actor"], "logged", ["|timing/ref_offload"], id="one-role-missing"),
        pytest.param(CONFIG, ["actor", "ref"], "logged", [], id="every-role-on-logged"),
        pytest.param(CONFIG, [], "missing", ["|timing/actor_offload", "|timing/ref_offload"],
                     id="none-logged"),
        pytest.param({"actor": {"offload": False}, "critic": {"offload": False},
                      "ref": {"offload": False}}, [], "not_applicable", [], id="all-off"),
        pytest.param({"actor": {"offload": False}}, [], "conditional", [], id="undecided"),
        pytest.param(None, [], "conditional", [], id="no-config"),
    ],
)  # fmt: skip
def test_a_family_is_missing_the_values_whose_condition_holds(
    tmp_path: Path, config: dict[str, Any] | None, roles: list[str], state: str, missing: list[str]
) -> None:
    got = _judge(_catalog(tmp_path), tmp_path / "run.jsonl", config, roles)
    assert got == (state, missing)
