"""``export weaver``: a registry Weaver's schemas and rules accept, fields equal to resolve."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from codegen.catalog.model import Catalog
from codegen.generate.resolve import resolve_catalog
from codegen.weaver.export import (
    ANNOTATION,
    CATALOG_JSON,
    FORMATS,
    INSTRUMENTS,
    WeaverFormat,
    export_registry,
    member_id,
)
from codegen.weaver.registry import load_registry
from codegen.weaver.rules import check_registry

REPO = Path(__file__).resolve().parents[2]


def write(files: dict[str, str], folder: Path) -> Path:
    """Write an export's files into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(scope="module", params=FORMATS)
def exported(
    request: pytest.FixtureRequest, repo_catalog: Catalog, tmp_path_factory: pytest.TempPathFactory
) -> tuple[WeaverFormat, Path]:
    """The repository's catalog exported in each format."""
    fmt: WeaverFormat = request.param
    files = export_registry(
        repo_catalog,
        version="1.2.0",
        base_url="https://example.com/schemas/rl",
        description="RL.",
        fmt=fmt,
    )
    return fmt, write(files, tmp_path_factory.mktemp(f"export-{fmt}"))


def test_manifest_schema_url_ends_with_the_catalog_version(exported: tuple[str, Path]) -> None:
    manifest = yaml.safe_load((exported[1] / "manifest.yaml").read_text(encoding="utf-8"))
    assert manifest["schema_url"] == "https://example.com/schemas/rl/1.2.0"


def test_every_scalar_series_is_exported_exactly_once_with_its_resolved_fields(
    exported: tuple[str, Path], repo_catalog: Catalog
) -> None:
    resolved = {row["name"]: row for row in resolve_catalog(repo_catalog)["rows"]}
    scalar = {row.name for _f, row in repo_catalog.rows() if row.is_scalar}
    registry = load_registry(exported[1])
    names = [metric.name for metric in registry.metrics]
    assert sorted(names) == sorted(scalar)  # each once, none missing, none extra
    for metric in registry.metrics:
        row = resolved[metric.name]
        assert metric.instrument == INSTRUMENTS[row["kind"]]
        assert (metric.unit, metric.stability, metric.brief) == (
            row["unit"],
            row["stability"],
            row["description"],
        )
        refs = [(ref.key, ref.requirement_level) for ref in metric.attributes]
        assert refs == [(a["name"], a["requirement_level"]) for a in row["attributes"]]
        ours = metric.annotations[ANNOTATION]
        assert isinstance(ours, dict)
        for key in ("logger_key", "emitted_by", "first_step", "every", "goal", "owner", "module"):
            assert ours.get(key) == (row[key] or None), (metric.name, key)
        dep = row["deprecated"]
        if dep is None:
            assert metric.deprecated is None
        else:
            assert metric.deprecated is not None
            assert metric.deprecated.get("renamed_to") == dep["replaced_by"]
            assert ours["deprecated_since"] == dep["since"]


def test_exported_files_pass_weavers_schemas_group_by_group(
    exported: tuple[str, Path], schema_problems: Callable[[Path, str | None], list[str]]
) -> None:
    assert schema_problems(exported[1], "1.2.0") == []


def test_exported_registry_passes_weavers_rules(exported: tuple[str, Path]) -> None:
    registry = load_registry(exported[1])
    assert registry.diagnostics == []
    assert check_registry(registry) == []


def test_a_metric_group_without_unit_passes_the_v1_schema_but_not_its_branch_nor_the_rules(
    tmp_path: Path,
    weaver_schemas: dict[str, dict[str, Any]],
    schema_problems: Callable[[Path, str | None], list[str]],
) -> None:
    group = {
        "id": "metric.rl.loss",
        "type": "metric",
        "metric_name": "rl.loss",
        "instrument": "gauge",
        "stability": "development",
        "brief": "Loss.",
    }
    jsonschema.validate({"groups": [group]}, weaver_schemas["v1"])  # the loophole: no error
    (tmp_path / "m.yaml").write_text(yaml.safe_dump({"groups": [group]}), encoding="utf-8")
    assert any("'unit' is a required property" in p for p in schema_problems(tmp_path, None))
    codes = [d.code for d in check_registry(load_registry(tmp_path))]
    assert codes == ["WEAVER_FIELD"]


