"""Each `[tool.metric-catalog]` key is declared once; parsing, flags, init and the guide follow."""

from __future__ import annotations

import argparse
import dataclasses
import re
import tomllib
from pathlib import Path
from typing import get_args

import pytest

from codegen.commands import add_config_arguments, config_from_args
from codegen.config import (
    CONFIG_KEYS,
    KEYS,
    Config,
    ConfigError,
    KeyKind,
    parse_table,
    table_lines,
)

REPO = Path(__file__).resolve().parents[2]
ADOPT_GUIDE = REPO / "docs" / "reference" / "configuration.md"


def _guide_rows() -> list[tuple[str, str, str]]:
    """(key, default, what it sets) of the configuration reference's key table."""
    text = ADOPT_GUIDE.read_text(encoding="utf-8")
    table = text.split("| key | default | what it sets |\n|---|---|---|\n", 1)[1]
    rows = []
    for line in table.splitlines():
        if not line.startswith("|"):
            break
        key, default, what = (cell.strip() for cell in line.strip("|").split(" | "))
        rows.append((key.strip("`"), default, what))
    return rows


def test_the_adopt_guide_lists_every_key_with_its_declared_default_and_help() -> None:
    expected = [(key.name, key.shown_default, key.help) for key in CONFIG_KEYS]
    assert _guide_rows() == expected


def test_the_adopt_guide_names_every_flag_in_declaration_order() -> None:
    text = " ".join(ADOPT_GUIDE.read_text(encoding="utf-8").split())
    sentence = text.split("Flags override single keys for one run: ", 1)[1].split("(", 1)[0]
    named = re.findall(r"`(--[a-z-]+)`", sentence)
    assert named == [f"--{key.name}" for key in CONFIG_KEYS if key.flag is not None]


def test_every_key_is_a_config_field_with_its_declared_default() -> None:
    defaults = {item.name: item.default for item in dataclasses.fields(Config)}
    for key in CONFIG_KEYS:
        assert key.attr == key.name.replace("-", "_")
        assert defaults[key.attr] == key.default
        assert getattr(Config(), key.attr) == key.default
    assert tuple(key.name for key in CONFIG_KEYS) == KEYS


def test_only_globs_and_folders_are_paths() -> None:
    assert set(get_args(KeyKind)) == {"globs", "folder", "text", "outputs", "calls", "rewrites"}
    paths = {key.name for key in CONFIG_KEYS if key.is_path}
    assert paths == {
        "catalog",
        "schema-file",
        "package-dir",
        "docs-dir",
        "dashboards-dir",
        "cache-dir",
        "templates-dir",
        "baseline-values",
    }


@pytest.mark.parametrize("key", ["title", "generate-command"])
@pytest.mark.parametrize("value", ["../up one", "/abs/olute", "a*b", "C:stuff"])
def test_a_text_key_is_read_as_text_never_as_a_path(tmp_path: Path, key: str, value: str) -> None:
    config = parse_table({key: value}, tmp_path / "pyproject.toml")
    assert getattr(config, key.replace("-", "_")) == value


@pytest.mark.parametrize("key", [key.name for key in CONFIG_KEYS if key.kind == "folder"])
def test_a_folder_key_refuses_a_path_leaving_the_root(tmp_path: Path, key: str) -> None:
    with pytest.raises(ConfigError, match=rf"\[tool.metric-catalog\] {key}: .* leaves the"):
        parse_table({key: "../elsewhere"}, tmp_path / "pyproject.toml")


def test_the_flags_are_the_declared_keys_and_override_them(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    add_config_arguments(parser)
    flags = {opt for action in parser._actions for opt in action.option_strings} - {"-h", "--help"}
    assert flags == {f"--{key.name}" for key in CONFIG_KEYS if key.flag is not None} | {"--config"}
    shown = {
        opt
        for action in parser._actions
        if action.help != argparse.SUPPRESS
        for opt in action.option_strings
    }
    assert shown == {"-h", "--help", "--catalog", "--config"}
    given = {
        "package": "p.gen",
        "package-dir": "src/p/gen",
        "docs-dir": "d/m",
        "dashboards-dir": "d/dash",
        "title": "T",
        "cache-dir": "c",
        "templates-dir": "tpl",
    }
    argv = ["--catalog", "x.yaml"]
    for name, value in given.items():
        argv += [f"--{name}", value]
    args = parser.parse_args(argv)
    args.root = tmp_path
    config = config_from_args(args)
    for name, value in given.items():
        assert getattr(config, name.replace("-", "_")) == value
    assert config.catalog == ("x.yaml",)
    assert config.catalog_flag


def test_inits_table_reads_back_to_the_values_it_was_given(tmp_path: Path) -> None:
    values: dict[str, object] = {
        "catalog": ["cat/*.yaml", "more"],
        "schema-file": "cat/schema.json",
        "package": "p.gen",
        "package-dir": "src/p/gen",
        "docs-dir": "d/m",
        "dashboards-dir": "d/dash",
        "title": 'A "quoted" \\ title',
        "cache-dir": ".cache/x",
        "templates-dir": "tpl",
        "generate-command": "make gen",
        "key-rewrite": ["_at_=@", "__=/"],
        "key-prefix-rewrite": ["transformers", "x/=y_"],
        "baseline-values": "ci/report.json",
    }
    assert set(values) == set(KEYS) - {"outputs", "scan-calls"}  # arrays of tables
    text = "[tool.metric-catalog]\n" + "\n".join(table_lines(values)) + "\n"
    table = tomllib.loads(text)["tool"]["metric-catalog"]
    config = parse_table(table, tmp_path / "pyproject.toml")
    for key in CONFIG_KEYS:
        if key.name in values:
            expected = values[key.name]
            got = getattr(config, key.attr)
            assert got == (tuple(expected) if isinstance(expected, list) else expected)
    with pytest.raises(ConfigError, match="not keys"):
        table_lines({"packge": "x"})
