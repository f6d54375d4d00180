"""Grafana dashboards: one per owner, a panel per series, queries on real Prometheus names."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codegen.catalog.model import Catalog, CatalogFile
from codegen.cli import main
from codegen.generate.dashboards import (
    GENERATED_MARKER,
    QUANTILES,
    dashboard_uid,
    grafana_unit,
    render_dashboards,
)
from codegen.generate.resolve import histogram_series
from codegen.generate.writer import is_generated

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "evolution"
_METRIC = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_PROMQL_WORDS = {"rate", "histogram_quantile", "sum", "by", "le", "__rate_interval"}


@pytest.fixture(scope="module")
def dashboards(evolution_catalog: Catalog) -> dict[str, Any]:
    """Rendered dashboards, parsed back from their JSON text."""
    return {path: json.loads(text) for path, text in render_dashboards(evolution_catalog).items()}


def real_series(catalog: Catalog) -> set[str]:
    """Every series name a Prometheus scrape of the catalog shows."""
    names: set[str] = set()
    for _, row in catalog.rows():
        prom = row.prometheus_name
        names |= set(histogram_series(prom)) if row.kind == "histogram" else {prom}
    return names


def panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    """The dashboard's panels, typed for the tests."""
    found = dashboard["panels"]
    assert isinstance(found, list)
    return found


def test_one_dashboard_per_owner_file_with_a_panel_per_series(
    evolution_catalog: Catalog, dashboards: dict[str, Any]
) -> None:
    assert sorted(dashboards) == ["docs/dashboards/grpo.json", "docs/dashboards/sft.json"]
    for catalog_file in evolution_catalog.files:
        dashboard = dashboards[f"docs/dashboards/{catalog_file.module}.json"]
        titles = [p["title"].removesuffix(" (deprecated)") for p in panels(dashboard)]
        assert titles == sorted(r.name for r in catalog_file.rows)


def test_every_query_names_a_real_series_with_the_function_for_its_kind(
    evolution_catalog: Catalog, dashboards: dict[str, Any]
) -> None:
    series = real_series(evolution_catalog)
    rows = {row.name: row for _, row in evolution_catalog.rows()}
    for dashboard in dashboards.values():
        for panel in panels(dashboard):
            row = rows[panel["title"].removesuffix(" (deprecated)")]
            exprs = [t["expr"] for t in panel["targets"]]
            for expr in exprs:
                metrics = set(_METRIC.findall(expr)) - _PROMQL_WORDS
                metrics = {m for m in metrics if not m.replace(".", "").isdigit()}
                assert metrics, expr
                assert metrics <= series, expr
            name = row.prometheus_name
            if row.kind == "counter":
                assert exprs == [f"rate({name}[$__rate_interval])"]
                assert name.endswith("_total")
            elif row.kind == "histogram":
                assert exprs == [
                    f"histogram_quantile({q:g}, sum by (le) "
                    f"(rate({name}_bucket[$__rate_interval])))"
                    for q in QUANTILES
                ]
            else:
                assert exprs == [name]


@pytest.mark.parametrize(
    ("kind", "unit", "expected"),
    [
        ("gauge", "s", "s"),
        ("histogram", "s", "s"),
        ("gauge", "ms", "ms"),
        ("gauge", "By", "bytes"),
        ("up_down_counter", "By", "bytes"),
        ("gauge", "By/s", "Bps"),
        # A dimensionless number (grad_norm 0.77, a learning rate 1e-6) is a plain number.
        ("gauge", "1", "none"),
        ("histogram", "1", "none"),
        ("gauge", "", "none"),
        ("gauge", "%", "percent"),
        ("gauge", "Cel", "celsius"),
        ("gauge", "W", "watt"),
        # Units Grafana has no id for keep their own text as a custom suffix.
        ("gauge", "{token}", "suffix:token"),
        ("gauge", "{token}/s", "suffix:token/s"),
        ("histogram", "{request}", "suffix:request"),
        # Counters plot rate(): the unit per second.
        ("counter", "{token}", "suffix:token/s"),
        ("counter", "1", "suffix:/s"),
        ("counter", "", "suffix:/s"),
        ("counter", "s", "suffix:s/s"),
        ("counter", "ms", "suffix:ms/s"),
        ("counter", "By", "Bps"),
        ("counter", "bit", "bps"),
    ],
)
def test_units_map_to_grafana_units(kind: str, unit: str, expected: str) -> None:
    """Each UCUM unit shows as the Grafana unit meaning exactly that, never as a percentage."""
    assert grafana_unit(kind, unit) == expected


