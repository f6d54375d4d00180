"""The ``[tool.metric-catalog]`` table: discovery, defaults, validation, flags, and its effects."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from codegen.cli import main
from codegen.config import (
    KEYS,
    Config,
    ConfigError,
    apply_overrides,
    find_pyproject,
    load_config,
    read_config,
)
from tests.adopter_project import ADOPTER_TABLE, ROW, adopter

REPO = Path(__file__).resolve().parents[2]

# --- discovery ------------------------------------------------------------------------------


def test_the_nearest_pyproject_with_the_table_is_found_walking_up(tmp_path: Path) -> None:
    adopter(tmp_path)
    deep = tmp_path / "myrl" / "telemetry"
    nested = deep / "pyproject.toml"
    nested.write_text("[project]\nname = 'inner'\n")  # no table: skipped
    assert find_pyproject(deep) == tmp_path / "pyproject.toml"
    config = load_config(start=deep)
    assert config.root == tmp_path.resolve()
    assert config.package == "myrl.telemetry.generated"


def test_without_a_table_the_defaults_apply_at_the_start_folder(tmp_path: Path) -> None:
    config = load_config(start=tmp_path)
    assert config.source is None
    assert config.root == tmp_path.resolve()
    assert config.catalog == ("catalog/*.yaml",)
    assert config.cache_dir == ".cache/metric-catalog"


def test_root_reads_that_folders_table_only(tmp_path: Path) -> None:
    adopter(tmp_path)
    assert load_config(tmp_path).package == "myrl.telemetry.generated"
    assert load_config(tmp_path / "myrl").source is None


def test_this_repo_configures_itself_with_the_same_table() -> None:
    config = load_config(REPO)
    assert config.source == REPO / "pyproject.toml"
    assert config.package == "metric_catalog.generated"
    assert config.package_dir == "src/metric_catalog/generated"
    assert [p.name for p in config.catalog_paths()] == sorted(
        p.name for p in (REPO / "catalog").glob("*.yaml")
    )


def test_package_dir_defaults_to_the_import_path(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.metric-catalog]\npackage = "a.b"\n')
    config = load_config(tmp_path)
    assert config.package_dir == "a/b"


def test_catalog_entries_may_be_files_folders_or_recursive_globs(tmp_path: Path) -> None:
    for rel in ("a/x.yaml", "b/y.yaml", "c/d/z.yaml", "c/skip.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    config = Config(root=tmp_path, catalog=("a/x.yaml", "b", "c/**/*.yaml"))
    got = [p.relative_to(tmp_path).as_posix() for p in config.catalog_paths()]
    assert got == ["a/x.yaml", "b/y.yaml", "c/d/z.yaml"]


# --- validation -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        pytest.param(
            'catalogs = ["x"]', "unknown key 'catalogs'; did you mean 'catalog'?", id="typo"
        ),
        pytest.param('package-dir = "/abs/gen"', "is absolute", id="absolute"),
        pytest.param('docs-dir = "../docs"', "leaves the project root", id="outside"),
        pytest.param("cache-dir = 3", "is not a non-empty string", id="type"),
        pytest.param('dashboards-dir = "d/*"', "is a pattern", id="pattern"),
        pytest.param("catalog = []", "not a non-empty list", id="empty-catalog"),
        pytest.param('package = "my-rl.gen"', "not a dotted Python import path", id="package"),
        pytest.param(
            'package = "a.gen"\npackage-dir = "src/b/gen"', "does not end in 'a/gen'", id="mismatch"
        ),
        pytest.param('outputs = [{template = "t.j2"}]', "exactly template and path", id="output"),
    ],
)
def test_a_bad_value_names_the_file_the_line_the_key_and_the_fix(
    tmp_path: Path, line: str, message: str
) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(f'[project]\nname = "x"\n\n[tool.metric-catalog]\n{line}\n')
    with pytest.raises(ConfigError) as caught:
        read_config(pyproject)
    text = str(caught.value)
    assert message in text
    # The key's line: 5, or 6 for the second key of the mismatch case.
    assert re.search(r"pyproject\.toml:[56]: \[tool\.metric-catalog\]", text), text
    assert "[tool.metric-catalog]" in text
    # Every message says what to write instead: an example or the known keys.
    assert "e.g." in text or "expected" in text or "the keys are" in text


def test_invalid_toml_is_a_config_error_naming_the_file(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[tool.metric-catalog]\ncatalog = [\n")
    with pytest.raises(ConfigError, match=r"pyproject\.toml: not valid TOML"):
        read_config(pyproject)


def test_the_cli_exits_2_with_the_config_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.metric-catalog]\npackge = "x"\n')
    assert main(["check", "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "unknown key 'packge'; did you mean 'package'?" in err
    assert err.startswith("error: ")


def test_every_documented_key_is_accepted(tmp_path: Path) -> None:
    values = {
        "catalog": '["cat/*.yaml"]',
        "schema-file": '"cat/schema.json"',
        "package": '"p.gen"',
        "package-dir": '"src/p/gen"',
        "docs-dir": '"d/m"',
        "dashboards-dir": '"d/dash"',
        "title": '"P metrics"',
        "cache-dir": '".cache/mc"',
        "templates-dir": '"tpl"',
        "generate-command": '"make gen"',
        "outputs": '[{template = "ts.j2", path = "web/{module}.ts"}]',
        "scan-calls": '[{call = "Tracking.log", metrics = "data"}]',
        "key-rewrite": '["_at_=@"]',
        "key-prefix-rewrite": '["transformers", "x/=y_"]',
        "baseline-values": '"ci/report.json"',
    }
    assert set(values) == set(KEYS)
    body = "\n".join(f"{k} = {v}" for k, v in values.items())
    (tmp_path / "pyproject.toml").write_text(f"[tool.metric-catalog]\n{body}\n")
    config = load_config(tmp_path)
    assert config.managed_dirs == ("src/p/gen", "d/m", "d/dash", "web")
    assert config.manifest_path == ".cache/mc/manifest.json"
    assert config.outputs[0].per_file
    assert config.key_rewrites == (("_at_", "@"),)
    assert config.key_prefix_rewrites[-1] == ("x/", "y_")
    assert config.baseline_values == "ci/report.json"


# --- flags ----------------------------------------------------------------------------------


def test_flags_override_single_keys_and_are_checked_like_the_table(tmp_path: Path) -> None:
    adopter(tmp_path)
    config = load_config(tmp_path)
    changed = apply_overrides(config, {"docs-dir": "site/metrics", "title": None})
    assert changed.docs_dir == "site/metrics"
    assert changed.package == config.package
    with pytest.raises(ConfigError, match="command line: --docs-dir"):
        apply_overrides(config, {"docs-dir": "/etc"})


# --- everything follows the configuration ---------------------------------------------------


def test_generate_writes_where_the_table_says_and_names_the_import_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = adopter(tmp_path)
    assert main(["generate", "--root", str(root)]) == 0
    module = root / "myrl" / "telemetry" / "generated" / "ppo.py"
    assert module.read_text().startswith(
        "# Code generated by metric-catalog generate from myrl/telemetry/catalog/ppo.yaml."
    )
    # The docs site's data (its pages are built from it by metric_catalog.sphinx).
    assert (root / "docs" / "metrics" / "ppo.md").is_file()
    page = (root / "docs" / "metrics" / "catalog.json").read_text()
    assert "myrl.telemetry.generated.ppo.VALUE_LOSS" in page
    assert "metric_catalog.generated" not in page
    dashboard = json.loads((root / "docs" / "dashboards" / "ppo.json").read_text())
    assert "myrl.telemetry.generated.ppo" in dashboard["tags"]
    # The manifest lives in the cache folder, outside the package.
    assert (root / ".cache" / "metric-catalog" / "manifest.json").is_file()
    assert not list((root / "myrl").rglob("manifest.json"))
    capsys.readouterr()
    assert main(["resolve", "--root", str(root), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["rows"][0]["python_constant"] == "myrl.telemetry.generated.ppo.VALUE_LOSS"
    assert doc["files"][0]["python_module"] == "myrl.telemetry.generated.ppo"


def test_diagnostics_name_paths_relative_to_the_cwd_from_a_subfolder(
    tmp_path: Path,
) -> None:
    """Issue 21: from below the root, paths open from where the command ran."""
    root = adopter(tmp_path, row=ROW.replace('unit: "1"', "unit: 1"))
    proc = subprocess.run(
        [sys.executable, "-m", "codegen", "validate"],
        cwd=root / "myrl" / "telemetry",
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
        timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stdout.startswith("catalog/ppo.yaml:9:11: error"), proc.stdout


def test_check_names_the_configured_generate_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = adopter(tmp_path, table=ADOPTER_TABLE + 'generate-command = "make telemetry"\n')
    assert main(["check", "--root", str(root)]) == 1
    assert "run `make telemetry`" in capsys.readouterr().out


def test_a_config_change_defeats_the_no_op_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = adopter(tmp_path)
    assert main(["generate", "--root", str(root)]) == 0
    assert main(["generate", "--root", str(root)]) == 0
    assert "unchanged since the last run" in capsys.readouterr().out
    table = ADOPTER_TABLE.replace('docs-dir = "docs/metrics"', 'docs-dir = "site/metrics"')
    (root / "pyproject.toml").write_text(table)
    assert main(["generate", "--root", str(root)]) == 0
    assert "unchanged since the last run" not in capsys.readouterr().out
    assert (root / "site" / "metrics" / "ppo.md").is_file()


def test_no_catalog_file_refuses_and_points_at_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = adopter(tmp_path)
    (root / "myrl" / "telemetry" / "catalog" / "ppo.yaml").unlink()
    assert main(["generate", "--root", str(root)]) == 2
    err = capsys.readouterr().err
    assert "`catalog = ['myrl/telemetry/catalog/*.yaml']` of [tool.metric-catalog] in" in err
    assert "pyproject.toml:5" in err


# --- the command line -----------------------------------------------------------------------


def test_the_editable_install_runs_this_checkouts_codegen_as_metric_catalog_codegen() -> None:
    """src/metric_catalog/codegen only points at codegen/: one source, two import names."""
    import metric_catalog.codegen.config as shipped

    assert Path(shipped.__file__).resolve() == REPO / "codegen" / "config.py"
    proc = subprocess.run(
        [sys.executable, "-m", "metric_catalog.codegen", "--help"],
        cwd=REPO / "src",
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert proc.stdout.startswith("usage: metric-catalog ")
    assert "init" in proc.stdout


def test_a_missing_codegen_extra_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib

    def without_jinja(name: str, package: str | None = None) -> object:
        raise ModuleNotFoundError("No module named 'jinja2'", name="jinja2")

    monkeypatch.setattr(importlib, "import_module", without_jinja)
    assert main(["generate"]) == 2
    assert "pip install 'metric-catalog[codegen]'" in capsys.readouterr().err


def test_diff_reads_the_configured_catalog_at_a_git_ref(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The baseline comes from the table's catalog folder, shown as REF:<its path>."""
    root = adopter(
        tmp_path,
        row=ROW.replace("    description: Value", "    stability: stable\n    description: Value"),
    )
    ident = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "v1"]):
        subprocess.run(["git", *ident, *args], cwd=root, check=True, capture_output=True)
    catalog = root / "myrl" / "telemetry" / "catalog" / "ppo.yaml"
    kept = catalog.read_text().split("teed:")[0]
    catalog.write_text(
        kept
        + 'recorded:\n  - name: rl.other\n    kind: gauge\n    unit: "1"\n    description: X.\n'
    )
    assert main(["diff", "--root", str(root), "--against", "HEAD"]) == 1
    out = capsys.readouterr().out
    assert "1 added, 1 removed" in out
    assert "HEAD:myrl/telemetry/catalog/ppo.yaml:" in out


def test_bundled_rows_meet_an_adopters_only_when_both_modules_are_imported(
    tmp_path: Path,
) -> None:
    """An adopter tees train/reward, as the bundled common module does: fine alone."""
    root = adopter(tmp_path, row=ROW.replace("logger_key: value_loss", "logger_key: reward"))
    assert main(["generate", "--root", str(root)]) == 0
    (root / "myrl" / "__init__.py").write_text("")
    (root / "myrl" / "telemetry" / "__init__.py").write_text("")
    (root / "myrl" / "telemetry" / "generated" / "__init__.py").write_text("")

    def run(code: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(REPO / "src")])}
        return subprocess.run(
            [sys.executable, "-c", code],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )

    assert run("import myrl.telemetry.generated.ppo").returncode == 0
    assert run("import metric_catalog.generated.common").returncode == 0
    both = run("import metric_catalog.generated.common, myrl.telemetry.generated.ppo")
    assert both.returncode == 1
    last = both.stderr.strip().splitlines()[-1]
    assert last.startswith("ValueError: ")
    assert "from myrl.telemetry.generated.ppo" in last
    assert "from metric_catalog.generated.common" in last
