"""Generated modules for attributes, key families and several prefixes (render_python)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

from codegen.catalog.model import Attribute, Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.generate.dashboards import panel_labels, panel_queries
from codegen.generate.python import python_name_diagnostics, render_python_modules

GAMMA = Path(__file__).parents[1] / "fixtures" / "attributes" / "gamma.yaml"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gamma_catalog() -> Catalog:
    """The attribute fixture, loaded clean."""
    result = load_and_check([GAMMA], root=ROOT)
    assert result.ok, [d.format() for d in result.diagnostics]
    return result.catalog


@pytest.fixture(scope="module")
def gamma_text(gamma_catalog: Catalog) -> str:
    """The generated module's text."""
    return render_python_modules(gamma_catalog)["src/metric_catalog/generated/gamma.py"]


def test_generated_rows_carry_attributes_prefixes_and_budget(gamma_text: str) -> None:
    """Executed against the real vocabulary, rows hold every declared field, typed."""
    module = types.ModuleType("gamma_under_test")
    exec(compile(gamma_text, "gamma.py", "exec"), module.__dict__)
    row = module.FIXTURE_EFFICIENCY_TIME
    assert row.other_prefixes == ("",)
    assert row.cardinality_limit == 100
    category, rank, window = row.attributes
    assert (category.name, category.requirement) == ("rl.fixture.category", "required")
    assert category.values[:2] == ("idle/refit_bubble", "init/total")
    assert (rank.type, rank.values, rank.requirement) == ("int", (0, 1), "opt_in")
    assert window.values == ("step",)
    (phase,) = module.FIXTURE_SETUP_DURATION.attributes
    assert (phase.values, phase.max_cardinality) == ((), 64)
    assert module.FIXTURE_VALIDATION_LOSS.prefix == "validation-{rl.fixture.phase}"
    (clipped,) = module.FIXTURE_GAMMA_BATCH_DURATION.attributes
    assert (clipped.type, clipped.requirement) == ("bool", "recommended")
    assert module.RL_FIXTURE_RANK == "rl.fixture.rank"
    assert module.RL_FIXTURE_RANK_VALUES == (0, 1)
    assert {"RL_FIXTURE_CATEGORY", "RlFixtureCategory", "RL_FIXTURE_PHASE"} <= set(module.__all__)
    assert not hasattr(module, "RlFixturePhase")  # an open attribute has no Literal