def test_panel_units_follow_the_rows(dashboards: dict[str, Any]) -> None:
    units = {
        p["title"]: p["fieldConfig"]["defaults"]["unit"]
        for d in dashboards.values()
        for p in panels(d)
    }
    assert units["rl.step.duration"] == "s"
    assert units["rl.sft.memory.usage"] == "bytes"
    assert units["rl.reward.mean"] == "none"
    assert units["rl.train.valid_tokens"] == "suffix:token/s"
    assert "percentunit" not in units.values()


def test_dashboards_carry_the_generated_marker_datasource_and_stable_uid(
    dashboards: dict[str, Any],
) -> None:
    doc = dashboards["docs/dashboards/grpo.json"]
    marker = f"{GENERATED_MARKER}catalog/grpo.yaml. DO NOT EDIT."
    assert doc["description"] == marker
    assert doc["__generated__"] == marker
    assert doc["uid"] == "mc-metric_catalog-generated-grpo"
    (variable,) = doc["templating"]["list"]
    assert (variable["name"], variable["type"], variable["query"]) == (
        "datasource",
        "datasource",
        "prometheus",
    )
    for panel in panels(doc):
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert [t["refId"] for t in panel["targets"]] == ["A", "B", "C"][: len(panel["targets"])]
    ids = [p["id"] for p in panels(doc)]
    assert ids == list(range(1, len(ids) + 1))


def test_deprecated_series_panel_points_to_the_replacement(
    dashboards: dict[str, Any],
) -> None:
    panel = next(
        p for p in panels(dashboards["docs/dashboards/grpo.json"]) if "kl.divergence" in p["title"]
    )
    assert panel["title"] == "rl.kl.divergence (deprecated)"
    assert panel["description"].endswith("Deprecated: use rl.kl.reference.")


def test_rendering_is_deterministic_and_recognised_by_the_generator(
    evolution_catalog: Catalog,
) -> None:
    first = render_dashboards(evolution_catalog)
    reordered = Catalog(tuple(reversed(evolution_catalog.files)))
    assert render_dashboards(reordered) == first
    for text in first.values():
        assert is_generated(text)
        assert text.endswith("}\n")
        assert "time()" not in text
        assert text == _expected_layout(json.loads(text))


def _expected_layout(doc: dict[str, Any]) -> str:
    """Two-space indented JSON, keys sorted, except one line per panel in ``panels``."""
    if not doc["panels"]:
        return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    skeleton = {**doc, "panels": ["PANELS"]}
    text = json.dumps(skeleton, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    lines = ",\n".join(
        "    " + json.dumps(panel, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))
        for panel in doc["panels"]
    )
    return text.replace('    "PANELS"', lines, 1)


def test_each_panel_is_one_line(evolution_catalog: Catalog) -> None:
    """A series' panel is one line of its dashboard, so a catalog edit is a one-line diff."""
    for text in render_dashboards(evolution_catalog).values():
        doc = json.loads(text)
        panel_lines = [line for line in text.splitlines() if line.startswith('    {"datasource"')]
        assert len(panel_lines) == len(doc["panels"])
        for line, panel in zip(panel_lines, doc["panels"], strict=True):
            assert json.loads(line.removesuffix(",")) == panel


def test_owner_without_series_gets_no_dashboard(evolution_catalog: Catalog) -> None:
    """Issue 21: an attributes-only file (no rows) gets no empty dashboard; others still do."""
    empty = CatalogFile(
        path="catalog/empty.yaml",
        owner="examples.empty",
        module="empty",
        description="",
        teed=(),
        recorded=(),
    )
    assert render_dashboards(Catalog((empty,))) == {}
    with_rows = render_dashboards(Catalog((evolution_catalog.files[0], empty)))
    assert list(with_rows) == [f"docs/dashboards/{evolution_catalog.files[0].module}.json"]


@pytest.mark.parametrize(
    ("module", "package", "uid"),
    [
        ("grpo", "", "mc-grpo"),
        ("grpo", "metric_catalog.generated", "mc-metric_catalog-generated-grpo"),
        ("ppo", "myrl.telemetry.generated", "mc-myrl-telemetry-generated-ppo"),
        ("a" * 37, "", "mc-" + "a" * 37),
        ("a" * 38, "", None),
        ("grpo", "a" * 40, None),
    ],
)
def test_uids_are_derived_from_the_import_path_and_fit_grafana(
    module: str, package: str, uid: str | None
) -> None:
    result = dashboard_uid(module, package)
    assert len(result) <= 40
    assert result == dashboard_uid(module, package)  # stable across runs
    if uid is not None:
        assert result == uid
    else:
        assert re.fullmatch(r"mc-[0-9a-f]{16}", result)


