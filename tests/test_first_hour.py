"""A new user's first hour (issue 21, item 5): each rough edge found trying it, with its test."""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from pathlib import Path

import pytest
import yaml

from codegen.cli import COMMANDS, main
from metric_catalog import exporters
from metric_catalog.tee import tee_metrics
from tests.otel_fixtures import caught_warnings, clean_otel, register_samples

__all__ = ["clean_otel"]  # fixture used by name

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("doc", ["README.md", "docs/guide/adopt.md"])
def test_the_install_line_an_adopter_copies_includes_the_otel_extra(doc: str) -> None:
    text = (REPO / doc).read_text(encoding="utf-8")
    installs = re.findall(r"^pip install '(metric-catalog\[[^\]]*\])'", text, re.MULTILINE)
    assert installs, f"{doc} shows no pip install line"
    assert "otel" in installs[0], installs[0]


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
    assert re.search(rf"^## {re.escape(version)}\b", changelog, re.MULTILINE)
    assert f"rev: v{version}" in changelog
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "rev: v" in readme
    assert "CHANGELOG.md" in readme
