"""Every input goes through one door: ``codegen/safe_fs.py``.

Issue 37 build-item 1. The catalog, ``pyproject.toml`` and the files its keys name,
baseline reports, run logs, templates, the schema and source trees are all read
through :mod:`codegen.safe_fs` (a regular file only, never a FIFO or a device,
bounded, kept inside the folder named). This test walks ``codegen/`` and the
runtime (``src/metric_catalog/``) for a read that bypasses it: ``open(...)``,
``.open(...)``, ``.read_text(...)``, ``.read_bytes(...)`` and a Jinja
``FileSystemLoader`` (which opens templates itself). An ``open`` whose mode only
writes (``"w"``, ``"x"``, ``"a"``, ``os.O_WRONLY``) is an output, not an input.

What may still read on its own is listed in :data:`ALLOWED`, each with the reason.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Final

import pytest

REPO = Path(__file__).resolve().parents[2]

READ_METHODS: Final = frozenset({"open", "read_text", "read_bytes"})
"""Method names that read a file (``Path.open``, ``io.open``, ``os.open`` included)."""

ALLOWED: Final[dict[str, str]] = {
    # The door itself.
    "src/metric_catalog/_safe_fs.py::_open_regular": "the one place a file is opened to read",
    "src/metric_catalog/_safe_fs.py::opener": "its descriptor, checked with fstat before a read",
    # The package's own code, not an input: the built-in templates outside the sandbox
    # (a project's templates load through templating._ContainedLoader, through safe_fs).
    "codegen/generate/python.py::_shipped_rows_environment": "this package's own templates",
    # The Sphinx extension reads its inputs through the same door (metric_catalog._safe_fs);
    # only its own sources, hashed into its version stamp, are read directly.
    "src/metric_catalog/sphinx/_site.py::<module>": "the extension's own sources, hashed",
}
"""``path::function`` (``<module>`` at module level) -> why it reads without safe_fs."""


def _mode(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    """The mode (or ``os.open`` flags) argument of ``call``: by keyword or at ``position``."""
    given = [kw.value for kw in call.keywords if kw.arg == keyword] or call.args[position:]
    return given[0] if given else None


def _write_only(mode: ast.expr | None, *, flags: bool = False) -> bool:
    """Whether ``mode`` only writes: every literal in it holds w, x or a and no ``+``
    (``"a" if append else "w"``), or, for ``os.open`` ``flags``, it names ``O_WRONLY``."""
    if mode is None:
        return False  # the default mode reads
    nodes = list(ast.walk(mode))
    if flags:
        return any(getattr(node, "attr", getattr(node, "id", None)) == "O_WRONLY" for node in nodes)
    texts = [n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return bool(texts) and all(any(c in t for c in "wxa") and "+" not in t for t in texts)


def _reads(call: ast.Call) -> str | None:
    """How ``call`` reads a file by itself (``"open("``, ``".read_text("``...), or ``None``."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if name == "FileSystemLoader":
        return "FileSystemLoader("
    if isinstance(func, ast.Name) and name == "open":
        return None if _write_only(_mode(call, 1, "mode")) else "open("
    if isinstance(func, ast.Attribute) and name in READ_METHODS:
        if isinstance(func.value, ast.Name) and func.value.id == "os":
            write = _write_only(_mode(call, 1, "flags"), flags=True)
        else:
            write = name == "open" and _write_only(_mode(call, 0, "mode"))
        return None if write else f".{name}("
    return None


def _functions(tree: ast.Module) -> dict[ast.AST, str]:
    """Each node inside a function of ``tree`` -> the innermost function's name."""
    owner: dict[ast.AST, str] = {}
    # ast.walk goes outer to inner, so an inner function's name overwrites its outer's.
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            owner.update(dict.fromkeys(ast.walk(function), function.name))
    return owner


@functools.cache
def bypasses(root: Path = REPO) -> dict[str, list[str]]:
    """``path::function`` -> the reads in it that do not go through safe_fs (line: call)."""
    found: dict[str, list[str]] = {}
    for base in ("codegen", "src/metric_catalog"):
        for path in sorted((root / base).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            # Generated modules read nothing; the shim is codegen/ itself.
            if "/generated/" in rel or rel.startswith("src/metric_catalog/codegen/"):
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
            owner = _functions(tree)
            for node in ast.walk(tree):
                how = _reads(node) if isinstance(node, ast.Call) else None
                if how is not None:
                    where = f"{rel}::{owner.get(node, '<module>')}"
                    found.setdefault(where, []).append(f"{node.lineno}: {how}")
    return found


def test_every_read_goes_through_safe_fs() -> None:
    unexpected = {where: how for where, how in bypasses().items() if where not in ALLOWED}
    assert not unexpected, (
        f"reads that bypass codegen/safe_fs.py: {unexpected}; read through "
        "safe_fs.read_input / read_regular / open_input (a regular file, bounded, inside the "
        "folder named), or add the function to ALLOWED in this file with the reason"
    )


def test_every_allowed_exception_still_reads() -> None:
    """An entry whose read went away is removed, so the list stays what it says."""
    stale = sorted(set(ALLOWED) - set(bypasses()))
    assert not stale, f"ALLOWED lists functions that no longer read by themselves: {stale}"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("open(p)", ["open("]),
        ("open(p, 'rb')", ["open("]),
        ("open(p, 'r+')", ["open("]),
        ("open(p, 'w')", []),
        ("open(p, mode='xb')", []),
        ("path.read_text(encoding='utf-8')", [".read_text("]),
        ("path.read_bytes()", [".read_bytes("]),
        ("path.open()", [".open("]),
        ("path.open('a' if append else 'w')", []),
        ("path.open('r' if plain else 'w')", [".open("]),
        ("io.open(p)", [".open("]),
        ("os.open(p, os.O_RDONLY)", [".open("]),
        ("os.open(p, os.O_WRONLY | os.O_CREAT)", []),
        ("jinja2.FileSystemLoader(folder)", ["FileSystemLoader("]),
        ("read_regular(path)", []),
    ],
)
def test_reads_are_told_from_writes(source: str, expected: list[str], tmp_path: Path) -> None:
    (tmp_path / "codegen").mkdir()
    (tmp_path / "src" / "metric_catalog").mkdir(parents=True)
    (tmp_path / "codegen" / "m.py").write_text(f"def f():\n    {source}\n", encoding="utf-8")
    found = bypasses(tmp_path).get("codegen/m.py::f", [])
    assert [how.split(": ", 1)[1] for how in found] == expected
