"""``metric-catalog init``: start a catalog in a project.

Writes, never overwriting a file that exists:

* the ``[tool.metric-catalog]`` table: a new ``pyproject.toml`` holding it when
  there is none; when there is one without the table, the table is printed to
  add by hand (the file is left alone, comments and all);
* one example catalog file whose first line points editors at the installed
  JSON schema (``# yaml-language-server: $schema=...``);
* the generated package's ``__init__.py``, so the modules ``generate`` writes
  are importable and type-checkable as a regular package;

then prints the next two commands. The locations come from the existing table,
from the configuration flags (``--package``, ``--package-dir``, ...) or, by
default, from the project's name: ``<name>/telemetry/catalog/`` and the package
``<name>.telemetry.generated``.
"""

from __future__ import annotations

import argparse
import os
import re
import tomllib
from pathlib import Path, PurePosixPath
from typing import Final

from ..commands import add_config_arguments
from ..config import PYPROJECT, TABLE, parse_table, read_config, table_lines

__all__ = ["HELP", "SCHEMA_PATH", "configure", "example_catalog", "run", "table_text"]

HELP: Final = "Start a catalog here: the [tool.metric-catalog] table, an example file, next steps."

SCHEMA_PATH: Final = Path(__file__).resolve().parents[1] / "schema" / "catalog.schema.json"
"""The installed JSON schema the example file points editors at."""

_EXAMPLE_NAME: Final = "example.yaml"
_IDENTIFIER: Final = re.compile(r"[^a-z0-9_]+")


def configure(parser: argparse.ArgumentParser) -> None:
    """Add ``--root`` (where to start) and the configuration flags (the locations)."""
    parser.add_argument(
        "--root",
        type=Path,
        default=Path("."),
        help="project folder to start the catalog in (default: cwd)",
    )
    add_config_arguments(parser, catalog=False)


def _project_name(root: Path) -> str:
    """The project's import name: ``[project] name`` of its pyproject.toml, else the folder's."""
    name = root.name
    pyproject = root / PYPROJECT
    if pyproject.is_file():
        try:
            project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        except tomllib.TOMLDecodeError:
            project = {}
        if isinstance(project, dict) and isinstance(project.get("name"), str):
            name = project["name"]
    ident = _IDENTIFIER.sub("_", name.lower()).strip("_") or "project"
    return f"_{ident}" if ident[0].isdigit() else ident


def _layout(root: Path, args: argparse.Namespace) -> dict[str, str]:
    """The table's keys for a new project, from the flags or the project's name."""
    name = _project_name(root)
    package: str = args.package or f"{name}.telemetry.generated"
    base = "src/" if (root / "src" / package.split(".", 1)[0]).is_dir() else ""
    package_dir: str = args.package_dir or f"{base}{package.replace('.', '/')}"
    catalog_dir = PurePosixPath(package_dir).parent / "catalog"
    return {
        "catalog": f"{catalog_dir.as_posix()}/*.yaml",
        "package": package,
        "package-dir": package_dir,
        "docs-dir": args.docs_dir or "docs/metrics",
        "dashboards-dir": args.dashboards_dir or "docs/dashboards",
        "title": args.title or f"{name} metrics",
        "cache-dir": args.cache_dir or ".cache/metric-catalog",
    }


def table_text(keys: dict[str, str]) -> str:
    """The ``[tool.metric-catalog]`` table for ``keys``, with a comment per line."""
    lines = [
        "# metric-catalog: every path is relative to this file. Keys: metric-catalog --help,",
        "# or the guide page 'Use it in your project'.",
        f"[{TABLE}]",
        *table_lines(keys),
    ]
    return "\n".join(lines) + "\n"


def example_catalog(schema_ref: str, package: str, owner: str) -> str:
    """An example catalog file: one teed and one recorded row, passing every lint."""
    return f"""\
# yaml-language-server: $schema={schema_ref}
# An example catalog file: one per owner (the module that logs the keys).
# `metric-catalog generate` turns it into {package}.example.
owner: {owner}
module: example                     # -> {package}.example
description: Example metrics of the training loop; rename and edit me.
prefix: train                       # default log_metrics prefix of the teed rows
teed:
  - logger_key: loss                # key in the dict handed to log_metrics
    name: rl.example.loss           # OpenTelemetry series name, rl.<...>
    kind: gauge                     # gauge | counter | histogram | up_down_counter
    unit: "1"                       # UCUM: s, By, 1, {{token}}, {{token}}/s
    description: Training loss of the example loop for the step.
    stability: development          # development | alpha | beta | stable
recorded:
  - name: rl.example.step.duration
    kind: histogram
    unit: s
    description: Wall clock of one example training step.
"""


_INIT_PY: Final = '''"""Generated metric modules, one per catalog file (metric-catalog generate).

Import the module of the code that logs the keys; this package imports none of
them, so an owner that never runs declares nothing.
"""

__all__: list[str] = []
'''


def _schema_ref(catalog_dir: Path) -> str:
    """The schema as the example file's editor sees it: relative when possible."""
    try:
        return Path(os.path.relpath(SCHEMA_PATH, catalog_dir)).as_posix()
    except ValueError:  # another drive on Windows
        return SCHEMA_PATH.as_uri()


def _write_new(path: Path, text: str, root: Path) -> bool:
    shown = path.relative_to(root).as_posix()
    if path.exists():
        print(f"kept {shown} (exists; init never overwrites)")
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("x", encoding="utf-8") as handle:
        handle.write(text)
    print(f"wrote {shown}")
    return True


def run(args: argparse.Namespace) -> int:
    """Write what is missing; 0 when the project is set up (or already was).

    Raises:
        ConfigError: The existing table, or one built from bad flags, is not
            usable (the command line prints it and exits 2).
    """
    root: Path = args.root.resolve()
    pyproject = root / PYPROJECT
    existing = read_config(pyproject) if pyproject.is_file() else None
    if existing is not None:
        print(f"{PYPROJECT} already has [{TABLE}]; using it")
        keys = {
            "catalog": existing.catalog[0],
            "package": existing.package,
            "package-dir": existing.package_dir,
        }
    else:
        keys = _layout(root, args)
        table = table_text(keys)
        # The table must read back, with the same checks as every command (before any write).
        parse_table(tomllib.loads(table)["tool"]["metric-catalog"], pyproject)
        if pyproject.is_file():
            print(f"{PYPROJECT} exists without [{TABLE}]; add this table to it:\n")
            print(table)
        else:
            root.mkdir(parents=True, exist_ok=True)
            _write_new(pyproject, table, root)
    catalog_entry = keys["catalog"]
    folder = PurePosixPath(catalog_entry)
    if any(ch in catalog_entry for ch in "*?[") or catalog_entry.endswith(".yaml"):
        folder = folder.parent
    while any(ch in folder.name for ch in "*?["):
        folder = folder.parent
    catalog_dir = root / folder
    package = keys["package"]
    owner = package.split(".")[0] + ".train"
    example = example_catalog(_schema_ref(catalog_dir), package, owner)
    _write_new(catalog_dir / _EXAMPLE_NAME, example, root)
    _write_new(root / keys["package-dir"] / "__init__.py", _INIT_PY, root)
    print(
        "\nnext:\n"
        "  metric-catalog generate   # render the modules, docs pages and dashboards\n"
        "  metric-catalog check      # in CI or pre-commit: generated files match the catalog"
    )
    return 0
