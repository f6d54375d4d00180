"""``metric-catalog init``: what it writes, what it never touches, and what it prints."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codegen.cli import main
from codegen.commands.init import PyprojectError, add_table
from codegen.config import load_config

NEXT_STEPS = [
    "  metric-catalog generate   # render the modules, docs pages and dashboards",
    "  metric-catalog check      # in CI or pre-commit: generated files match the catalog",
]

# A pyproject.toml as real projects have them: comments everywhere, odd spacing, inline
# tables, arrays of tables, dotted keys, a multi-line string, a [tool.*] table before and
# after [project]. Each case below varies the line ends and the end of the file.
UGLY = """\
# Top comment   with   spaces
[build-system]
requires=["hatchling>=1.25",   "hatch-vcs"]  # trailing comment
build-backend =   'hatchling.build'

[tool.black]
line-length=100
target-version = [ 'py311' ]

[project]
name    = "Ugly-RL"   # the name, oddly spaced
version = "0.3.0"
authors = [ { name = "A. Person", email = "a@example.org" } ,]
urls.Homepage = "https://example.org"
description = '''
Multi-line
  description '''
dependencies = [
    "torch>=2.3",   # a comment inside an array

    "numpy",
]

[project.optional-dependencies]
dev = ["pytest"]

[[tool.mypy.overrides]]
module = "torch.*"
ignore_missing_imports = true
[tool.ruff.lint]
select = ["E"]    # no blank line above, on purpose
"""


def _ugly(newline: str, final_newline: bool) -> bytes:
    text = UGLY.replace("\n", newline)
    if not final_newline:
        text = text.rstrip("\r\n")
    return text.encode()


def test_init_writes_a_table_an_example_and_the_package_then_generate_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "my-rl"
    root.mkdir()
    assert main(["init", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-2:] == NEXT_STEPS
    config = load_config(root)
    assert config.package == "my_rl.telemetry.generated"
    assert config.catalog == ("my_rl/telemetry/catalog/**/*.yaml",)
    example = root / "my_rl" / "telemetry" / "catalog" / "example.yaml"
    assert example.read_text().startswith("# yaml-language-server: $schema=catalog.schema.json\n")
    assert (example.parent / "catalog.schema.json").is_file()
    assert (root / "my_rl" / "telemetry" / "generated" / "__init__.py").is_file()
    assert main(["generate", "--root", str(root)]) == 0
    assert main(["check", "--root", str(root)]) == 0
    assert main(["lint", "--root", str(root), "--warnings-as-errors"]) == 0


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
@pytest.mark.parametrize("final_newline", [True, False], ids=["final-newline", "no-final-newline"])
def test_init_adds_the_table_to_an_existing_pyproject_keeping_every_byte(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    newline: str,
    final_newline: bool,
) -> None:
    original = _ugly(newline, final_newline)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_bytes(original)
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    out = capsys.readouterr().out
    assert "added [tool.metric-catalog] to pyproject.toml" in out
    assert "add this table" not in out
    new = pyproject.read_bytes()
    assert new.startswith(original)
    added = new[len(original) :].decode()
    # The table takes the file's line ends, and starts on a line of its own.
    if newline == "\r\n":
        assert "\n" not in added.replace("\r\n", "")
    else:
        assert "\r" not in added
    assert added.startswith(newline)
    document = tomllib.loads(new.decode())
    assert document["project"]["name"] == "Ugly-RL"
    assert document["tool"]["black"] == {"line-length": 100, "target-version": ["py311"]}
    assert document["tool"]["metric-catalog"]["package"] == "ugly_rl.telemetry.generated"
    assert load_config().package == "ugly_rl.telemetry.generated"


def test_init_then_generate_then_check_pass_in_an_existing_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "rl"\nversion = "0.1.0"\n')
    (tmp_path / "rl").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-2:] == NEXT_STEPS
    assert "  cd " not in out
    assert main(["generate"]) == 0
    assert main(["check"]) == 0
    assert (tmp_path / "rl" / "telemetry" / "generated" / "example.py").is_file()


def test_init_twice_changes_nothing_and_says_the_table_is_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "rl"\n')
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert main(["init"]) == 0
    out = capsys.readouterr().out
    assert "pyproject.toml already has [tool.metric-catalog]; init leaves it as it is" in out
    assert "kept the catalog: rl/telemetry/catalog/example.yaml" in out
    assert "[tool.metric-catalog]\n" not in out  # no table to paste: no circle
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_init_in_a_subfolder_of_a_configured_project_writes_no_nested_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    table = '[project]\nname = "rl"\n\n[tool.metric-catalog]\ncatalog = ["metrics/*.yaml"]\n'
    table += 'package = "rl.generated"\n'
    (tmp_path / "pyproject.toml").write_text(table)
    sub = tmp_path / "rl" / "algorithms"
    sub.mkdir(parents=True)
    # A nested pyproject.toml without the table is not a project of its own either.
    (tmp_path / "rl" / "pyproject.toml").write_text('[project]\nname = "inner"\n')
    monkeypatch.chdir(sub)
    assert main(["init"]) == 0
    out = capsys.readouterr().out
    assert "../../pyproject.toml already has [tool.metric-catalog]" in out
    # The table's catalog matched nothing yet: init starts it where the table says.
    assert "wrote ../../metrics/example.yaml" in out
    assert (tmp_path / "metrics" / "catalog.schema.json").is_file()
    assert (tmp_path / "rl" / "generated" / "__init__.py").is_file()
    assert (tmp_path / "pyproject.toml").read_text() == table
    assert (tmp_path / "rl" / "pyproject.toml").read_text() == '[project]\nname = "inner"\n'
    assert not (sub / "pyproject.toml").exists()
    assert main(["generate"]) == 0


def test_init_in_a_subfolder_adds_the_table_to_the_nearest_pyproject(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "rl"\n')
    sub = tmp_path / "rl" / "algorithms"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    assert main(["init"]) == 0
    out = capsys.readouterr().out
    assert "added [tool.metric-catalog] to ../../pyproject.toml" in out
    assert not (sub / "pyproject.toml").exists()
    assert (tmp_path / "rl" / "telemetry" / "catalog" / "example.yaml").is_file()
    assert main(["generate"]) == 0


def test_init_keeps_and_names_existing_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "rl"\n')
    catalog = tmp_path / "rl" / "telemetry" / "catalog"
    catalog.mkdir(parents=True)
    (catalog / "catalog.schema.json").write_text("{}\n")
    package = tmp_path / "rl" / "telemetry" / "generated"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("# mine\n")
    assert main(["init", "--root", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "rl/telemetry/catalog/catalog.schema.json (exists; init never overwrites)" in out
    assert "rl/telemetry/generated/__init__.py (exists; init never overwrites)" in out
    assert (catalog / "catalog.schema.json").read_text() == "{}\n"
    assert (package / "__init__.py").read_text() == "# mine\n"
    assert (catalog / "example.yaml").is_file()


def test_init_leaves_an_existing_catalog_without_an_example(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "rl"\n')
    catalog = tmp_path / "rl" / "telemetry" / "catalog"
    catalog.mkdir(parents=True)
    (catalog / "grpo.yaml").write_text("# mine\n")
    assert main(["init", "--root", str(tmp_path)]) == 0
    assert "kept the catalog: " in capsys.readouterr().out
    assert sorted(p.name for p in catalog.iterdir()) == ["catalog.schema.json", "grpo.yaml"]
    assert (catalog / "grpo.yaml").read_text() == "# mine\n"


def test_init_dry_run_prints_a_unified_diff_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "rl"\n')
    monkeypatch.chdir(tmp_path)
    assert main(["init", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "--- a/pyproject.toml\n+++ b/pyproject.toml\n" in out
    assert '+package = "rl.telemetry.generated"' in out
    assert "--- /dev/null\n+++ b/rl/telemetry/catalog/example.yaml\n" in out
    assert "+++ b/rl/telemetry/catalog/catalog.schema.json\n" in out
    assert "--- /dev/null\n+++ b/.gitignore\n" in out
    assert out.splitlines()[-1] == "init: dry run, 5 file(s) would change; nothing written"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pyproject.toml"]
    assert (tmp_path / "pyproject.toml").read_text() == '[project]\nname = "rl"\n'


def test_init_follows_a_src_layout_and_the_flags(tmp_path: Path) -> None:
    (tmp_path / "src" / "acme").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "acme"\n')
    assert main(["init", "--root", str(tmp_path), "--docs-dir", "site/metrics"]) == 0
    config = load_config(tmp_path)
    assert config.package_dir == "src/acme/telemetry/generated"
    assert config.docs_dir == "site/metrics"


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ('[project]\nname = "rl"\nversion = \n', "3:11: not valid TOML: Unexpected character"),
        ('[project]\nname = "rl\n', "2:11: not valid TOML"),
        ("[project\n", "1:9: not valid TOML"),
        ('[project]\nname = "a"\nname = "b"\n', "3:1: not valid TOML"),
    ],
    ids=["missing-value", "open-string", "open-header", "duplicate-key"],
)
def test_init_refuses_a_pyproject_that_is_not_toml_with_its_position(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    text: str,
    position: str,
) -> None:
    (tmp_path / "pyproject.toml").write_text(text)
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: pyproject.toml:{position}"), err
    assert "nothing was written" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pyproject.toml"]
    assert (tmp_path / "pyproject.toml").read_text() == text


def test_init_refuses_an_inline_tool_table_and_shows_the_table_to_add(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = '[project]\nname = "rl"\n'
    text = f"tool = {{black = {{line-length = 100}}}}\n{text}"
    (tmp_path / "pyproject.toml").write_text(text)
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 2
    err = capsys.readouterr().err
    assert "inline table" in err
    assert 'package = "rl.telemetry.generated"' in err
    assert (tmp_path / "pyproject.toml").read_text() == text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pyproject.toml"]


def test_init_with_a_root_that_does_not_exist_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope"
    assert main(["init", "--root", str(missing)]) == 2
    assert "no such folder" in capsys.readouterr().err
    assert not missing.exists()


def test_init_from_another_folder_says_where_to_run_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "rl"
    elsewhere = tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["init", "--root", str(project)]) == 0
    assert "\n  cd ../rl\n" in capsys.readouterr().out


def test_init_with_a_bad_flag_is_a_config_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", "--root", str(tmp_path), "--package", "not-valid"]) == 2
    assert "not a dotted Python import path" in capsys.readouterr().err
    assert not (tmp_path / "pyproject.toml").exists()


_LINE = st.sampled_from(
    [
        "",
        "  ",
        "# a comment",
        "[project]",
        'name = "rl"',
        "[tool.black]",
        "line-length =   100   # spaced",
        "[[tool.mypy.overrides]]",
        "x = { a = 1, b = [1, 2] }",
        "[tool.ruff.lint]",
    ]
)


@given(lines=st.lists(_LINE, max_size=12), newline=st.sampled_from(["\n", "\r\n"]))
def test_add_table_keeps_any_valid_file_as_its_prefix(lines: list[str], newline: str) -> None:
    text = newline.join(lines)
    try:
        before = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return  # not a pyproject.toml (a repeated header or key); refused elsewhere
    table = '[tool.metric-catalog]\npackage = "rl.generated"\n'
    try:
        result = add_table(text, table, Path("pyproject.toml"))
    except PyprojectError:
        pytest.fail(f"refused a valid file: {text!r}")
    assert result.startswith(text)
    after = tomllib.loads(result)
    assert after["tool"].pop("metric-catalog") == {"package": "rl.generated"}
    if not after["tool"] and "tool" not in before:
        del after["tool"]
    assert after == before


def test_init_refuses_a_pyproject_that_is_not_utf8_with_its_position(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = b'[project]\nname = "r\xe9l"\n'
    (tmp_path / "pyproject.toml").write_bytes(data)
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: pyproject.toml:2:10: not UTF-8 (byte 0xe9)"), err
    assert (tmp_path / "pyproject.toml").read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pyproject.toml"]


def test_init_keeps_the_cache_dir_out_of_git_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The table says the cache dir stays out of git: init adds it to .gitignore, once."""
    root = tmp_path / "tinyrl"
    root.mkdir()
    (root / ".gitignore").write_text("*.pyc", encoding="utf-8")  # no final newline, kept
    assert main(["init", "--root", str(root)]) == 0
    assert (root / ".gitignore").read_text() == (
        "*.pyc\n# metric-catalog's cache (generate's no-op manifest): not source\n"
        "/.cache/metric-catalog/\n"
    )
    assert main(["init", "--root", str(root)]) == 0
    assert (root / ".gitignore").read_text().count(".cache/metric-catalog") == 1
    capsys.readouterr()


