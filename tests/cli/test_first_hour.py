"""A new user's first hour (issue 21, item 5): each rough edge found trying it, with its test."""

from __future__ import annotations

import importlib.metadata
import json
import re
import tomllib
from pathlib import Path

import pytest
import yaml

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.cli import COMMANDS, main
from codegen.config import Config
from metric_catalog import exporters
from metric_catalog.tee import tee_metrics
from tests.otel_fixtures import caught_warnings, clean_otel, register_samples

__all__ = ["clean_otel"]  # fixture used by name

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("doc", ["README.md", "docs/guide/adopt.md"])
def test_the_install_line_an_adopter_copies_includes_the_otel_extra(doc: str) -> None:
    text = (REPO / doc).read_text(encoding="utf-8")
    installs = re.findall(r"^pip install .*\[([^\]]*)\]", text, re.MULTILINE)
    assert installs, f"{doc} shows no pip install line with extras"
    assert all("otel" in extras.split(",") for extras in installs), installs


def test_exporting_without_the_otel_extra_warns_with_the_install_line(
    clean_otel: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_samples()
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "prometheus")
    monkeypatch.setenv("METRIC_CATALOG_PROMETHEUS_PORT", "0")
    # As in a venv without the extra: importing the exporter fails.
    monkeypatch.setitem(__import__("sys").modules, "opentelemetry.exporter.prometheus", None)
    with caught_warnings() as caught:
        tee_metrics({"loss": 1.0}, "train")
    assert exporters.get_meter_provider() is None
    (message,) = caught.messages
    assert "ModuleNotFoundError" in message
    assert message.endswith("; pip install 'metric-catalog[otel]'")


