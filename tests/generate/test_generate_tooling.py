"""Generated modules pass the repository's own tooling as generated: ruff check, ruff format, mypy.

One test, because mypy is slow: it renders the fixture catalog plus a module of
randomly generated hostile descriptions into ``tmp_path``, then runs the tools
once over all of it with the repository's configuration.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from pathlib import Path

from codegen.catalog.diagnostics import Position
from codegen.catalog.model import CatalogFile, MetricRow
from codegen.catalog.pipeline import load_and_check
from codegen.generate.plan import render_all
from codegen.generate.python import render_python_module

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parents[1] / "fixtures" / "generate"
# Attributes, key families and several prefixes (MetricAttribute, Literal aliases).
ATTRIBUTE_FIXTURES = Path(__file__).parents[1] / "fixtures" / "attributes"
BIN = Path(sys.executable).parent

# Characters that stress quoting, escaping and line-width decisions.
_ALPHABET = [*"abc xyz\"\"''\\\n\t{}%#`", "é", "中", "😀", "\u200b", "\x00", "\x1b", " ", " ", " "]


def _hostile_module(rng: random.Random) -> CatalogFile:
    # Digit runs with and without leading zeros, and a one-letter constant, exercise
    # ruff's natural __all__ order (RUF022).
    names = ["rl.x", "rl.y0"] + [
        f"rl.fuzz.n{rng.choice(['', '0', '00'])}{rng.randint(0, 10 ** rng.randint(1, 4))}_{i}"
        for i in range(148)
    ]
    rows = []
    for i in range(150):
        length = rng.choice([1, 40, 80, 84, 86, 88, 90, 92, 95, 100, 160, 400])
        text = "".join(
            rng.choice(_ALPHABET) if rng.random() < 0.5 else rng.choice("abcdefgh ")
            for _ in range(length)
        )
        rows.append(
            MetricRow(
                section="teed",
                name=names[i],
                kind="gauge",
                unit="1",
                description=text,
                stability="beta",
                position=Position("catalog/fuzz.yaml", i + 1, 1),
                logger_key=f"k{i}" + "x" * rng.choice([0, 30, 60, 90]),
                prefix="train",
            )
        )
    return CatalogFile(
        path="catalog/fuzz.yaml",
        owner="tests.fuzz",
        module="fuzz",
        description="Random hostile text.",
        teed=tuple(rows),
        recorded=(),
    )


def _tool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / args[0]), *args[1:]],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=180,
    )


def test_generated_code_passes_ruff_check_ruff_format_and_mypy_strict(tmp_path: Path) -> None:
    """Fixture and random-text modules pass ruff check, ruff format --check and mypy --strict."""
    catalog_dir = tmp_path / "catalog"
    catalog_dir.mkdir()
    for source in [*FIXTURES.glob("*.yaml"), *ATTRIBUTE_FIXTURES.glob("*.yaml")]:
        shutil.copy(source, catalog_dir / source.name)
    result = load_and_check(root=tmp_path)
    assert result.ok
    out = tmp_path / "out"
    out.mkdir()
    for path, text in render_all(result.catalog).items():
        if path.endswith(".py"):
            (out / Path(path).name).write_text(text, encoding="utf-8")
    fuzz = _hostile_module(random.Random(20261202))
    (out / "fuzz.py").write_text(render_python_module(fuzz), encoding="utf-8")
    # Every fuzz description must come back exactly, through the real interpreter.
    sys_path_probe = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys; sys.path.insert(0, {str(out)!r}); import fuzz; "
            "print(repr([r.description for r in fuzz.TEED]))",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert sys_path_probe.stdout.strip() == repr([row.description for row in fuzz.teed])

    files = sorted(str(p) for p in out.glob("*.py"))
    config = str(ROOT / "pyproject.toml")
    check = _tool("ruff", "check", "--no-cache", "--config", config, *files)
    assert check.returncode == 0, check.stdout + check.stderr
    fmt = _tool("ruff", "format", "--no-cache", "--check", "--diff", "--config", config, *files)
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr
    mypy = _tool("mypy", "--strict", "--config-file", config, "--no-incremental", *files)
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr
