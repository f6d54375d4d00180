"""No function in ``codegen/`` or ``src/`` runs past 80 lines, with no exception.

A function is counted from its first decorator to its last line, docstring
included, as the style review measured them. Generated modules are left out:
their layout is the template's.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

import pytest

REPO = Path(__file__).resolve().parents[2]
LIMIT: Final = 80


def long_functions(root: Path = REPO, limit: int = LIMIT) -> dict[str, int]:
    """``path::name`` -> length of every function in codegen/ and src/ longer than ``limit``."""
    found: dict[str, int] = {}
    for base in ("codegen", "src"):
        for path in sorted((root / base).rglob("*.py")):
            if "generated" in path.relative_to(root).parts:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                    length = (node.end_lineno or node.lineno) - start + 1
                    if length > limit:
                        where = path.relative_to(root).as_posix()
                        found[f"{where}::{node.name}"] = length
    return found


def test_no_function_runs_past_80_lines() -> None:
    over = long_functions()
    assert not over, (
        f"functions over {LIMIT} lines: {over}; split them into pieces with one job each"
    )


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f():\n" + "    x = 1\n" * 79, {}),
        ("def f():\n" + "    x = 1\n" * 80, {"f": 81}),
        ("@decorator\ndef f():\n" + "    x = 1\n" * 79, {"f": 81}),
        ("class C:\n    def m(self):\n" + "        x = 1\n" * 80, {"m": 81}),
    ],
    ids=["exactly-80", "81-lines", "decorator-counts", "method"],
)
def test_lengths_count_from_the_first_decorator_to_the_last_line(
    source: str, expected: dict[str, int], tmp_path: Path
) -> None:
    (tmp_path / "codegen").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "codegen" / "m.py").write_text(source, encoding="utf-8")
    (tmp_path / "src" / "generated").mkdir()
    (tmp_path / "src" / "generated" / "g.py").write_text(
        "def g():\n" + "    x = 1\n" * 100, encoding="utf-8"
    )
    found = long_functions(tmp_path)
    assert {name.split("::")[1]: n for name, n in found.items()} == expected