def test_two_files_with_one_module_are_refused(evolution_catalog: Catalog) -> None:
    grpo = evolution_catalog.files[0]
    twin = CatalogFile("catalog/other.yaml", "pkg.other", grpo.module, "Other.", grpo.teed, ())
    with pytest.raises(ValueError, match=r"catalog/other.yaml: module 'grpo' is also used by"):
        render_dashboards(Catalog((grpo, twin)))


def test_command_writes_checks_and_leaves_current_files_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["dashboards", "--root", str(tmp_path), "--catalog", str(FIXTURES / "catalog")]
    assert main([*args, "--check"]) == 1
    assert main(args) == 0
    written = sorted(p.name for p in (tmp_path / "docs" / "dashboards").iterdir())
    assert written == ["grpo.json", "grpo.rules.yaml", "sft.json", "sft.rules.yaml"]
    capsys.readouterr()
    assert main([*args, "--check"]) == 0
    assert main(args) == 0
    assert "up to date (2 dashboard(s))" in capsys.readouterr().out


def test_command_refuses_to_overwrite_a_hand_written_dashboard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "docs" / "dashboards" / "grpo.json"
    target.parent.mkdir(parents=True)
    target.write_text('{"title": "mine"}\n')
    args = ["dashboards", "--root", str(tmp_path), "--catalog", str(FIXTURES / "catalog")]
    assert main(args) == 1
    assert "refusing to overwrite" in capsys.readouterr().err
    assert target.read_text() == '{"title": "mine"}\n'


def test_command_out_dir_writes_plain_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["dashboards", "--root", str(FIXTURES), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "grpo.json",
        "grpo.rules.yaml",
        "sft.json",
        "sft.rules.yaml",
    ]


@pytest.mark.integration
def test_every_query_parses_as_promql_for_the_fixture_and_repo_catalogs(
    dashboards: dict[str, Any], repo_catalog: Catalog, tmp_path: Path
) -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool not installed (apt-get install prometheus)")
    rendered = [*dashboards.values(), *map(json.loads, render_dashboards(repo_catalog).values())]
    rules: list[dict[str, str]] = []
    for dashboard in rendered:
        for panel in panels(dashboard):
            for target in panel["targets"]:
                # Grafana fills $__rate_interval; promtool needs a literal duration.
                expr = target["expr"].replace("$__rate_interval", "1m")
                rules.append({"record": f"dashboard:query_{len(rules)}", "expr": expr})
    path = tmp_path / "rules.yml"
    path.write_text(json.dumps({"groups": [{"name": "dashboards", "rules": rules}]}))
    proc = subprocess.run(
        [promtool, "check", "rules", str(path)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"SUCCESS: {len(rules)} rules found" in proc.stdout


_UNIT_TERMS = st.sampled_from(["1", "s", "ms", "By", "bit", "%", "Hz", "{token}", "{request}", ""])
_UNITS = st.one_of(_UNIT_TERMS, st.builds("{}/{}".format, _UNIT_TERMS, st.sampled_from(["s", "1"])))


@given(kind=st.sampled_from(["gauge", "counter", "histogram", "up_down_counter"]), unit=_UNITS)
def test_no_unit_is_shown_as_a_percentage_unless_it_is_percent(kind: str, unit: str) -> None:
    """Only a value in ``%`` reads as a percentage; counters always read per second."""
    shown = grafana_unit(kind, unit)
    assert shown != "percentunit"
    assert (shown == "percent") == (kind != "counter" and unit == "%")
    if kind == "counter":
        assert shown in ("Bps", "bps") or shown.endswith("/s")
    assert "{" not in shown


def test_two_projects_with_the_same_owner_module_get_distinct_dashboard_uids() -> None:
    """An adopter's ``ppo`` dashboard must not replace the bundled one in a shared Grafana."""
    bundled = dashboard_uid("ppo", "metric_catalog.generated")
    adopter = dashboard_uid("ppo", "myrl.telemetry.generated")
    assert bundled != adopter
    assert dashboard_uid("ppo", "x" * 60) != dashboard_uid("ppo", "y" * 60)
