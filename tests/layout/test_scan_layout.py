"""``codegen/scan`` stays readable: no file over 1,000 lines, and its modules import in one
direction.

Issue 38 ("Done when"). Every ``codegen/scan/*.py`` import of another module of the
package counts, wherever it is written: at module level, under ``if TYPE_CHECKING:``, and
inside a function (an import put there only to dodge a cycle is still a cycle). The
imports must form a DAG: the shared types (:mod:`codegen.scan.model`,
:mod:`codegen.scan.state`) sit below the parts of the analysis that use them, so nothing
imports upward.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

import pytest

REPO = Path(__file__).resolve().parents[2]
SCAN = REPO / "codegen" / "scan"
PACKAGE: Final = "codegen.scan"

MAX_LINES: Final = 1_000
"""The most lines one module of ``codegen/scan`` may have."""


def _imported(tree: ast.Module, modules: set[str]) -> set[str]:
    """The modules of the package ``tree`` imports, from any place in the file."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:  # from .values import ...
                found.add(node.module.partition(".")[0])
            elif (node.level, node.module) in {(1, None), (0, PACKAGE)}:
                found.update(alias.name for alias in node.names)  # from . import values
            elif node.level == 0 and node.module and node.module.startswith(f"{PACKAGE}."):
                found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(f"{PACKAGE}."):
                    found.add(alias.name.split(".")[2])
    return found & modules


def import_graph(folder: Path) -> dict[str, set[str]]:
    """Module name -> the modules of the same package it imports (``__init__`` included)."""
    files = {path.stem: path for path in sorted(folder.glob("*.py"))}
    modules = set(files)
    return {
        name: _imported(ast.parse(path.read_text(encoding="utf-8")), modules) - {name}
        for name, path in files.items()
    }


def cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of ``graph`` as the modules along it (``[]``: the graph is a DAG)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(name: str) -> list[str]:
        state[name] = 1
        path.append(name)
        for target in sorted(graph.get(name, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        path.pop()
        state[name] = 2
        return []

    for name in sorted(graph):
        if name not in state:
            found = visit(name)
            if found:
                return found
    return []


@pytest.mark.parametrize("path", sorted(SCAN.glob("*.py")), ids=lambda path: path.name)
def test_every_scan_module_has_at_most_a_thousand_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, (
        f"{path.relative_to(REPO)}: {lines} lines (at most {MAX_LINES}); split it by concern"
    )


def test_scan_modules_import_each_other_without_a_cycle() -> None:
    found = cycle(import_graph(SCAN))
    assert not found, (
        f"codegen/scan import cycle: {' -> '.join(found)}; move the shared names into a "
        "lower module (model.py, state.py) instead of importing upward"
    )


@pytest.mark.parametrize(
    ("sources", "expected"),
    [
        pytest.param({"a": "from .b import x\n", "b": "y = 1\n"}, [], id="one-way"),
        pytest.param(
            {"a": "from .b import x\n", "b": "def f():\n    from .a import y\n"},
            ["a", "b", "a"],
            id="function-level",
        ),
        pytest.param(
            {"a": "from .b import x\n", "b": "if TYPE_CHECKING:\n    from .a import y\n"},
            ["a", "b", "a"],
            id="type-checking-only",
        ),
        pytest.param(
            {
                "a": "from . import b\n",
                "b": "from codegen.scan.c import z\n",
                "c": "import codegen.scan.a\n",
            },
            ["a", "b", "c", "a"],
            id="three-spellings",
        ),
        pytest.param({"a": "from .values import x\n", "b": "import os\n"}, [], id="outside"),
    ],
)
def test_an_import_cycle_is_found_however_it_is_written(
    tmp_path: Path, sources: dict[str, str], expected: list[str]
) -> None:
    for name, text in sources.items():
        (tmp_path / f"{name}.py").write_text(text, encoding="utf-8")
    assert cycle(import_graph(tmp_path)) == expected
