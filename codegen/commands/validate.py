"""``metric-catalog validate [PATHS]``: load, schema-check and cross-check the catalog.

Reports every error of the run at once, sorted by file and position, as text
(``catalog/grpo.yaml:14:5: error[CODE]: message``, relative to the project
root) or ``--format json``. Without PATHS it reads the configured catalog. Exit
status: 0 when there are no errors (warnings allowed), 1 otherwise.
:mod:`codegen.commands.lint` shares this module's arguments and runner.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Final

from ..catalog.diagnostics import Diagnostic, Severity, format_diagnostics, has_errors
from ..catalog.pipeline import load_and_check
from ..config import NoCatalogError, no_catalog_message
from ..generate.plan import generation_diagnostics
from . import (
    add_format_argument,
    add_root_argument,
    add_warnings_as_errors_argument,
    config_from_args,
)

__all__ = ["HELP", "add_arguments", "configure", "run", "run_check"]

HELP: Final = "Load the catalog, check it against the schema and across files; exit 1 on errors."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments ``validate`` and ``lint`` share: PATHS, ``--format``, ``--root``..."""
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATHS",
        help="catalog files or directories, relative to the cwd (default: the configured catalog)",
    )
    add_format_argument(parser, "text lines for people (default) or a JSON array for machines")
    add_warnings_as_errors_argument(parser)
    # --catalog as resolve, scan and infer take it; PATHS, when given, still win.
    add_root_argument(
        parser,
        help=(
            "the folder of the pyproject.toml with [tool.metric-catalog]; paths are shown "
            "relative to it (default: the nearest one above the cwd, else the cwd)"
        ),
    )


def configure(parser: argparse.ArgumentParser) -> None:
    """Add PATHS, ``--format``, ``--root`` and ``--warnings-as-errors``."""
    add_arguments(parser)


def _holds_no_catalog(path: Path) -> bool:
    """A folder without ``*.yaml`` files (a missing file is reported by loading it)."""
    return path.is_dir() and not any(p.is_file() for p in path.glob("*.yaml"))


def run_check(args: argparse.Namespace, *, lint: bool) -> int:
    """Run the checks ``args`` ask for, print the findings, return the exit code.

    Raises:
        NoCatalogError: Neither PATHS nor the configured catalog name a catalog
            file (exit 2 on the command line), instead of "0 file(s): no problems".
    """
    config = config_from_args(args)
    paths: list[Path] = list(args.paths)
    if paths:
        # PATHS are relative to the working directory, not to the project root.
        paths = [path if path.is_absolute() else Path.cwd() / path for path in paths]
        if all(_holds_no_catalog(path) for path in paths):
            given = tuple(str(path) for path in args.paths)
            raise NoCatalogError(no_catalog_message(config, given))
    else:
        paths = config.catalog_files()
    result = load_and_check(paths, root=config.root, lint=lint)
    # The names generation would bind are checked here too: a catalog validate passes
    # never fails generate (a loop named 'loops', a module named 'wandb_metrics').
    diagnostics = sorted(
        {*result.diagnostics, *generation_diagnostics(result.catalog)}, key=Diagnostic.sort_key
    )
    if args.format == "json":
        print(format_diagnostics(diagnostics, "json"))
    elif diagnostics:
        print(format_diagnostics(diagnostics, root=config.root))
    else:
        files = len(result.catalog.files)
        rows = sum(len(f.rows) for f in result.catalog.files)
        print(f"{files} file(s), {rows} row(s): no problems found.", file=sys.stderr)
    warned = any(d.severity is Severity.WARNING for d in diagnostics)
    return 0 if not has_errors(diagnostics) and not (args.warnings_as_errors and warned) else 1


def run(args: argparse.Namespace) -> int:
    """Validate (load, schema, cross-file; no lints) and report."""
    return run_check(args, lint=False)
