"""A TOML value nested thousands deep is refused with a positioned error, never a traceback.

Issue 37: ``--config`` with a value nested 5,000 deep (arrays, inline tables, arrays of
tables) raised ``RecursionError`` out of the TOML parser. Nesting is bounded before the
parser runs (by position in the text) and after it (dotted keys nest without a
bracket); the command exits 2 naming the origin, the line or column and the fix.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.cli import main
from codegen.config import MAX_TOML_DEPTH, ConfigError, table_lines, toml_too_deep_at
from tests.adopter_project import ROW

DEEP = 5000


def _project(root: Path, table: str = "") -> Path:
    (root / "pyproject.toml").write_text(f"[tool.metric-catalog]\n{table}", encoding="utf-8")
    (root / "catalog").mkdir()
    (root / "catalog" / "ppo.yaml").write_text(ROW, encoding="utf-8")
    return root


DEEP_VALUES = {
    "arrays": "[" * DEEP + "]" * DEEP,
    "inline-tables": "{a=" * DEEP + "1" + "}" * DEEP,
    "tables-in-arrays": "[{a=" * (DEEP // 2) + "1" + "}]" * (DEEP // 2),
    "dotted-keys": "{" + ".".join(["a"] * DEEP) + "=1}",
}


@pytest.mark.parametrize("value", DEEP_VALUES.values(), ids=DEEP_VALUES.keys())
@pytest.mark.parametrize("key", ["catalog", "outputs", "scan-calls", "baseline-values"])
def test_a_config_option_nested_thousands_deep_exits_2_naming_the_key(
    key: str,
    value: str,
    *,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(_project(tmp_path))
    assert main(["validate", "--config", f"{key}={value}"]) == 2
    err = capsys.readouterr().err
    assert f"command line: --config {key}:" in err
    assert f"deeper than {MAX_TOML_DEPTH} levels" in err
    assert "flatten the value" in err
    assert "Traceback" not in err


def _arrays_of_tables(levels: int) -> str:
    names = ["scan-calls"] * levels
    return "\n".join(
        "[[" + ".".join(["tool", "metric-catalog", *names[:n]]) + "]]" for n in range(1, levels + 1)
    )


TABLES = {
    "arrays": ("scan-calls = " + "[" * DEEP + "]" * DEEP + "\n", "pyproject.toml:2:78:"),
    "dotted-keys": (".".join(["scan-calls"] * DEEP) + " = 1\n", "pyproject.toml:2:"),
    "arrays-of-tables": (_arrays_of_tables(300) + "\n", "pyproject.toml:"),
}


@pytest.mark.parametrize(("table", "where"), TABLES.values(), ids=TABLES.keys())
def test_a_pyproject_nested_thousands_deep_exits_2_at_its_line(
    table: str,
    where: str,
    *,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(_project(tmp_path, table))
    assert main(["validate"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {where}")
    assert f"deeper than {MAX_TOML_DEPTH} levels" in err
    assert "Traceback" not in err


def test_a_value_nested_to_the_limit_is_read_as_usual(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """At the limit the option is parsed, and judged by its key's own rules."""
    monkeypatch.chdir(_project(tmp_path))
    value = "[" * MAX_TOML_DEPTH + "]" * MAX_TOML_DEPTH
    assert main(["validate", "--config", f"catalog={value}"]) == 2
    err = capsys.readouterr().err
    assert "is not a non-empty string" in err
    assert "deeper than" not in err


@pytest.mark.parametrize(
    "text",
    [
        'a = "' + "[" * 200 + '"',
        "a = '" + "{" * 200 + "'",
        'a = """\n' + "[" * 200 + '\n"""',
        "a = '''" + "[" * 200 + "'''",
        "# " + "[" * 200 + "\na = 1",
        'a = "\\"' + "[" * 200 + '"',
    ],
    ids=["basic", "literal", "multiline-basic", "multiline-literal", "comment", "escaped-quote"],
)
def test_brackets_inside_strings_and_comments_are_not_nesting(text: str) -> None:
    assert toml_too_deep_at(text) is None


@settings(max_examples=60, derandomize=True, deadline=None)
@given(depth=st.integers(min_value=0, max_value=3 * MAX_TOML_DEPTH), table=st.booleans())
def test_the_first_level_past_the_limit_is_where_it_is_refused(depth: int, table: bool) -> None:
    """Refused exactly when deeper than the limit, at the opening bracket past it."""
    opening, closing = ("{a=", "}") if table else ("[", "]")
    text = "value = " + opening * depth + "1" + closing * depth
    found = toml_too_deep_at(text)
    if depth <= MAX_TOML_DEPTH:
        assert found is None
    else:
        assert found == len("value = ") + MAX_TOML_DEPTH * len(opening)


def test_a_nested_list_handed_to_table_lines_is_refused_not_walked() -> None:
    """``init`` writes a key's value; a nested list is refused, never recursed into."""
    value: list[object] = []
    inner = value
    for _ in range(DEEP):
        inner.append([])
        inner = inner[0]  # type: ignore[assignment]
    with pytest.raises(ConfigError, match="never nested lists"):
        table_lines({"catalog": value})


def test_a_list_of_strings_handed_to_table_lines_is_one_toml_array() -> None:
    (line,) = table_lines({"catalog": ["a/*.yaml", "b"]})
    assert line.startswith('catalog = ["a/*.yaml", "b"]')