def test_init_writes_a_gitignore_where_none_is_and_leaves_one_naming_the_cache(
    tmp_path: Path,
) -> None:
    fresh, listed = tmp_path / "fresh", tmp_path / "listed"
    fresh.mkdir()
    listed.mkdir()
    (listed / ".gitignore").write_text(".cache/metric-catalog\n", encoding="utf-8")
    assert main(["init", "--root", str(fresh)]) == 0
    assert main(["init", "--root", str(listed)]) == 0
    assert "/.cache/metric-catalog/" in (fresh / ".gitignore").read_text()
    assert (listed / ".gitignore").read_text() == ".cache/metric-catalog\n"


def test_init_refuses_a_gitignore_that_links_out_of_the_project(tmp_path: Path) -> None:
    root, outside = tmp_path / "proj", tmp_path / "outside.txt"
    root.mkdir()
    outside.write_text("secret\n", encoding="utf-8")
    (root / ".gitignore").symlink_to(outside)
    assert main(["init", "--root", str(root)]) == 2
    assert outside.read_text() == "secret\n"
    assert not (root / "pyproject.toml").exists()


def test_the_initialised_catalog_glob_reads_a_drafted_subfolder(tmp_path: Path) -> None:
    """infer --out-dir <catalog>/drafted then validate: the drafted files are read."""
    root = tmp_path / "tinyrl"
    root.mkdir()
    assert main(["init", "--root", str(root)]) == 0
    drafted = root / "tinyrl" / "telemetry" / "catalog" / "drafted"
    drafted.mkdir()
    example = (drafted.parent / "example.yaml").read_text()
    (drafted / "more.yaml").write_text(
        example.replace("module: example ", "module: more    ")
        .replace("rl.example.", "rl.more.")
        .replace("logger_key: ", "logger_key: more_"),
        encoding="utf-8",
    )
    config = load_config(root)
    assert drafted / "more.yaml" in config.catalog_paths()
    assert main(["validate", "--root", str(root)]) == 0
