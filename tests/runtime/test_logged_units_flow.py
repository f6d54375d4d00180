"""A row declared in the unit the code logs (``unit: ms``), from YAML to the exported series.

The catalog states what the code logs; the generated row carries the exported
base unit and the logged one, every name and page shows the exported unit, the
tee records seconds and bytes, and live-check expects the exported unit on the wire.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.generate.dashboards import render_dashboard
from codegen.generate.python import render_python_module
from codegen.generate.resolve import resolve_catalog
from codegen.live_check import check_records
from codegen.runs.telemetry import TelemetryPoint, records_from_points
from metric_catalog.tee import tee_metrics
from tests.otel_fixtures import clean_otel, collect, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

CATALOG = """\
owner: verl.trainer.ppo
module: logged_units
description: Rows declared in the units verl logs.
prefix: ""
teed:
  - logger_key: timing_s/gen_ms
    name: rl.generation.duration
    kind: gauge
    unit: ms
    description: Wall time of generation.
  - logger_key: perf/max_memory_allocated_gb
    name: rl.memory.max_allocated
    kind: gauge
    unit: GiBy
    description: Peak accelerator memory allocated.
  - logger_key: perf/total_num_tokens
    name: rl.tokens.batch_size
    kind: gauge
    unit: "{token}"
    description: Prompt and response tokens summed over the rollout batch of one step.
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "logged_units.yaml").write_text(CATALOG, encoding="utf-8")
    return tmp_path


@pytest.fixture
def logged_units_catalog(project: Path) -> Catalog:
    """The rows of :data:`CATALOG`, declared in the units verl logs, linted clean."""
    loaded = load_and_check(root=project)
    assert loaded.diagnostics == ()
    assert loaded.catalog is not None
    return loaded.catalog


@pytest.fixture
def generated(
    project: Path, logged_units_catalog: Catalog, clean_otel: None
) -> Iterator[ModuleType]:
    """The generated module of :data:`CATALOG`, imported (its rows declared)."""
    (catalog_file,) = logged_units_catalog.files
    path = project / "logged_units.py"
    path.write_text(render_python_module(catalog_file), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("logged_units_generated", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


def test_the_model_gives_the_exported_unit_and_the_logged_one(
    logged_units_catalog: Catalog,
) -> None:
    rows = {row.name: row for _, row in logged_units_catalog.rows()}
    duration, memory, tokens = (
        rows["rl.generation.duration"],
        rows["rl.memory.max_allocated"],
        rows["rl.tokens.batch_size"],
    )
    assert (duration.unit, duration.logged_unit) == ("s", "ms")
    assert (memory.unit, memory.logged_unit) == ("By", "GiBy")
    assert (tokens.unit, tokens.logged_unit) == ("{token}", "")
    assert duration.prometheus_name == "rl_generation_duration_seconds"
    assert memory.prometheus_name == "rl_memory_max_allocated_bytes"


def test_resolve_keeps_unit_exported_and_adds_the_logged_unit(
    logged_units_catalog: Catalog,
) -> None:
    rows = {row["name"]: row for row in resolve_catalog(logged_units_catalog)["rows"]}  # type: ignore[attr-defined]
    assert (
        rows["rl.generation.duration"]["unit"],
        rows["rl.generation.duration"]["logged_unit"],
    ) == (
        "s",
        "ms",
    )
    assert rows["rl.tokens.batch_size"]["logged_unit"] == "{token}"


def test_the_dashboard_plots_the_exported_unit_and_says_the_logged_one(
    logged_units_catalog: Catalog,
) -> None:
    (catalog_file,) = logged_units_catalog.files
    dashboard: dict[str, Any] = render_dashboard(catalog_file)
    panels = {p["title"]: p for p in dashboard["panels"]}
    panel = panels["rl.generation.duration"]
    assert panel["fieldConfig"]["defaults"]["unit"] == "s"
    assert "Exported in s, logged in ms." in panel["description"]
    assert "logged in" not in panels["rl.tokens.batch_size"]["description"]


def test_generated_rows_carry_logged_unit_only_when_it_differs(generated: ModuleType) -> None:
    assert generated.GENERATION_DURATION.unit == "s"
    assert generated.GENERATION_DURATION.logged_unit == "ms"
    assert generated.MEMORY_MAX_ALLOCATED.logged_unit == "GiBy"
    assert generated.TOKENS_BATCH_SIZE.logged_unit == ""
    source = Path(generated.__file__ or "").read_text(encoding="utf-8")
    assert source.count("logged_unit=") == 2


def test_milliseconds_logged_are_exported_as_seconds(generated: ModuleType) -> None:
    with installed_reader() as reader:
        tee_metrics(
            {
                "timing_s/gen_ms": 1234.5,
                "perf/max_memory_allocated_gb": 1.5,
                "perf/total_num_tokens": 4096,
            },
            prefix="",
        )
        series = collect(reader)
    assert series["rl.generation.duration"].unit == "s"
    assert series["rl.generation.duration"].value == 1.2345
    assert series["rl.memory.max_allocated"].unit == "By"
    assert series["rl.memory.max_allocated"].value == 1.5 * 2**30
    assert series["rl.tokens.batch_size"].value == 4096.0


@pytest.mark.parametrize(
    ("wire_unit", "mismatch"), [("s", False), ("ms", True)], ids=["exported", "logged"]
)
def test_live_telemetry_is_judged_against_the_exported_unit(
    logged_units_catalog: Catalog, wire_unit: str, mismatch: bool
) -> None:
    point = TelemetryPoint("otlp", "rl.generation.duration", "gauge", wire_unit, {}, 1.5)
    report = check_records(
        records_from_points([point], 1),
        logged_units_catalog,
        source="live",
        promoted=(),
        multi=True,
    )
    kinds = {finding.kind for finding in report.findings}
    assert ("unit_mismatch" in kinds) is mismatch
