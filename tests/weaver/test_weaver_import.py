"""``import weaver``: a registry back into catalog files, and the semconv files into a catalog."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.weaver.export import ANNOTATION, FORMATS, WeaverFormat, export_registry
from codegen.weaver.importer import import_registry
from codegen.weaver.registry import WeaverMetric, load_registry
from codegen.weaver.rules import check_registry

REPO = Path(__file__).resolve().parents[2]


def write(files: dict[str, str], folder: Path) -> Path:
    """Write files into ``folder`` (made if missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def load_clean(folder: Path) -> Catalog:
    """The catalog in ``folder``; fails with the diagnostics unless it validates."""
    result = load_and_check(sorted(folder.glob("*.yaml")), root=folder, lint=False)
    assert result.ok, [d.format() for d in result.diagnostics]
    return result.catalog


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_repository_catalog_comes_back_from_its_export_with_every_resolved_field(
    fmt: WeaverFormat,
    repo_catalog: Catalog,
    tmp_path: Path,
    resolved_view: Callable[[Any], dict[str, Any]],
) -> None:
    files = export_registry(
        repo_catalog, version="1.0.0", base_url="https://e.com/s", description="d.", fmt=fmt
    )
    registry = load_registry(write(files, tmp_path / "registry"))
    result = import_registry(registry)
    assert [d for d in result.diagnostics if d.severity.value == "error"] == []
    back = load_clean(write(result.files, tmp_path / "catalog"))
    assert resolved_view(back) == resolved_view(repo_catalog)


@pytest.fixture(scope="module")
def semconv_import(
    semconv_registry: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Any, Any, Catalog]:
    """The reference semconv registry, its import (``--prefix rl.``) and the catalog it gives."""
    registry = load_registry(semconv_registry)
    result = import_registry(registry, prefix="rl.")
    catalog = load_clean(write(result.files, tmp_path_factory.mktemp("semconv-catalog")))
    return registry, result, catalog


def test_importing_the_semconv_files_gives_a_catalog_that_validates(
    semconv_import: tuple[Any, Any, Catalog],
) -> None:
    registry, _result, catalog = semconv_import
    assert len(registry.metrics) == 25
    assert sorted(row.name for _f, row in catalog.rows()) == sorted(
        f"rl.{metric.name}" for metric in registry.metrics
    )


@pytest.mark.parametrize(
    "said",
    [
        "attribute 'hw.network.logical_addresses' has type string[]",
        "attribute 'error.type' is an open enum",
        "attribute 'error.type' is conditionally_required (if and only if an error has occurred)",
        "open attribute(s) given max_cardinality 64",
    ],
)
def test_what_the_catalog_cannot_hold_is_reported(
    semconv_import: tuple[Any, Any, Catalog], said: str
) -> None:
    messages = [d.message for d in semconv_import[1].diagnostics]
    assert any(said in message for message in messages), messages


def _refs(metric: WeaverMetric) -> list[tuple[str, str]]:
    return [(ref.key, ref.requirement_level) for ref in metric.attributes]


def test_re_exporting_the_import_keeps_every_metrics_weaver_fields(
    semconv_import: tuple[Any, Any, Catalog], tmp_path: Path
) -> None:
    registry, _result, catalog = semconv_import
    files = export_registry(catalog, version="1.45.0", base_url="https://e.com/s", description="d.")
    again = {m.name.removeprefix("rl."): m for m in load_registry(write(files, tmp_path)).metrics}
    assert set(again) == {metric.name for metric in registry.metrics}
    for metric in registry.metrics:
        back = again[metric.name]
        assert (back.instrument, back.unit, back.stability) == (
            metric.instrument,
            metric.unit,
            metric.stability,
        )
        assert back.brief == " ".join(metric.brief.split())
        assert back.note == metric.note.strip()
        if metric.deprecated is None:
            assert back.deprecated is None
        else:
            assert back.deprecated is not None
            assert back.deprecated["reason"] == metric.deprecated["reason"]
            assert back.deprecated["renamed_to"] == f"rl.{metric.deprecated['renamed_to']}"
        # The reported losses: refs to array attributes, conditionally_required levels.
        kept = [
            (key, "recommended" if level == "conditionally_required" else level)
            for key, level in _refs(metric)
            if key != "hw.network.logical_addresses"
        ]
        assert _refs(back) == kept, metric.name
        # The metric's own annotations come back; the value type is written either way.
        generation = dict(metric.annotations.get("code_generation") or {})
        generation["metric_value_type"] = generation.get("metric_value_type", "double")
        own = {k: v for k, v in metric.annotations.items() if k != "code_generation"}
        assert {k: v for k, v in back.annotations.items() if k != ANNOTATION} == {
            "code_generation": generation,
            **own,
        }


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codegen", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )


def test_import_without_a_prefix_keeps_each_metrics_namespace(
    semconv_registry: Path, tmp_path: Path
) -> None:
    """No ``--prefix``: each file declares its metrics' namespace, names stay as spelled."""
    out = tmp_path / "out"
    proc = _cli("import", "weaver", str(semconv_registry), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    catalog = load_clean(out)
    names = {row.name: row.namespace for _f, row in catalog.rows()}
    registry = load_registry(semconv_registry)
    assert names == {m.name: m.name.split(".", 1)[0] + "." for m in registry.metrics}
    assert {f.namespace for f in catalog.files if f.rows} == {"hw.", "jvm."}


def test_re_exporting_an_import_without_a_prefix_keeps_every_metric_name(
    semconv_registry: Path, tmp_path: Path
) -> None:
    """import -> export without ``--prefix``: the same ``metric_name`` and renames, no rl."""
    registry = load_registry(semconv_registry)
    result = import_registry(registry)
    catalog = load_clean(write(result.files, tmp_path / "catalog"))
    files = export_registry(catalog, version="1.45.0", base_url="https://e.com/s", description="d.")
    again = {m.name: m for m in load_registry(write(files, tmp_path / "registry")).metrics}
    assert set(again) == {metric.name for metric in registry.metrics}
    for metric in registry.metrics:
        back = again[metric.name]
        assert (back.instrument, back.unit, back.stability) == (
            metric.instrument,
            metric.unit,
            metric.stability,
        )
        if metric.deprecated is not None:
            assert back.deprecated is not None
            assert back.deprecated["renamed_to"] == metric.deprecated["renamed_to"]


def test_import_of_a_name_in_no_namespace_says_to_pass_a_prefix(tmp_path: Path) -> None:
    """A metric named ``gpu`` has no namespace to keep: nothing is written, ``--prefix`` said."""
    registry = tmp_path / "registry"
    registry.mkdir()
    (registry / "gpu.yaml").write_text(
        "groups:\n"
        "  - id: metric.gpu\n"
        "    type: metric\n"
        "    metric_name: gpu\n"
        "    instrument: gauge\n"
        '    unit: "1"\n'
        "    stability: development\n"
        "    brief: GPU use.\n",
        encoding="utf-8",
    )
    proc = _cli("import", "weaver", str(registry), "--out", str(tmp_path / "out"))
    assert proc.returncode == 1
    assert "import again with --prefix rl." in proc.stderr
    assert not (tmp_path / "out").exists()


def test_import_overwrites_nothing_and_writes_into_an_empty_folder(
    semconv_registry: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "jvm_metrics.yaml").write_text("# mine\n", encoding="utf-8")
    args = ("import", "weaver", str(semconv_registry), "--prefix", "rl.")
    refused = _cli(*args, "--out", str(out))
    assert refused.returncode == 2
    assert "already holds jvm_metrics.yaml" in refused.stderr
    assert sorted(p.name for p in out.iterdir()) == ["jvm_metrics.yaml"]
    assert (out / "jvm_metrics.yaml").read_text(encoding="utf-8") == "# mine\n"
    fresh = _cli(*args, "--out", str(tmp_path / "fresh"))
    assert fresh.returncode == 0, fresh.stderr
    assert "rl.jvm.memory.used" in (tmp_path / "fresh" / "jvm_metrics.yaml").read_text(
        encoding="utf-8"
    )


def test_import_validates_with_the_projects_catalog_and_catches_a_clash(
    repo_catalog: Catalog, tmp_path: Path
) -> None:
    """Re-importing the repository's own export next to it: every row would be declared twice."""
    registry = write(
        export_registry(
            repo_catalog, version="1.0.0", base_url="https://e.com/s", description="d."
        ),
        tmp_path / "registry",
    )
    proc = _cli("import", "weaver", str(registry), "--out", str(tmp_path / "out"))
    assert proc.returncode == 1
    assert "rl.response.length.mean" in proc.stderr
    assert not (tmp_path / "out").exists()


TABLE_REPLACES = """\
owner: pkg.evals
module: evals
description: Evaluation outputs.
loops:
  - name: sft
    description: Supervised fine-tuning.
teed:
  - logger_key: val/samples_old
    name: rl.eval.samples.count
    kind: gauge
    unit: "{sample}"
    description: Samples shown, before the table replaced it.
    deprecated: {since: "0.2.0", replaced_by: rl.eval.samples}
  - logger_key: val/samples
    name: rl.eval.samples
    description: The evaluated samples as a table.
    value_type: table
"""


def test_a_row_replaced_by_a_row_with_no_instrument_keeps_its_replacement(
    tmp_path: Path, resolved_view: Callable[[Any], dict[str, Any]]
) -> None:
    """The replacement has no metric group, so Weaver sees obsoleted; the catalog keeps it."""
    original = load_clean(write({"evals.yaml": TABLE_REPLACES}, tmp_path / "catalog"))
    files = export_registry(original, version="1.0.0", base_url="https://e.com/s", description="d.")
    registry = load_registry(write(files, tmp_path / "registry"))
    assert check_registry(registry) == []  # no renamed_to to a metric Weaver lacks
    assert registry.metrics[0].deprecated == {"reason": "obsoleted", "note": ""}
    back = load_clean(write(import_registry(registry).files, tmp_path / "back"))
    assert resolved_view(back) == resolved_view(original)


def test_attribute_notes_and_open_string_examples_survive_the_semconv_round_trip(
    semconv_import: tuple[Any, Any, Catalog], tmp_path: Path
) -> None:
    registry, _result, catalog = semconv_import
    files = export_registry(catalog, version="1.45.0", base_url="https://e.com/s", description="d.")
    again = load_registry(write(files, tmp_path)).attributes
    pool = registry.attributes["jvm.memory.pool.name"]  # an open string with examples
    assert pool.examples
    assert again["jvm.memory.pool.name"].examples == pool.examples
    assert again["jvm.memory.pool.name"].note == pool.note.strip()


def test_a_release_candidate_metric_stays_one(tmp_path: Path) -> None:
    registry = tmp_path / "registry"
    registry.mkdir()
    (registry / "m.yaml").write_text(
        "file_format: definition/2\nmetrics:\n  - name: rl.gpu.util\n    instrument: gauge\n"
        "    unit: '1'\n    brief: GPU utilization.\n    stability: release_candidate\n",
        encoding="utf-8",
    )
    result = import_registry(load_registry(registry))
    assert result.diagnostics == []
    catalog = load_clean(write(result.files, tmp_path / "catalog"))
    assert [row.stability for _f, row in catalog.rows()] == ["release_candidate"]


JVM_CATALOG = """\
owner: myproject.telemetry.jvm
module: jvm
description: JVM memory of the rollout workers.
namespace: jvm.
recorded:
  - name: jvm.memory.used
    kind: up_down_counter
    unit: By
    description: Measure of memory used.
"""


def test_a_catalog_files_namespace_survives_export_and_import(
    tmp_path: Path, resolved_view: Callable[[Any], dict[str, Any]]
) -> None:
    """A file in ``jvm.`` comes back in ``jvm.``: same names, same keys, same view."""
    original = load_clean(write({"jvm.yaml": JVM_CATALOG}, tmp_path / "catalog"))
    files = export_registry(original, version="1.0.0", base_url="https://e.com/s", description="d.")
    registry = load_registry(write(files, tmp_path / "registry"))
    assert [m.name for m in registry.metrics] == ["jvm.memory.used"]
    back = load_clean(write(import_registry(registry).files, tmp_path / "back"))
    assert [(f.module, f.namespace) for f in back.files] == [("jvm", "jvm.")]
    assert [row.registry_key for _f, row in back.rows()] == ["memory_used"]
    assert resolved_view(back) == resolved_view(original)


def test_a_registry_file_in_two_namespaces_gives_a_catalog_file_per_namespace(
    tmp_path: Path,
) -> None:
    """A catalog file has one namespace: a registry file's second one gets its own file."""
    registry = tmp_path / "registry"
    registry.mkdir()
    group = (
        "  - id: metric.{name}\n    type: metric\n    metric_name: {name}\n"
        '    instrument: gauge\n    unit: "1"\n    stability: development\n'
        "    brief: A value.\n"
    )
    text = "groups:\n" + "".join(
        group.format(name=name) for name in ("hw.power", "jvm.cpu.count", "hw.energy")
    )
    (registry / "mixed.yaml").write_text(text, encoding="utf-8")
    result = import_registry(load_registry(registry))
    catalog = load_clean(write(result.files, tmp_path / "catalog"))
    assert {f.namespace: sorted(r.name for r in f.rows) for f in catalog.files} == {
        "hw.": ["hw.energy", "hw.power"],
        "jvm.": ["jvm.cpu.count"],
    }
