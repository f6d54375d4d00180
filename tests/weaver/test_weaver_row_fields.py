"""The row fields Weaver has no field for travel under ``annotations.metric_catalog``.

Schedules with a phase, ``non_finite``, a ref's enum subset and a condition naming a
captured attribute: each is written where :mod:`codegen.weaver.export` documents it,
and :mod:`codegen.weaver.importer` reads it back to the same resolved row.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.weaver.export import ANNOTATION, FORMATS, WeaverFormat, export_registry
from codegen.weaver.importer import import_registry
from codegen.weaver.registry import WeaverMetric, load_registry
from codegen.weaver.rules import check_registry

SCHEDULED = """\
owner: pkg.trainer
module: trainer
description: Trainer series.
teed:
  - logger_key: timing/{rl.role}_offload
    name: rl.offload.duration
    kind: gauge
    unit: s
    description: Time spent offloading the role's parameters.
    requirement_level: conditionally_required
    condition: "config.{rl.role}.offload"
    every: "10"
    phase: "-1"
    at_last_step: "true"
    non_finite: allowed
    attributes:
      - ref: rl.role
        values: [actor, critic]
  - logger_key: timing/{rl.role}_load
    name: rl.load.duration
    kind: gauge
    unit: s
    description: Time spent loading the role's parameters.
    attributes:
      - ref: rl.role
attributes:
  - name: rl.role
    type: string
    description: The model role.
    values:
      - {value: actor, description: The policy.}
      - {value: critic, description: The value model.}
      - {value: ref, description: The reference model.}
"""


def _catalog(folder: Path, files: dict[str, str]) -> Catalog:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    result = load_and_check(sorted(folder.glob("*.yaml")), root=folder, lint=False)
    assert result.ok, [d.format() for d in result.diagnostics]
    return result.catalog


def _metrics(folder: Path, catalog: Catalog, fmt: WeaverFormat) -> dict[str, WeaverMetric]:
    files = export_registry(
        catalog, version="1.0.0", base_url="https://e.com/s", description="d.", fmt=fmt
    )
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    registry = load_registry(folder)
    assert registry.diagnostics == []
    assert [d for d in check_registry(registry) if d.severity.value == "error"] == []
    return {metric.name: metric for metric in registry.metrics}


@pytest.mark.parametrize("fmt", FORMATS)
def test_schedule_non_finite_subset_and_captured_condition_are_exported_as_annotations(
    tmp_path: Path, fmt: WeaverFormat
) -> None:
    catalog = _catalog(tmp_path / "catalog", {"trainer.yaml": SCHEDULED})
    metrics = _metrics(tmp_path / "registry", catalog, fmt)
    ours = metrics["rl.offload.duration"].annotations[ANNOTATION]
    assert (ours["every"], ours["phase"], ours["at_last_step"]) == (10, -1, True)
    assert ours["non_finite"] == "allowed"
    assert ours["condition"] == "config.{rl.role}.offload"
    (ref,) = metrics["rl.offload.duration"].attributes
    assert ref.annotations[ANNOTATION]["values"] == ["actor", "critic"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_fields_at_their_defaults_and_a_ref_taking_the_whole_enum_add_no_annotation(
    tmp_path: Path, fmt: WeaverFormat
) -> None:
    catalog = _catalog(tmp_path / "catalog", {"trainer.yaml": SCHEDULED})
    metric = _metrics(tmp_path / "registry", catalog, fmt)["rl.load.duration"]
    ours = metric.annotations[ANNOTATION]
    assert not {"phase", "at_last_step", "non_finite"} & set(ours)
    (ref,) = metric.attributes
    assert ANNOTATION not in ref.annotations


@pytest.mark.parametrize("fmt", FORMATS)
def test_schedule_non_finite_subset_and_captured_condition_come_back_from_the_export(
    tmp_path: Path, fmt: WeaverFormat, resolved_view: Callable[[Any], dict[str, Any]]
) -> None:
    catalog = _catalog(tmp_path / "catalog", {"trainer.yaml": SCHEDULED})
    _metrics(tmp_path / "registry", catalog, fmt)
    imported = import_registry(load_registry(tmp_path / "registry"))
    back = _catalog(tmp_path / "back", imported.files)
    assert resolved_view(back) == resolved_view(catalog)
    (row,) = [r for r in yaml.safe_load(imported.files["trainer.yaml"])["teed"] if "phase" in r]
    assert (row["phase"], row["at_last_step"], row["non_finite"]) == ("-1", "true", "allowed")


RENAMED_OUTSIDE = """\
owner: pkg.trainer
module: trainer
description: Trainer series.
recorded:
  - name: rl.gpu.memory.bytes
    kind: gauge
    unit: By
    description: GPU memory in use.
    deprecated: {since: "0.3.0", replaced_by: rl.elsewhere.hw.memory}