def test_the_check_hook_runs_when_any_generated_file_is_staged() -> None:
    hooks = {
        hook["id"]: hook for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    }
    pattern = re.compile(hooks["metric-catalog-check"].get("files", ""))
    for staged in (
        "catalog/grpo.yaml",
        "pyproject.toml",
        "src/metric_catalog/generated/grpo.py",
        "docs/metrics/grpo.md",
        "docs/metrics/catalog.json",
        "docs/dashboards/grpo.json",
        "web/src/metrics/ppo.ts",
        "catalog/catalog.schema.json",
    ):
        assert pattern.search(staged), staged


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_flag_prints_the_installed_version(
    flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([flag])
    assert exited.value.code == 0
    version = importlib.metadata.version("metric-catalog")
    assert capsys.readouterr().out == f"python -m codegen {version}\n"


def test_help_gives_each_command_its_one_line_description(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    monkeypatch.setenv("COLUMNS", "300")  # one line per command, as argparse wraps at the width
    with pytest.raises(SystemExit):
        main(["--help"])
    lines = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
    for name, module_name in COMMANDS.items():
        help_line = importlib.import_module(module_name, "codegen").HELP
        assert f"{name} {help_line}" in lines, name


def test_the_license_file_is_the_apache_2_text_the_package_declares() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text
    assert "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text


def test_the_changelog_has_a_section_for_the_current_version_and_says_how_tags_are_cut() -> None:
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## \[{re.escape(version)}\]", changelog, re.MULTILINE)
    assert f"rev: v{version}" in changelog
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    # No tag exists yet: the README says what to pin (a commit) and where releases are listed.
    assert "`rev:`" in readme
    assert "CHANGELOG.md" in readme


@pytest.mark.parametrize(
    ("series", "files", "expected"),
    [(1, 1, "1 series from 1 catalog file."), (3, 2, "3 series from 2 catalog files.")],
)
def test_the_index_page_counts_catalog_files_in_the_right_number(
    series: int, files: int, expected: str
) -> None:
    from metric_catalog.sphinx import index_intro

    assert expected in index_intro(series, files)


_DOCS = (
    "README.md",
    "docs/index.md",
    *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*/*.md")),
)


@pytest.mark.parametrize("doc", _DOCS)
def test_no_doc_calls_unit_1_dimensionless(doc: str) -> None:
    """``""`` is a dimensionless value (a loss), ``"1"`` a ratio: the docs say so alike."""
    text = (REPO / doc).read_text(encoding="utf-8")
    wrong = re.findall(r'"1"\s+(?:if|for a|is)\s+dimensionless|"1"\s*\(dimensionless', text)
    assert not wrong, wrong


def test_init_example_logs_its_loss_as_dimensionless() -> None:
    from codegen.commands.init import example_catalog

    example = yaml.safe_load(example_catalog("catalog.schema.json", "rl.generated", "rl.train"))
    (loss,) = example["teed"]
    assert loss["logger_key"] == "loss"
    assert loss["unit"] == ""


@pytest.fixture
def started(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A project after ``init`` and ``generate``, with a subfolder ``rl/algorithms``."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "rl"\n')
    (tmp_path / "rl" / "algorithms").mkdir(parents=True)
    assert main(["init", "--root", str(tmp_path)]) == 0
    assert main(["generate", "--root", str(tmp_path)]) == 0
    capsys.readouterr()
    return tmp_path


def test_from_a_subfolder_diagnostics_name_paths_relative_to_it(
    started: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    example = started / "rl" / "telemetry" / "catalog" / "example.yaml"
    example.write_text(example.read_text().replace("kind: gauge", "kind: gauges"))
    monkeypatch.chdir(started / "rl" / "algorithms")
    assert main(["validate"]) == 1
    out = capsys.readouterr().out
    assert re.search(r"^\.\./telemetry/catalog/example\.yaml:\d+:\d+: error\[", out, re.M), out
    # The path opens from here.
    assert (Path.cwd() / "../telemetry/catalog/example.yaml").resolve() == example.resolve()
    assert main(["validate", "--format", "json"]) == 1
    report = capsys.readouterr().out
    assert '"path": "rl/telemetry/catalog/example.yaml"' in report  # JSON stays root-relative


def test_from_a_subfolder_check_names_stale_files_relative_to_it(
    started: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    module = started / "rl" / "telemetry" / "generated" / "example.py"
    module.write_text(module.read_text() + "# edited\n")
    monkeypatch.chdir(started / "rl" / "algorithms")
    assert main(["check"]) == 1
    assert "../telemetry/generated/example.py: stale or hand-edited" in capsys.readouterr().out
    monkeypatch.chdir(started)
    assert main(["check"]) == 1
    assert "rl/telemetry/generated/example.py: stale or hand-edited" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["validate", "lint", "generate", "check", "resolve"])
@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_root_that_is_not_a_folder_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, kind: str
) -> None:
    root = tmp_path / "nope"
    if kind == "file":
        root.write_text("")
    assert main([command, "--root", str(root)]) == 2
    err = capsys.readouterr().err
    what = "does not exist" if kind == "missing" else "is not a folder"
    assert f"error: --root {root.as_posix()} {what}; pass the folder" in err


@pytest.fixture(scope="module")
def repo_catalog() -> Catalog:
    """This repository's catalog, whose attributes.yaml declares attributes and no rows."""
    result = load_and_check(Config().catalog_paths(), root=REPO)
    assert result.ok
    return result.catalog


def _attributes_page(catalog: Catalog, tmp_path: Path) -> str:
    from codegen.generate.docs import render_catalog_data
    from metric_catalog.sphinx import _data, _html

    path = tmp_path / "catalog.json"
    path.write_text(render_catalog_data(catalog), encoding="utf-8")
    return _html.owner_page_html(_data.load(path), "catalog/attributes.yaml", lambda t: t)


def test_an_attributes_only_file_gets_no_dashboard(repo_catalog: Catalog) -> None:
    from codegen.generate.dashboards import render_dashboards

    dashboards = render_dashboards(repo_catalog)
    assert "docs/dashboards/attributes.json" not in dashboards
    assert "docs/dashboards/grpo.json" in dashboards


def test_an_attributes_only_file_is_not_described_as_zero_rows_to_import(
    repo_catalog: Catalog, tmp_path: Path
) -> None:
    from codegen.generate.python import render_python_modules

    module = render_python_modules(repo_catalog, Config())[
        "src/metric_catalog/generated/attributes.py"
    ]
    page = _attributes_page(repo_catalog, tmp_path)
    for text in (module, page):
        flat = " ".join(text.split())
        assert "0 teed" not in flat
        assert "by importing" not in flat
        assert "Importing this module" not in flat
    assert "Attributes declared by nemo_rl.telemetry, and no metric rows." in module
    assert "and no series" in page
    assert "This owner declares no series." not in page


def test_the_attributes_page_shows_each_enum_as_a_table_of_values(
    repo_catalog: Catalog, tmp_path: Path
) -> None:
    import html

    page = _attributes_page(repo_catalog, tmp_path)
    category = next(
        a for f in repo_catalog.files for a in f.attributes if a.name == "rl.efficiency.category"
    )
    row = page.split('id="attr-rl-efficiency-category"', 1)[1].split('<tr id="attr-', 1)[0]
    assert row.count('<table class="mc-enum-table">') == 1
    cells = re.findall(r"<tr><td>(.*?)</td>", row.split('class="mc-enum-table"', 1)[1])
    shown = [html.unescape(re.sub(r"<[^>]+>", "", cell)) for cell in cells]
    assert shown == [str(value.value) for value in category.values]
    assert "<th>Attribute</th><th>Type</th><th>Description and values</th>" in page


def test_live_check_hints_name_the_projects_catalog_folder_and_files(
    started: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = started / "run.jsonl"
    lines = [
        {"step": 1, "prefix": "train", "loop": "nope", "metrics": {"loss": 0.5, "lr": 0.1}},
        {"step": 1, "series": "rl.example.unknown", "value": 1.0},
    ]
    run.write_text("".join(json.dumps(line) + "\n" for line in lines))
    monkeypatch.chdir(started)
    main(["live-check", "run.jsonl", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    messages = {f["kind"]: f["message"] for f in report["findings"]}
    where = "rl/telemetry/catalog/"
    assert f"add a teed row to {where} if it should be exported" in messages["undeclared"]
    assert f"declare a recorded row for it in {where}" in messages["undeclared_series"]
    assert "(rl/telemetry/catalog/example.yaml)" in messages["unknown_loop"]
    assert "catalog/common.yaml" not in " ".join(messages.values())


def test_check_summarises_a_json_output_by_row_not_by_long_lines(
    started: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    catalog_json = started / "docs" / "metrics" / "catalog.json"
    text = catalog_json.read_text()
    assert "Training loss of the example loop for the step." in text
    catalog_json.write_text(text.replace("for the step.", "for the batch."))
    monkeypatch.chdir(started)
    assert main(["check"]) == 1
    out = capsys.readouterr().out
    assert "@@ docs/metrics/catalog.json: 1 row(s) changed, 0 added, 0 removed" in out
    assert "~ name rl.example.loss: description" in out
    assert (
        '    description: "Training loss of the example loop for the batch." -> '
        '"Training loss of the example loop for the step."'
    ) in out
    assert max(len(line) for line in out.splitlines()) <= 200
