"""A ``[tool.metric-catalog]`` string holding a control character is refused where it is read.

Issue 18 item 4: ``generate-command`` holding a newline was refused only after
rendering, blamed on a generated file (``render_python_modules rendered ...
without the generated marker``). Every string of the table reaches an output or
a terminal, so each one is refused at read time with ``pyproject.toml:LINE``,
the key, the character as an escape and the fix; nothing is written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codegen.cli import main
from codegen.config import ConfigError, apply_overrides, load_config
from tests.adopter_project import ROW as ADOPTER_ROW

ROW = ADOPTER_ROW

BASE = {
    "catalog": ["catalog/*.yaml"],
    "package": "gen",
    "package-dir": "gen",
    "docs-dir": "docs/metrics",
    "dashboards-dir": "docs/dashboards",
    "cache-dir": ".cache/mc",
    "templates-dir": "templates",
    "title": "My metrics",
    "generate-command": "make generate",
}

CHARS = ["\n", "\r", "\x0b", "\x85", "\u2028", "\u202e", "\u2067", "\x1b", "\x00"]


def table(values: dict[str, object], outputs: str = "") -> str:
    """A pyproject.toml with a [project] table first, so the keys are not on line 1."""
    lines = ['[project]\nname = "x"\n\n[tool.metric-catalog]']
    lines += [f"{key} = {json.dumps(value)}" for key, value in values.items()]
    return "\n".join(lines) + "\n" + outputs


def project(root: Path, text: str) -> Path:
    (root / "pyproject.toml").write_text(text, encoding="utf-8")
    (root / "catalog").mkdir()
    (root / "catalog" / "ppo.yaml").write_text(ROW, encoding="utf-8")
    (root / "templates").mkdir()
    return root


def line_of(text: str, key: str) -> int:
    return next(n for n, line in enumerate(text.split("\n"), 1) if line.startswith(f"{key} ="))


@pytest.mark.parametrize("char", CHARS, ids=[f"U+{ord(c):04X}" for c in CHARS])
@pytest.mark.parametrize("key", [k for k in BASE if k != "catalog"] + ["catalog"])
def test_a_control_character_in_any_string_key_is_refused_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, char: str
) -> None:
    values = dict(BASE)
    if key == "catalog":
        values[key] = [f"cata{char}log/*.yaml"]
    elif key in {"package", "package-dir"}:
        values[key] = f"ge{char}n"
    else:
        values[key] = f"{values[key]}{char}x"
    text = table(values)
    root = project(tmp_path, text)
    assert main(["generate", "--root", str(root)]) == 2
    err = capsys.readouterr().err
    assert f"pyproject.toml:{line_of(text, key)}: [tool.metric-catalog] {key}:" in err
    assert f"U+{ord(char):04X}" in err
    assert "remove it" in err
    assert char not in err.rstrip("\n")
    assert sorted(p.name for p in root.iterdir()) == ["catalog", "pyproject.toml", "templates"]


def test_the_issue_s_generate_command_with_a_newline_is_blamed_on_the_table_not_a_module(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    values = dict(BASE, **{"generate-command": "make generate\nimport os"})
    text = table(values)
    root = project(tmp_path, text)
    assert main(["generate", "--root", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert f"pyproject.toml:{line_of(text, 'generate-command')}: [tool.metric-catalog]" in err
    assert "generate-command: 'make generate\\nimport os' holds the control character '\\n'" in err
    assert "render_python_modules" not in err
    assert not (root / "gen").exists()


def test_a_multi_line_toml_string_is_refused_at_its_key_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = '[tool.metric-catalog]\ncatalog = ["catalog/*.yaml"]\ntitle = """My\nmetrics"""\n'
    root = project(tmp_path, text)
    assert main(["check", "--root", str(root)]) == 2
    assert "pyproject.toml:3: [tool.metric-catalog] title:" in capsys.readouterr().err


def test_a_raw_line_separator_in_a_string_does_not_shift_the_line_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # TOML lines end at "\n" only: U+2028 may sit raw inside a string.
    text = '[tool.metric-catalog]\ntitle = "a\u2028b"\ngenerate-command = "x\u2028y"\n'
    root = project(tmp_path, text)
    assert main(["generate", "--root", str(root)]) == 2
    assert "pyproject.toml:2: [tool.metric-catalog] title:" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("entry", "line"),
    [
        ('template = "ts/a\\r.j2"\npath = "web/{module}.ts"', 8),
        ('template = "ts/a.j2"\npath = "web/{module}\\u2028.ts"', 8),
    ],
    ids=["template", "path"],
)
def test_a_control_character_in_an_output_entry_is_refused_at_its_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], entry: str, line: int
) -> None:
    text = table(
        {"catalog": ["catalog/*.yaml"], "templates-dir": "templates"},
        f"\n[[tool.metric-catalog.outputs]]\n{entry}\n",
    )
    root = project(tmp_path, text)
    assert main(["generate", "--root", str(root)]) == 2
    err = capsys.readouterr().err
    assert f"pyproject.toml:{line}: [tool.metric-catalog] outputs:" in err
    assert "control character" in err


def test_a_flag_with_a_control_character_is_refused_naming_the_flag(tmp_path: Path) -> None:
    project(tmp_path, table({"catalog": ["catalog/*.yaml"]}))
    config = load_config(tmp_path)
    with pytest.raises(ConfigError, match=r"command line: --title title: .*'\\r' \(U\+000D\)"):
        apply_overrides(config, {"title": "My\rmetrics"})
