"""Interfaces are promises: every flag spelling a command took before still parses, same meaning.

The table below is every option string each command accepted before the CLI was
trimmed (issue 27: one ``--config KEY=VALUE``, names that say which OTLP end,
one spelling for "warnings hidden"), written out by hand, not derived from the
parsers under test: a flag dropped from a parser fails here.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from codegen.cli import build_parsers
from codegen.commands import config_from_args
from codegen.config import Config

OLD_FLAGS: dict[str, tuple[str, ...]] = {
    "validate": ("--format", "--root", "--warnings-as-errors"),
    "lint": ("--format", "--root", "--warnings-as-errors"),
    "generate": ("--root", "--catalog", "-v", "--verbose", "--no-cache"),
    "check": ("--root", "--catalog", "--no-warnings", "--max-diff-lines"),
    "diff": ("--against", "--format", "--no-warnings", "--root", "--catalog"),
    "live-check": (
        "--fail-on",
        "--format",
        "--input-format",
        "--min-coverage",
        "--all",
        "--loop",
        "--all-owners",
        "--key-rewrite",
        "--key-prefix-rewrite",
        "--run-config",
        "--run",
        "--otlp",
        "--scrape",
        "--interval",
        "--duration",
        "--promoted",
        "--root",
        "--catalog",
    ),
    "resolve": ("--format", "--root", "--catalog"),
    "dashboards": ("--out", "--check", "--root", "--catalog"),
    "init": ("--root", "--dry-run"),
    "emit": (
        "--loop",
        "--steps",
        "--seed",
        "--jsonl",
        "--otlp",
        "--prometheus",
        "--duration",
        "--root",
        "--catalog",
    ),
    "scan": ("--format", "--warnings-as-errors", "--no-unlogged", "--root", "--catalog"),
    "infer": ("--out", "--out-dir", "--input-format", "--root", "--catalog"),
}
"""Each command's own flags before the trim (besides the per-key flags below)."""

KEY_FLAGS: dict[str, tuple[str, str]] = {
    "--schema-file": ("s/catalog.schema.json", "schema_file"),
    "--package": ("generated", "package"),
    "--package-dir": ("src/x/metric_catalog/generated", "package_dir"),
    "--docs-dir": ("d/pages", "docs_dir"),
    "--dashboards-dir": ("d/dash", "dashboards_dir"),
    "--title": ("A title", "title"),
    "--cache-dir": ("c/cache", "cache_dir"),
    "--templates-dir": ("tpl", "templates_dir"),
}
"""The per-key flags every command accepted: the value given and the Config field it sets."""

# Flag -> (argv given after it, the attribute it sets, the value it means), per command
# where the meaning differs (emit's --otlp sends to a URL, live-check's listens).
MEANING: dict[str, tuple[list[str], str, object]] = {
    "--format": (["json"], "format", "json"),
    "--root": (["some/dir"], "root", Path("some/dir")),
    "--warnings-as-errors": ([], "warnings_as_errors", True),
    "--catalog": (["a.yaml"], "catalog", [Path("a.yaml")]),
    "-v": ([], "verbose", True),
    "--verbose": ([], "verbose", True),
    "--no-cache": ([], "no_cache", True),
    "--no-warnings": ([], "no_warnings", True),
    "--max-diff-lines": (["7"], "max_diff_lines", 7),
    "--against": (["origin/main"], "against", "origin/main"),
    "--fail-on": (["missing,undeclared"], "fail_on", ["missing,undeclared"]),
    "--input-format": (["csv"], "input_format", "csv"),
    "--min-coverage": (["50%"], "min_coverage", 50.0),
    "--all": ([], "show_all", True),
    "--loop": (["grpo_sync"], "loop", "grpo_sync"),
    "--all-owners": ([], "all_owners", True),
    "--key-rewrite": (["_at_=@"], "key_rewrite", ["_at_=@"]),
    "--key-prefix-rewrite": (["transformers"], "key_prefix_rewrite", ["transformers"]),
    "--run-config": (["config.yaml"], "run_config", "config.yaml"),
    "--run": (["abc123"], "run", ["abc123"]),
    "live-check --otlp": (["127.0.0.1:4318"], "otlp", ("127.0.0.1", 4318)),
    "emit --otlp": (["http://127.0.0.1:4318"], "otlp", "http://127.0.0.1:4318/v1/metrics"),
    "--scrape": (["http://127.0.0.1:9/metrics"], "scrape", ["http://127.0.0.1:9/metrics"]),
    "--interval": (["2"], "interval", 2.0),
    "live-check --duration": (["3"], "duration", 3.0),
    "emit --duration": (["3"], "duration", 3.0),
    "--promoted": (["job,rank"], "promoted", "job,rank"),
    "dashboards --out": (["dash"], "out", Path("dash")),
    "infer --out": (["draft.yaml"], "out", Path("draft.yaml")),
    "--check": ([], "check", True),
    "--dry-run": ([], "dry_run", True),
    "--steps": (["3"], "steps", 3),
    "--seed": (["4"], "seed", 4),
    "--jsonl": (["run.jsonl"], "jsonl", Path("run.jsonl")),
    "--prometheus": (["127.0.0.1:0"], "prometheus", ("127.0.0.1", 0)),
    "--no-unlogged": ([], "no_unlogged", True),
    "--out-dir": (["drafts"], "out_dir", Path("drafts")),
}

