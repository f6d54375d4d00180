"""``metric-catalog init``: what it writes, what it never touches, and what it prints."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.cli import main
from codegen.config import load_config


def test_init_writes_a_table_an_example_and_the_package_then_generate_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "my-rl"
    root.mkdir()
    assert main(["init", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-2:] == [
        "  metric-catalog generate   # render the modules, docs pages and dashboards",
        "  metric-catalog check      # in CI or pre-commit: generated files match the catalog",
    ]
    config = load_config(root)
    assert config.package == "my_rl.telemetry.generated"
    assert config.catalog == ("my_rl/telemetry/catalog/*.yaml",)
    example = root / "my_rl" / "telemetry" / "catalog" / "example.yaml"
    assert example.read_text().startswith("# yaml-language-server: $schema=")
    assert (root / "my_rl" / "telemetry" / "generated" / "__init__.py").is_file()
    assert main(["generate", "--root", str(root)]) == 0
    assert main(["lint", "--root", str(root), "--warnings-as-errors"]) == 0


def test_init_never_overwrites_and_prints_the_table_for_an_existing_pyproject(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "rl"\n')
    catalog = tmp_path / "rl" / "telemetry" / "catalog"
    catalog.mkdir(parents=True)
    (catalog / "example.yaml").write_text("# mine\n")
    assert main(["init", "--root", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "exists without [tool.metric-catalog]; add this table to it" in out
    assert 'catalog = ["rl/telemetry/catalog/*.yaml"]' in out
    assert "kept rl/telemetry/catalog/example.yaml (exists; init never overwrites)" in out
    assert pyproject.read_text() == '[project]\nname = "rl"\n'
    assert (catalog / "example.yaml").read_text() == "# mine\n"


def test_init_follows_a_src_layout_and_the_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "src" / "acme").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "acme"\n')
    assert main(["init", "--root", str(tmp_path), "--docs-dir", "site/metrics"]) == 0
    out = capsys.readouterr().out
    assert 'package-dir = "src/acme/telemetry/generated"' in out
    assert 'docs-dir = "site/metrics"' in out


def test_init_with_a_bad_flag_is_a_config_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", "--root", str(tmp_path), "--package", "not-valid"]) == 2
    assert "not a dotted Python import path" in capsys.readouterr().err
    assert not (tmp_path / "pyproject.toml").exists()