def test_a_misspelt_attribute_value_is_a_mypy_error(gamma_text: str, tmp_path: Path) -> None:
    """Owners annotate values with the generated Literal, so a typo fails mypy --strict."""
    (tmp_path / "gamma.py").write_text(gamma_text, encoding="utf-8")
    owner = (
        "from gamma import RL_FIXTURE_CATEGORY, RlFixtureCategory\n\n"
        'GOOD: RlFixtureCategory = "init/total"\n'
        'BAD: RlFixtureCategory = "init/totl"\n'
        "ATTRIBUTES: dict[str, str] = {RL_FIXTURE_CATEGORY: GOOD}\n"
    )
    (tmp_path / "owner.py").write_text(owner, encoding="utf-8")
    mypy = subprocess.run(
        [str(Path(sys.executable).parent / "mypy"), "--strict", "--no-incremental", "owner.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=180,
    )
    assert mypy.returncode == 1, mypy.stdout
    errors = [line for line in mypy.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1
    assert errors[0].startswith("owner.py:4:")
    assert "'init/totl'" in errors[0]


def test_plain_rows_render_without_attribute_imports(gamma_catalog: Catalog) -> None:
    """A module whose rows use no attributes imports neither MetricAttribute nor Literal."""
    plain = load_and_check([ROOT / "tests" / "fixtures" / "generate" / "alpha.yaml"], root=ROOT)
    text = next(iter(render_python_modules(plain.catalog).values()))
    assert "MetricAttribute" not in text
    assert "from typing import Final\n" in text


def test_attribute_constant_clashing_with_a_row_constant_is_reported(
    gamma_catalog: Catalog,
) -> None:
    """``rl.fixture.rank`` generates RL_FIXTURE_RANK, so a series ``rl.rl.fixture.rank`` clashes."""
    (gamma,) = gamma_catalog.files
    row = gamma.teed[0]
    clash = type(row)(**{**_fields(row), "name": "rl.rl.fixture.rank"})
    broken = type(gamma)(**{**_fields(gamma), "teed": (clash,)})
    found = python_name_diagnostics(Catalog((broken,)))
    assert [d.code for d in found] == ["GENERATED_NAME_CLASH"]
    assert "attribute 'rl.fixture.rank' would generate RL_FIXTURE_RANK" in found[0].message
    assert isinstance(gamma.attributes[0], Attribute)


def _fields(obj: object) -> dict[str, object]:
    return {name: getattr(obj, name) for name in obj.__dataclass_fields__}  # type: ignore[attr-defined]


def _owner_page_text(catalog: Catalog, module: str, tmp_path: Path) -> str:
    """The docs site's owner page for ``module`` (metric_catalog.sphinx), as plain text."""
    import html
    import re

    from codegen.generate.docs import render_catalog_data
    from metric_catalog.sphinx import _data, _html

    path = tmp_path / "catalog.json"
    path.write_text(render_catalog_data(catalog), encoding="utf-8")
    data = _data.load(path)
    file = next(p for p, entry in data.files.items() if entry["module"] == module)
    body = _html.owner_page_html(data, file, lambda target: target)
    return html.unescape(re.sub(r"<[^>]+>", " ", body.replace("<wbr>", "")))


def test_docs_pages_show_attributes_per_series_and_the_registry(
    gamma_catalog: Catalog, tmp_path: Path
) -> None:
    """A series lists its attributes with level and values; the file lists its registry."""
    page = " ".join(_owner_page_text(gamma_catalog, "gamma", tmp_path).split())
    assert "rl.fixture.phase (string; required; at most 64 values)" in page
    assert "rl.fixture.rank (int; opt in; values 0 , 1 )" in page
    registry = page.split("Attributes declared here", 1)[1]
    assert "rl.fixture.category" in registry
    assert "idle/refit_bubble Waiting for a weight refit." in registry


def test_docs_page_of_a_file_without_attributes_has_no_registry_section(tmp_path: Path) -> None:
    """Plain owners' pages are unchanged: no attribute registry, no attribute lists."""
    plain = load_and_check([ROOT / "tests" / "fixtures" / "generate" / "alpha.yaml"], root=ROOT)
    page = _owner_page_text(plain.catalog, "alpha", tmp_path)
    assert "Attributes declared here" not in page
    assert "required" not in page


def test_dashboard_panels_sum_by_required_attributes_with_a_legend(gamma_catalog: Catalog) -> None:
    """Gauges, counters and histograms group by the row's attribute labels, legend by value."""

    rows = {row.name: row for _f, row in gamma_catalog.rows()}
    family = rows["rl.fixture.efficiency.time"]
    assert panel_labels(family) == ("rl_fixture_category",)  # required beats recommended
    assert panel_queries(family) == [
        (
            "{{rl_fixture_category}}",
            "sum by (rl_fixture_category) (rl_fixture_efficiency_time_seconds)",
        )
    ]
    histogram = rows["rl.fixture.gamma.batch.duration"]
    assert panel_labels(histogram) == ("rl_fixture_clipped",)  # only recommended ones
    legend, expr = panel_queries(histogram)[0]
    assert legend == "{{rl_fixture_clipped}} p50"
    assert expr == (
        "histogram_quantile(0.5, sum by (le, rl_fixture_clipped) "
        "(rate(rl_fixture_gamma_batch_duration_seconds_bucket[$__rate_interval])))"
    )
    counter = type(family)(**{**_fields(family), "kind": "counter"})
    assert panel_queries(counter)[0][1].startswith("sum by (rl_fixture_category) (rate(")


def test_dashboard_queries_with_attributes_parse_as_promql(
    gamma_catalog: Catalog, tmp_path: Path
) -> None:
    """promtool accepts every grouped query (skipped where promtool is not installed)."""

    promtool = shutil.which("promtool")
    if promtool is None:
        if os.environ.get("CI") == "true":
            pytest.fail("promtool is required under CI=true (apt-get install prometheus)")
        pytest.skip("promtool not installed (apt-get install prometheus)")
    rules = [
        {"record": f"q:{n}", "expr": expr.replace("$__rate_interval", "1m")}
        for n, (_legend, expr) in enumerate(
            query
            for _f, row in gamma_catalog.rows()
            for query in panel_queries(type(row)(**{**_fields(row), "kind": "counter"}))
            + panel_queries(row)
        )
    ]
    path = tmp_path / "rules.yml"
    path.write_text(json.dumps({"groups": [{"name": "q", "rules": rules}]}), encoding="utf-8")
    proc = subprocess.run(
        [promtool, "check", "rules", str(path)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