"""


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_replacement_outside_the_catalog_is_exported_as_renamed_to_and_comes_back(
    tmp_path: Path, fmt: WeaverFormat, resolved_view: Callable[[Any], dict[str, Any]]
) -> None:
    catalog = _catalog(tmp_path / "catalog", {"trainer.yaml": RENAMED_OUTSIDE})
    metric = _metrics(tmp_path / "registry", catalog, fmt)["rl.gpu.memory.bytes"]
    assert metric.deprecated == {"reason": "renamed", "renamed_to": "rl.elsewhere.hw.memory"}
    assert metric.annotations[ANNOTATION]["replaced_by_external"] is True
    registry = load_registry(tmp_path / "registry")
    assert [d.code for d in check_registry(registry)] == ["WEAVER_RENAMED_EXTERNAL"]
    imported = import_registry(registry)
    assert imported.diagnostics == []
    back = _catalog(tmp_path / "back", imported.files)
    assert resolved_view(back) == resolved_view(catalog)


ANNOTATED = """\
owner: pkg.trainer
module: trainer
description: Trainer series.
recorded:
  - name: rl.tokens.total
    kind: counter
    unit: "{token}"
    description: Tokens trained on.
    value_type: int
    annotations:
      code_generation: {exclude: true}
      dashboard: {folder: throughput, pinned: true}
    attributes: [{ref: rl.split}]
attributes:
  - name: rl.split
    type: string
    description: The data split.
    max_cardinality: "8"
    examples: [train]
    annotations: {ui: {color: blue}}
"""


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_rows_and_an_attributes_own_annotations_are_exported_beside_the_catalogs(
    tmp_path: Path,
    fmt: WeaverFormat,
    resolved_view: Callable[[Any], dict[str, Any]],
    schema_problems: Callable[[Path, str | None], list[str]],
) -> None:
    catalog = _catalog(tmp_path / "catalog", {"trainer.yaml": ANNOTATED})
    metric = _metrics(tmp_path / "registry", catalog, fmt)["rl.tokens.total"]
    assert schema_problems(tmp_path / "registry", "1.0.0") == []
    assert list(metric.annotations) == ["code_generation", "dashboard", ANNOTATION]
    assert metric.annotations["code_generation"] == {"exclude": True, "metric_value_type": "int"}
    assert metric.annotations["dashboard"] == {"folder": "throughput", "pinned": True}
    registry = load_registry(tmp_path / "registry")
    assert registry.attributes["rl.split"].annotations == {
        "ui": {"color": "blue"},
        ANNOTATION: {"max_cardinality": 8},
    }
    imported = import_registry(registry)
    assert imported.diagnostics == []
    back = _catalog(tmp_path / "back", imported.files)
    assert resolved_view(back) == resolved_view(catalog)


def test_foreign_annotations_the_catalog_would_refuse_are_reported_and_the_rest_kept(
    tmp_path: Path,
) -> None:
    deep: dict[str, Any] = {"leaf": 1}
    for _ in range(12):
        deep = {"a": deep}
    groups = [
        {
            "id": f"metric.{name}",
            "type": "metric",
            "metric_name": name,
            "instrument": "gauge",
            "unit": "1",
            "stability": "development",
            "brief": "A ratio.",
            "annotations": annotations,
        }
        for name, annotations in (
            ("app.deep", {"deep": deep}),
            ("app.kept", {"code_generation": {"exclude": True}, "team": "infra"}),
        )
    ]
    folder = tmp_path / "registry"
    folder.mkdir()
    (folder / "manifest.yaml").write_text("schema_url: https://e.com/s/1.0.0\n", "utf-8")
    (folder / "app.yaml").write_text(yaml.safe_dump({"groups": groups}), "utf-8")
    imported = import_registry(load_registry(folder), prefix="rl.")
    (said,) = [d for d in imported.diagnostics if "annotations" in d.message]
    assert (said.code, said.severity.value) == ("WEAVER_SKIPPED", "warning")
    assert "'app.deep'" in said.message
    assert "nests deeper than 8 levels" in said.message
    rows = {r["name"]: r for r in yaml.safe_load(imported.files["app.yaml"])["recorded"]}
    assert "annotations" not in rows["rl.app.deep"]
    assert rows["rl.app.kept"]["annotations"] == {
        "code_generation": {"exclude": True},
        "team": "infra",
    }
    _catalog(tmp_path / "back", imported.files)


OPEN_ENUM = """\
owner: pkg.gen
module: gen
description: Generation series.
recorded:
  - name: rl.gen.errors
    kind: counter
    unit: "{error}"
    description: Errors, by type.
    attributes: [{ref: rl.error.type}]