REQUIRED: dict[str, list[str]] = {"diff": ["--against", "HEAD"], "infer": ["run.jsonl"]}
"""What a command needs besides the flag under test to parse at all."""

PARSERS = build_parsers()[1]


def _parse(command: str, argv: list[str]) -> argparse.Namespace:
    # First: --catalog takes every path after it.
    return PARSERS[command].parse_args([*REQUIRED.get(command, []), *argv])


@pytest.mark.parametrize(
    ("command", "flag"), [(command, flag) for command, flags in OLD_FLAGS.items() for flag in flags]
)
def test_every_old_flag_of_every_command_still_parses_with_its_meaning(
    command: str, flag: str
) -> None:
    given, attribute, meaning = MEANING.get(f"{command} {flag}") or MEANING[flag]
    args = _parse(command, [flag, *given])
    assert getattr(args, attribute) == meaning


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.metric-catalog]\ncatalog = ["c/*.yaml"]\n')
    return tmp_path


def _config(command: str, argv: list[str], root: Path) -> Config:
    return config_from_args(_parse(command, [*argv, "--root", str(root)]))


@pytest.mark.parametrize(
    ("command", "flag"), [(command, flag) for command in OLD_FLAGS for flag in KEY_FLAGS]
)
def test_every_old_per_key_flag_still_overrides_its_key_on_every_command(
    project: Path, command: str, flag: str
) -> None:
    value, attribute = KEY_FLAGS[flag]
    assert getattr(_config(command, [flag, value], project), attribute) == value
    # ... hidden from --help, where --config KEY=VALUE says the same.
    assert flag not in PARSERS[command].format_help()
    key = flag.removeprefix("--")
    assert _config(command, [flag, value], project) == _config(
        command, ["--config", f"{key}={value}"], project
    )


@pytest.mark.parametrize(
    ("command", "old", "new"),
    [
        ("emit", ["--otlp", "http://h:4318"], ["--otlp-endpoint", "http://h:4318"]),
        ("live-check", ["--otlp", "127.0.0.1:4318"], ["--otlp-listen", "127.0.0.1:4318"]),
        ("check", ["--no-warnings"], ["--hide-warnings"]),
        ("diff", ["--no-warnings"], ["--hide-warnings"]),
        ("dashboards", ["--dashboards-dir", "d/x"], ["--config", "dashboards-dir=d/x"]),
    ],
)
def test_an_old_spelling_means_what_its_new_name_means_and_is_hidden(
    command: str, old: list[str], new: list[str]
) -> None:
    old_args, new_args = vars(_parse(command, old)), vars(_parse(command, new))
    if old[0] == "--dashboards-dir":
        assert old_args["dashboards_dir"] == "d/x"
        assert new_args["config"] == ["dashboards-dir=d/x"]
    else:
        assert old_args == new_args
    shown = PARSERS[command].format_help()
    assert f"{old[0]} " not in shown
    assert new[0] in shown