def test_non_scalar_rows_go_to_metric_catalog_json(repo_catalog: Catalog) -> None:
    files = export_registry(
        repo_catalog, version="1.0.0", base_url="https://e.com/s", description="d"
    )
    document = json.loads(files[CATALOG_JSON])
    kept = {row["name"] for f in document["files"] for row in f["rows_without_instrument"]}
    assert kept == {row.name for _f, row in repo_catalog.rows() if not row.is_scalar}
    loops = {loop["name"] for f in document["files"] for loop in f["loops"]}
    assert loops == {loop.name for loop in repo_catalog.loops()}


@pytest.mark.parametrize(
    ("value", "taken", "expected"),
    [
        ("init/total", set(), "init_total"),
        ("idle/buffer_starvation", set(), "idle_buffer_starvation"),
        ("0", set(), "value_0"),
        ("Policy", set(), "policy"),
        ("a-b", {"a_b"}, "a_b_2"),
        ("///", set(), "value"),
    ],
)
def test_member_ids_are_slugs_weavers_name_rule_accepts(
    value: str, taken: set[str], expected: str
) -> None:
    assert member_id(value, set(taken)) == expected


def _cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codegen", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def test_export_command_writes_the_registry_and_checks_it(tmp_path: Path) -> None:
    url = "https://example.com/schemas/rl/2.0.0"
    proc = _cli("export", "weaver", "--out", str(tmp_path / "reg"), "--schema-url", url)
    assert proc.returncode == 0, proc.stderr
    written = sorted(p.name for p in (tmp_path / "reg").iterdir())
    assert {"manifest.yaml", CATALOG_JSON, "grpo.yaml"} <= set(written)
    manifest = yaml.safe_load((tmp_path / "reg" / "manifest.yaml").read_text(encoding="utf-8"))
    assert manifest["schema_url"] == url


@pytest.mark.parametrize(
    "url",
    ["ftp://example.com/s/1.0.0", "https://example.com/schemas/latest", "https://1.0.0", "x"],
)
def test_export_refuses_a_schema_url_without_a_version_with_exit_2(
    tmp_path: Path, url: str
) -> None:
    proc = _cli("export", "weaver", "--out", str(tmp_path / "reg"), "--schema-url", url)
    assert proc.returncode == 2
    assert "whose last segment is a version" in proc.stderr
    assert not (tmp_path / "reg").exists()


def test_a_second_export_removes_its_own_stale_file_and_keeps_every_other(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / "catalog").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[tool.metric-catalog]\ncatalog = ["catalog/*.yaml"]\n', encoding="utf-8"
    )
    for module in ("alpha", "beta"):
        (root / "catalog" / f"{module}.yaml").write_text(
            f"owner: pkg.{module}\nmodule: {module}\ndescription: {module.title()}.\n"
            f"recorded:\n  - name: rl.{module}.loss\n    kind: gauge\n    unit: '1'\n"
            "    description: Loss.\n",
            encoding="utf-8",
        )
    out = tmp_path / "reg"
    assert _cli("export", "weaver", "--out", str(out), "--root", str(root)).returncode == 0
    (root / "catalog" / "beta.yaml").unlink()
    (out / "notes.yaml").write_text("groups: []\n", encoding="utf-8")  # someone else's
    proc = _cli("export", "weaver", "--out", str(out), "--root", str(root))
    assert proc.returncode == 0, proc.stderr
    assert "removed" in proc.stdout
    assert sorted(p.name for p in out.iterdir()) == [
        "alpha.yaml",
        "manifest.yaml",
        CATALOG_JSON,
        "notes.yaml",
    ]