attributes:
  - name: rl.error.type
    type: string
    description: What went wrong.
    values:
      - {value: timeout, description: A request timed out.}
      - {value: other, description: Named other by the server.}
    open: "true"
    max_cardinality: "16"
"""


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_open_enum_is_exported_as_its_members_and_semconvs_fallback_and_comes_back(
    tmp_path: Path,
    fmt: WeaverFormat,
    resolved_view: Callable[[Any], dict[str, Any]],
    schema_problems: Callable[[Path, str | None], list[str]],
) -> None:
    catalog = _catalog(tmp_path / "catalog", {"gen.yaml": OPEN_ENUM})
    _metrics(tmp_path / "registry", catalog, fmt)
    assert schema_problems(tmp_path / "registry", "1.0.0") == []
    registry = load_registry(tmp_path / "registry")
    attribute = registry.attributes["rl.error.type"]
    assert [(m.id, m.value) for m in attribute.members] == [
        ("timeout", "timeout"),
        ("other", "other"),
        ("other_2", "_OTHER"),  # the fallback member's id does not clash with a listed one
    ]
    assert attribute.annotations[ANNOTATION] == {"max_cardinality": 16, "open": True}
    imported = import_registry(registry)
    assert imported.diagnostics == []
    back = _catalog(tmp_path / "back", imported.files)
    assert resolved_view(back) == resolved_view(catalog)


def test_a_foreign_enum_with_a_fallback_member_is_an_open_enum_with_a_reported_budget(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "registry"
    folder.mkdir()
    (folder / "manifest.yaml").write_text("schema_url: https://e.com/s/1.0.0\n", "utf-8")
    members = [
        {"id": "timeout", "value": "timeout", "brief": "Timed out.", "stability": "stable"},
        {"id": "other", "value": "_OTHER", "brief": "Any other.", "stability": "stable"},
    ]
    groups = [
        {
            "id": "registry.app",
            "type": "attribute_group",
            "brief": "App attributes.",
            "attributes": [
                {
                    "id": "app.error.type",
                    "type": {"members": members},
                    "brief": "The error.",
                    "stability": "stable",
                }
            ],
        }
    ]
    (folder / "app.yaml").write_text(yaml.safe_dump({"groups": groups}), "utf-8")
    imported = import_registry(load_registry(folder), prefix="rl.")
    (attribute,) = yaml.safe_load(imported.files["app.yaml"])["attributes"]
    assert attribute["values"] == [{"value": "timeout", "description": "Timed out."}]
    assert (attribute["open"], attribute["max_cardinality"]) == ("true", "64")
    (said,) = imported.diagnostics
    assert "given max_cardinality 64" in said.message
    assert "app.error.type" in said.message
    _catalog(tmp_path / "back", imported.files)
