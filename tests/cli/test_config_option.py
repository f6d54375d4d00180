"""``--config KEY=VALUE``: one repeatable flag overrides any [tool.metric-catalog] key for a run.

It goes through the same parsing as the table (:mod:`codegen.config`), so a bad
value is refused with the key and the fix, never half-applied.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.cli import build_parsers, main
from codegen.commands import config_from_args
from codegen.config import (
    CONFIG_KEYS,
    CONFIG_OPTION,
    KEYS,
    Config,
    ConfigError,
    Output,
    apply_overrides,
    parse_config_option,
)

PARSERS = build_parsers()[1]


def _config(tmp_path: Path, *argv: str) -> object:
    (tmp_path / "pyproject.toml").write_text('[tool.metric-catalog]\ncatalog = ["c/*.yaml"]\n')
    args = PARSERS["generate"].parse_args([*argv, "--root", str(tmp_path)])
    return config_from_args(args)


@pytest.mark.parametrize(
    ("option", "field", "value"),
    [
        (
            "package-dir=src/gen/metric_catalog/generated",
            "package_dir",
            "src/gen/metric_catalog/generated",
        ),
        ('title="My metrics"', "title", "My metrics"),
        ("title=2026", "title", "2026"),  # not a string in TOML: read as the text given
        ('catalog=["a/*.yaml", "b"]', "catalog", ("a/*.yaml", "b")),
        ("catalog=one/*.yaml", "catalog", ("one/*.yaml",)),
        ("key-rewrite=_at_=@", "key_rewrite", ("_at_=@",)),
        (
            'key-prefix-rewrite=["transformers", "x/=y_"]',
            "key_prefix_rewrite",
            ("transformers", "x/=y_"),
        ),
        ("generate-command=make gen", "generate_command", "make gen"),
        (
            'outputs=[{template = "ts/c.ts.j2", path = "web/{module}.ts"}]',
            "outputs",
            (Output("ts/c.ts.j2", "web/{module}.ts"),),
        ),
    ],
)
def test_config_sets_any_key_as_the_table_would(
    tmp_path: Path, option: str, field: str, value: object
) -> None:
    assert getattr(_config(tmp_path, "--config", option), field) == value


def test_every_key_of_the_table_can_be_given_to_config() -> None:
    for key in CONFIG_KEYS:
        assert parse_config_option(f"{key.name}=x")[0] == key.name


def test_config_is_repeatable_and_wins_over_the_old_per_key_flag(tmp_path: Path) -> None:
    config = _config(
        tmp_path, "--docs-dir", "old", "--config", "docs-dir=new", "--config", "title=T"
    )
    assert (config.docs_dir, config.title) == ("new", "T")  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("option", "names"),
    [
        ("docs-dir=/abs", ["--config docs-dir", "absolute", "expected the folder"]),
        ("docs-dir=../up", ["--config docs-dir", "leaves the project root"]),
        ("pakage=x", ["--config pakage", "not a key", "did you mean 'package'"]),
        ("package", ["expected KEY=VALUE", "--config package-dir=src/gen"]),
        ("=x", ["expected KEY=VALUE"]),
        ("package=not a package", ["package", "not a dotted Python import path"]),
        ("title=a\u202eb", ["--config title", "control character"]),
        ("key-rewrite==@", ["--config key-rewrite", "entry 1"]),
    ],
)
def test_a_bad_config_item_names_the_key_and_the_fix(
    tmp_path: Path, option: str, names: list[str]
) -> None:
    with pytest.raises(ConfigError) as caught:
        _config(tmp_path, "--config", option)
    for name in names:
        assert name in str(caught.value)


def test_a_bad_config_item_exits_2_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.metric-catalog]\ncatalog = ["c/*.yaml"]\n')
    code = main(["generate", "--root", str(tmp_path), "--config", "docs-dir=/etc"])
    assert code == 2
    assert "--config docs-dir" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pyproject.toml"]


def test_init_writes_the_keys_given_by_config(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    code = main(
        [
            "init",
            "--root",
            str(tmp_path),
            "--config",
            "title=Demo metrics",
            "--config",
            "templates-dir=tpl",
        ]
    )
    assert code == 0
    text = (tmp_path / "pyproject.toml").read_text()
    assert 'title = "Demo metrics"' in text
    assert 'templates-dir = "tpl"' in text


@pytest.mark.parametrize(
    ("argv", "positional"),
    [
        (["live-check", "--catalog", "c.yaml", "run.jsonl"], "RUN"),
        (["scan", "--catalog", "c.yaml", "src"], "PATHS"),
    ],
)
def test_catalog_taking_a_run_or_source_path_is_refused_saying_why(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    positional: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "run.jsonl").write_text("")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"give {positional} before --catalog" in err
    assert "--catalog=PATH" in err


def test_infer_with_its_run_taken_by_catalog_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["infer", "--catalog", "c.yaml", "run.jsonl"])
    assert exited.value.code == 2
    assert "--catalog takes every path after it" in capsys.readouterr().err


def test_catalog_is_repeatable_one_path_each(tmp_path: Path) -> None:
    args = PARSERS["live-check"].parse_args(
        ["run.jsonl", "--catalog=a.yaml", "--catalog", "b.yaml", "c.yaml"]
    )
    assert args.log == ["run.jsonl"]
    assert args.catalog == [Path("a.yaml"), Path("b.yaml"), Path("c.yaml")]


def test_a_catalog_folder_before_the_run_is_read_as_a_catalog(tmp_path: Path) -> None:
    folder = tmp_path / "cat"
    folder.mkdir()
    (folder / "a.yaml").write_text("")
    args = PARSERS["scan"].parse_args(["src", "--catalog", str(folder), str(folder / "a.yaml")])
    assert args.paths == [Path("src")]
    assert args.catalog == [folder, folder / "a.yaml"]


def _refusal(text: str) -> str | None:
    """The ConfigError's message when ``--config text`` is refused, else None (applied)."""
    try:
        name, value = parse_config_option(text)
        config = apply_overrides(Config(root=Path("/no-root")), {name: value}, where=CONFIG_OPTION)
    except ConfigError as exc:
        return str(exc)
    assert isinstance(config, Config)
    return None


@settings(max_examples=200, deadline=None)
@given(key=st.sampled_from(KEYS), value=st.text(max_size=40))
def test_any_config_value_is_applied_or_refused_naming_the_option_and_key(
    key: str, value: str
) -> None:
    refused = _refusal(f"{key}={value}")
    assert refused is None or refused.startswith(f"{CONFIG_OPTION} ")


@given(text=st.text(max_size=40))
def test_any_config_item_is_applied_or_refused_naming_the_option(text: str) -> None:
    refused = _refusal(text)
    assert refused is None or refused.startswith(CONFIG_OPTION)
